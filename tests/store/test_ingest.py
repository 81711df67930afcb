"""Idempotent ingestion into SQLite and PostgreSQL (``db_location``: once per backend), on the seed-001 router guide (steps 1-4 and 7 of block 7)."""
import os
from dataclasses import dataclass

from chunkwise.config import ChunkConfig
from chunkwise.pipeline import ingest
from backends import acl_rows, chunk_ids, consistent, count, is_pg, query

GUIDE = """# Router X200 Guide

## Setup

### Resetting
Hold the reset button for 10 seconds until the light blinks. This restores the factory settings.

### Firmware updates
Open the settings menu and choose update. The download is 40 megabytes.

## Support

### Warranty
The warranty lasts 24 months from the date of purchase.
"""
CONFIG = ChunkConfig(strategy="structure", size=128, header="path")


@dataclass
class FakeEmbedder:
    """Counts calls; vectors are a deterministic function of the text."""

    name: str = "fake@1"
    calls: int = 0

    def embed(self, texts):
        self.calls += len(texts)
        return [[float(len(t)), float(sum(map(ord, t)) % 97)] for t in texts]


def run(root, db, embedder, **kw):
    s = ingest([root], db, kw.pop("config", CONFIG), embedder=embedder, acl=("public",), **kw)
    assert not s.errors, s.errors
    return s


def row(s):
    return (s.added, s.removed, s.embedded, s.metadata_updated, s.in_store)


SEED_TABLE = [  # seed 001 block 7: added, removed, embedded, metadata updated, in store
    ("first ingest", (3, 0, 3, 0, 3)),
    ("run it again, nothing changed", (0, 0, 0, 0, 3)),
    ("edit one sentence (24 -> 36 months)", (1, 1, 1, 0, 3)),
    ("insert a new section before Support", (1, 0, 1, 1, 4)),
    ("rename a heading, text unchanged", (0, 0, 1, 4, 4)),
    ("upgrade the embedding model", (0, 0, 4, 4, 4)),
    ("the source document is deleted", (0, 4, 0, 0, 0)),
]


def test_seven_steps_of_seed_001(tmp_path, db_location):
    root = tmp_path / "kb"
    root.mkdir()
    doc = root / "router-x200.md"
    db = db_location
    emb = FakeEmbedder()
    text = GUIDE
    edits = [
        lambda t: t,
        lambda t: t,
        lambda t: t.replace("24 months", "36 months"),
        lambda t: t.replace("## Support", "## Safety\nKeep the router away from water.\n\n## Support"),
        lambda t: t.replace("### Resetting", "### Factory reset"),
        lambda t: t,
        None,
    ]
    ids_before_insert = None
    for (label, expected), edit in zip(SEED_TABLE, edits):
        if edit is None:
            doc.unlink()
        else:
            text = edit(text)
            doc.write_text(text, encoding="utf-8")
        if label.startswith("upgrade"):
            emb = FakeEmbedder(name="fake@2")
        if label.startswith("insert"):
            ids_before_insert = chunk_ids(db)
        # a new embedding model is a reconfiguration the store refuses unless asked for (issue 10 item 9)
        got = row(run(root, db, emb, reconfigure=label.startswith("upgrade")))
        assert got == expected, (label, got)
        if label.startswith("insert"):  # exercise 2: the other sections keep their ids
            assert ids_before_insert <= chunk_ids(db)
        consistent(db)
    assert count(db, "vectors") == 0 and count(db, "chunks") == 0
    assert consistent(db) == set()


def test_same_text_in_two_documents_and_twice_in_one(tmp_path):
    from chunkwise import api
    from chunkwise.enrich import build_records

    def records(doc_id, text):
        doc = api.Document(doc_id, doc_id, "text/markdown", text)
        chunks = api.chunk_document(doc, strategy="structure", size=128, header="path")
        return build_records(doc, chunks, chunker="c", header_mode="path", embed_model="m@1", acl=["p"], now="t")

    a, b = records("kb/x200", GUIDE)[2], records("kb/x300", GUIDE)[2]
    assert a.content_hash == b.content_hash and a.chunk_id != b.chunk_id
    twice = records("kb/faq", "# FAQ\n## A\nSee the manual.\n## B\nSee the manual.\n")
    assert twice[0].content_hash == twice[1].content_hash and twice[0].chunk_id != twice[1].chunk_id


