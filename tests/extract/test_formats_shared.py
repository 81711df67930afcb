"""The office, mail, e-book and text formats on Unstructured's example documents (../shared/data/unstructured,
present in CI; ``CHUNKWISE_SHARED_DATA`` names another shared/data folder): every file is either read
or reported with a one-line reason, legacy formats are skipped by type with a hint, and the one text
saved in many formats (language-docs/eng_spa_mult.*) keeps >= 0.95 of its words in each format read."""
from __future__ import annotations

import os
import re
from collections import Counter
from pathlib import Path

import pytest

from chunkwise.pipeline.documents import SourceFailure, read_source
from chunkwise.sources import SourceError, iter_sources

ROOT = Path(__file__).resolve().parents[2]
DATA = Path(os.environ.get("CHUNKWISE_SHARED_DATA", ROOT.parent / "shared" / "data")) / "unstructured"
if not DATA.is_dir():
    pytest.skip(f"{DATA} is absent", allow_module_level=True)

FORMATS = (".pptx", ".xlsx", ".csv", ".tsv", ".eml", ".msg", ".epub", ".rtf", ".odt", ".rst", ".org", ".txt",
           ".doc", ".ppt", ".xls")
_WORD = re.compile(r"[^\W_]+")


@pytest.fixture(scope="module")
def results():
    out = {}
    for src in iter_sources([DATA], root=DATA):
        if Path(src.doc_id).suffix.lower() not in FORMATS and "/eng_spa_mult." not in src.doc_id:
            continue
        out[src.doc_id] = src if isinstance(src, SourceError) else read_source(src)
    return out


def test_every_file_read_or_reported(results):
    assert len(results) > 100
    for doc_id, res in results.items():
        if isinstance(res, (SourceError, SourceFailure)):
            assert res.error.startswith(doc_id) and "\n" not in res.error, res.error
            continue
        assert res.text.strip() or res.warnings, doc_id
    read = {Path(d).suffix for d, r in results.items() if not isinstance(r, (SourceError, SourceFailure))}
    assert {".pptx", ".xlsx", ".csv", ".tsv", ".eml", ".msg", ".epub", ".rtf", ".odt", ".rst", ".org"} <= read


def test_legacy_formats_skipped_with_hint(results):
    legacy = {d: r for d, r in results.items() if Path(d).suffix in (".doc", ".ppt", ".xls")}
    assert legacy and all(isinstance(r, SourceError) and r.skipped and "save it as" in r.error for r in legacy.values())


# the formats of eng_spa_mult.* that chunkwise reads; .doc and .ppt are skipped with a hint, .xml by type
ONE_TEXT_READ = {".docx", ".eml", ".epub", ".html", ".md", ".odt", ".org", ".pptx", ".rst", ".rtf", ".txt"}


def test_one_text_in_many_formats(results):
    ref = results["example-docs/language-docs/eng_spa_mult.txt"]
    want = Counter(_WORD.findall(ref.text.casefold()))
    read = set()
    for doc_id, res in results.items():
        if "eng_spa_mult." not in doc_id or isinstance(res, (SourceError, SourceFailure)):
            continue
        read.add(Path(doc_id).suffix)
        have = Counter(_WORD.findall(res.text.casefold()))
        recall = sum(min(n, have[w]) for w, n in want.items()) / sum(want.values())
        assert recall >= 0.95, (doc_id, recall)
    assert read == ONE_TEXT_READ  # a format that stops being read fails here, not silently


def test_mail_metadata_and_slides(results):
    eml = results["example-docs/fake-email.eml"]
    assert eml.metadata["subject"] == "Test Email" and "mrobinson@unstructured.io" in eml.metadata["from"]
    msg = results["example-docs/fake-email-attachment.msg"]
    assert msg.metadata["attachments"][0]["read"] and "fake attachment" in msg.text
    deck = results["example-docs/fake-power-point-table.pptx"]
    assert any(b.kind == "table" for b in deck.blocks) and deck.pages
