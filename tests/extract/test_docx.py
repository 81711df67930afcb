"""DOCX extraction: heading styles, lists, tables in document order, metadata, corrupt files."""
import hashlib
import io
import sys
import zipfile

import pytest

pytest.importorskip("docx")

from fixtures import KNOWN_DOCX, assert_spans, block_with, write_report_docx  # noqa: E402

from chunkwise.errors import DependencyError, InputError  # noqa: E402
from chunkwise.extract import docx  # noqa: E402


@pytest.fixture
def report(tmp_path):
    return write_report_docx(tmp_path / "sales review.docx")


def test_known_sentence_under_its_heading(report):
    data = report.read_bytes()
    doc = docx.extract(data, "sales review.docx")
    assert doc.text.count(KNOWN_DOCX) == 1
    block, heading = block_with(doc, KNOWN_DOCX)
    assert block.kind == "paragraph" and (heading.text, heading.level) == ("Regional Results", 2)
    assert doc.media_type.endswith("wordprocessingml.document")
    assert doc.sha256 == hashlib.sha256(data).hexdigest() and doc.doc_id == "sales review.docx"
    assert_spans(doc)


def test_heading_styles_become_levels(report):
    doc = docx.extract(report.read_bytes(), "r.docx")
    heads = [(b.text, b.level) for b in doc.blocks if b.kind == "heading"]
    assert heads == [("Sales Review", 1), ("Overview", 1), ("Regional Results", 2), ("Details", 3)]


def test_list_items_with_nesting(report):
    doc = docx.extract(report.read_bytes(), "r.docx")
    items = [(doc.text[b.start : b.end], b.level) for b in doc.blocks if b.kind == "list_item"]
    assert items == [("First bullet", 1), ("Nested bullet", 2), ("1. Numbered step", 1)]


def test_table_in_document_order_with_header(report):
    doc = docx.extract(report.read_bytes(), "r.docx")
    kinds = [b.kind for b in doc.blocks]
    table = doc.blocks[kinds.index("table")]
    assert table.meta["header"] == ["Region", "Revenue", "Growth"]
    assert [doc.text[s:e] for s, e in table.meta["rows"]] == ["| North | 1.2M | 11% |", "| South | 0.9M | 0% |"]
    assert doc.text[table.start : table.end].startswith("| Region | Revenue | Growth |\n| --- | --- | --- |\n")
    before, after = doc.blocks[kinds.index("table") - 1], doc.blocks[kinds.index("table") + 1]
    assert doc.text[before.start : before.end] == "1. Numbered step"
    assert doc.text[after.start : after.end] == "Text after the table closes the report."
    assert_spans(doc)


def test_tracked_insertions_kept_deletions_dropped(report):
    doc = docx.extract(report.read_bytes(), "r.docx")
    last = doc.blocks[-1]
    assert doc.text[last.start : last.end] == "Kept inserted words" and "deleted words" not in doc.text


def test_metadata(report):
    meta = docx.extract(report.read_bytes(), "r.docx").metadata
    assert meta["title"] == "Sales Review" and meta["author"] == "Grace Example"
    assert meta["updated_at"][:4].isdigit() and "T" in meta["updated_at"]


def _zip_without_document() -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("readme.txt", "not a word document")
    return buf.getvalue()


@pytest.mark.parametrize("kind", ["not_zip", "truncated", "zip_without_document", "empty"])
def test_corrupt_docx_is_a_clear_error(report, kind):
    data = report.read_bytes()
    bad = {"not_zip": b"PK\x03\x04 but not really a zip" * 10, "truncated": data[: len(data) // 2],
           "zip_without_document": _zip_without_document(), "empty": b""}[kind]
    with pytest.raises(InputError, match=r"bad\.docx: not a readable DOCX .*corrupt"):
        docx.extract(bad, "bad.docx")


def test_missing_lxml_says_how_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "lxml", None)
    with pytest.raises(DependencyError, match=r"chunkwise\[docx\]"):
        docx.extract(b"", "x.docx")