def test_ids_do_not_depend_on_hash_seed(tmp_path):
    import subprocess
    import sys

    code = ("from chunkwise import ids; print(ids.chunk_id('kb/x', ids.hash_text('Hold the reset button.'), 0),"
            " ids.embed_key('m@1', 'Setup > Resetting\\nHold the reset button.'))")
    outs = {subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                           env={"PYTHONHASHSEED": seed, "PATH": "/usr/bin"}).stdout for seed in ("0", "1", "12345")}
    assert len(outs) == 1


def test_dry_run_writes_nothing(tmp_path, db_location):
    root = tmp_path / "kb"
    root.mkdir()
    (root / "a.md").write_text(GUIDE, encoding="utf-8")
    s = ingest([root], db_location, CONFIG, dry_run=True, acl=("public",))
    assert s.added > 0 and s.in_store == 0
    if is_pg(db_location):  # a server database exists
        assert query(db_location, "SELECT count(*) FROM chunks")[0][0] == 0
    else:  # "without writing": not even a new store's file (a later real run could be mistaken for a re-run)
        assert not os.path.exists(db_location) and os.listdir(tmp_path) == ["kb"]
    assert ingest([root], db_location, CONFIG, acl=("public",)).added == s.added  # what the dry run said


def test_acl_change_retags_without_reembedding(tmp_path, db_location):
    root = tmp_path / "kb"
    root.mkdir()
    (root / "a.md").write_text(GUIDE, encoding="utf-8")
    db, emb = db_location, FakeEmbedder()
    run(root, db, emb)
    calls = emb.calls
    s = ingest([root], db, CONFIG, embedder=emb, acl=("staff",))
    assert s.embedded == 0 and emb.calls == calls and s.metadata_updated == s.in_store
    assert {tags.tags for tags, _ in acl_rows(db).values()} == {("staff",)}
    consistent(db)


def test_chunks_without_acl_are_marked_review(tmp_path, db_location):
    root = tmp_path / "kb"
    root.mkdir()
    (root / "a.md").write_text(GUIDE, encoding="utf-8")
    ingest([root], db_location, CONFIG)
    assert {q for _, q in acl_rows(db_location).values()} == {"review"}


def test_chunks_too_long_for_the_model_fail_before_any_work(tmp_path):
    import pytest

    from chunkwise.errors import ConfigError

    class Small(FakeEmbedder):
        max_tokens = 256

    with pytest.raises(ConfigError, match="--size 254"):
        ingest([tmp_path], tmp_path / "i.db", ChunkConfig(size=256), embedder=Small())
    assert not (tmp_path / "i.db").exists()


SECTIONED = """# Payments handbook

General rules everyone may read. Deploys happen on weekdays only.

## Settlement exports
<!-- acl: finance -->

Settlement exports are kept for 30 days. Exception: audits may keep them for seven years.

### Export format
Exports are CSV files with one row per payout.

## Paging
Page on-call within 15 minutes with the deploy ID.
"""


def test_section_acl_markers_never_cross(tmp_path, new_location):
    import json as _json

    root = tmp_path / "kb"
    root.mkdir()
    (root / "handbook.md").write_text(SECTIONED, encoding="utf-8")
    for strategy in ("auto", "recursive", "fixed"):
        db = new_location()
        ingest([root], db, ChunkConfig(strategy=strategy, size=512), acl=("staff",))
        rows = [{**_json.loads(r), "text": t} for r, t in
                query(db, "SELECT record, text FROM chunks ORDER BY chunk_index")]
        by_tag = {}
        for r in rows:
            by_tag.setdefault(tuple(r["acl"]), []).append(r["text"])
        finance = " ".join(by_tag[("finance",)])
        staff = " ".join(by_tag[("staff",)])
        assert "seven years" in finance and "one row per payout" in finance, strategy
        assert "seven years" not in staff and "weekdays" in staff and "15 minutes" in staff, strategy
        assert "weekdays" not in finance and "15 minutes" not in finance, strategy


def test_acl_map_first_match_wins(tmp_path, db_location):
    import json as _json

    root = tmp_path / "kb"
    (root / "finance").mkdir(parents=True)
    (root / "finance" / "a.md").write_text("# A\n\nLedger rules.\n", encoding="utf-8")
    (root / "b.md").write_text("# B\n\nPublic rules.\n", encoding="utf-8")
    db = db_location
    ingest([root], db, CONFIG, acl=("staff",), acl_map={"finance/*": ["finance"], "*": ["everyone"]})
    tags = {d: _json.loads(r)["acl"] for d, r in query(db, "SELECT doc_id, record FROM chunks")}
    assert tags == {"finance/a.md": ["finance"], "b.md": ["everyone"]}
