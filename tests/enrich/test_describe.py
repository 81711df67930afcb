"""Header mode ``context``: the document's description in every chunk's embedded text, never in the
chunks of a reader who may not read where it came from."""
import sqlite3

import pytest

from chunkwise.cli.main import main
from chunkwise.config import ChunkConfig
from chunkwise.enrich.describe import MAX_CHARS, describe, one_line
from chunkwise.types import Document


def doc(text, media_type="text/markdown", **meta):
    return Document(doc_id="d", source="d.md", text=text, media_type=media_type, metadata=meta)


def test_front_matter_description_wins_over_the_first_paragraph():
    d = describe(doc("# T\n\nFirst paragraph.\n", description="  The pump manual,\n for operators. "))
    assert d.text == "The pump manual, for operators." and d.start == -1


def test_first_paragraph_skips_headings_markers_fences_and_lists():
    text = "# Title\n<!-- acl: staff -->\n\n```\ncode line\n```\n- a list item\n\nThe real\nprose line.\n\nNext.\n"
    d = describe(doc(text))
    assert d.text == "The real prose line."
    assert text[d.start:d.end].split() == ["The", "real", "prose", "line."]


def test_code_docstring_and_leading_comment():
    py = doc('#!/usr/bin/env python\n"""Parse invoices.\n\nMore words."""\nimport os\n', "text/x-code")
    assert describe(py).text == "Parse invoices. More words."
    go = doc("// Package billing computes invoices.\n// It is safe for concurrent use.\npackage billing\n", "text/x-code")
    assert describe(go).text == "Package billing computes invoices. It is safe for concurrent use."
    lic = doc("// Copyright 2024 ACME. All rights reserved.\npackage x\n", "text/x-code")
    assert describe(lic) is None


def test_one_line_cuts_at_a_sentence_or_word_within_the_limit():
    first = "A first sentence that is long enough to stand as the description of a whole document."
    assert one_line(first + " " + "word " * 100) == first
    assert one_line("Tiny. " + "word " * 100).startswith("Tiny. word word")  # too short to stand alone
    words = one_line("alpha " * 100)
    assert len(words) <= MAX_CHARS + 2 and words.endswith("…") and "alph …" not in words
    assert describe(doc("# Only a heading\n")) is None


def test_context_is_a_header_mode_and_unset_description_keeps_fingerprints():
    assert ChunkConfig(header="context").fingerprint() != ChunkConfig(header="full").fingerprint()
    assert ChunkConfig().fingerprint() == ChunkConfig(description="").fingerprint()
    assert ChunkConfig(description="x").fingerprint() != ChunkConfig().fingerprint()


HANDBOOK = """---
title: Pump manual
acl: staff
---
# Pump manual

The P-200 pump moves coolant through the primary loop.

## Start-up

Press the red button twice.

## Costs
<!-- acl: finance -->

Each pump costs 40,000 euros.
"""

SECRET_FIRST = """---
acl: staff
---
# Board notes
<!-- acl: board -->

The merger with Initech closes in May.

# Canteen

Lunch is served at noon.
"""


def stored(tmp_path, name, text):
    src = tmp_path / "docs"
    src.mkdir(exist_ok=True)
    (src / name).write_text(text)
    db = tmp_path / f"{name}.db"
    assert main(["ingest", str(src / name), "--db", str(db), "--header", "context", "--embedder", "hashing"]) == 0
    with sqlite3.connect(db) as c:
        return [(tuple(__import__("json").loads(a)), e) for a, e in c.execute("select acl, embed_text from chunks")]


def test_description_reaches_chunks_whose_readers_may_read_it(tmp_path):
    rows = stored(tmp_path, "pump.md", HANDBOOK)
    staff = [e for a, e in rows if a == ("staff",)]
    finance = [e for a, e in rows if a == ("finance",)]
    assert staff and finance
    assert all("About: The P-200 pump moves coolant" in e for e in staff)
    assert not any("P-200" in e or "About:" in e for e in finance)


def test_a_restricted_first_paragraph_never_describes_wider_chunks(tmp_path):
    rows = stored(tmp_path, "notes.md", SECRET_FIRST)
    canteen = [e for a, e in rows if "Lunch" in e]
    assert canteen and all("Initech" not in e and "About:" not in e for e in canteen)
    board = [e for a, e in rows if "Initech closes" in e]
    assert board and all(a == ("board",) for a, e in rows if "Initech closes" in e)


@pytest.mark.parametrize("size", [24, 40])
def test_a_long_description_gives_way_before_the_cap_breaks(size):
    from chunkwise.api import chunk_text

    chunks = chunk_text("# T\n\n" + "word " * 200, size=size, header="context", title="Doc",
                        description="describes " * 60)
    assert chunks and all(c.size <= size for c in chunks)
