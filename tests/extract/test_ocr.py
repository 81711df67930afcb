"""OCR of scanned PDF pages: known words recovered with offsets, confidence per page, a review gate
for low confidence, audit reporting, and never OCR over a real text layer. Real Tesseract."""
import pytest

pytest.importorskip("pypdf")
pytest.importorskip("fpdf")
pytest.importorskip("PIL")
pytest.importorskip("pytesseract")
pytest.importorskip("pypdfium2")

from fixtures import assert_spans  # noqa: E402
from pdf_fixtures import SCAN_WORDS, write_scan_pdf  # noqa: E402

from chunkwise.extract import ocr, pdf  # noqa: E402
from chunkwise.extract.audit import audit_document  # noqa: E402

if ocr.missing():
    pytest.skip(f"OCR not available: {ocr.missing()}", allow_module_level=True)


def _extract(path, **kw):
    return pdf.extract(path.read_bytes(), path.name, **kw)


def test_scanned_page_words_recovered_with_offsets_and_confidence(tmp_path):
    doc = _extract(write_scan_pdf(tmp_path / "scan.pdf"))
    (page,) = doc.pages
    body = doc.text[page.start : page.end]
    found = [w for w in SCAN_WORDS if w in body.lower().split()]
    assert len(found) >= 9, body  # Tesseract reads rendered DejaVu text near-perfectly
    assert "Page 1 of the survey" in body
    assert not page.needs_ocr and page.ocr_confidence is not None and page.ocr_confidence >= 80
    assert page.review_reason == ""
    blocks = [b for b in doc.blocks if b.kind == "paragraph"]
    assert blocks and all(b.meta["page"] == 1 and b.meta["ocr"] for b in blocks)
    assert not any("needs OCR" in w for w in doc.warnings)
    assert_spans(doc)


def test_a_page_with_a_text_layer_is_never_ocrd(tmp_path, monkeypatch):
    seen = []
    real = ocr.ocr_pages

    def spy(data, indices, warnings, **kw):
        seen.append(list(indices))
        return real(data, indices, warnings, **kw)

    monkeypatch.setattr(pdf, "ocr_pages", spy)
    doc = _extract(write_scan_pdf(tmp_path / "mixed.pdf", pages=1, text_page=True))
    assert seen == [[1]]  # only the scanned second page
    assert doc.pages[0].ocr_confidence is None and doc.pages[1].ocr_confidence is not None
    assert "must not be read by OCR" in doc.text[doc.pages[0].start : doc.pages[0].end]


def test_low_confidence_page_goes_to_review(tmp_path):
    from chunkwise.api import chunk_document
    from chunkwise.enrich.records import build_records

    path = write_scan_pdf(tmp_path / "scan.pdf")

    def records(doc):
        chunks = chunk_document(doc, size=64, unit="words")
        assert chunks and all(c.page == 1 for c in chunks)
        return build_records(doc, chunks, acl=("public",), embed_model="m", chunker="c",
                             header_mode="none", now="2026-01-01T00:00:00Z")

    clear = records(_extract(path))
    assert all(r.quality == "ready" for r in clear)
    gated_doc = _extract(path, ocr_min_confidence=101)  # no page can reach it: the gate closes
    assert gated_doc.pages[0].review_reason == ocr.LOW_CONFIDENCE
    gated = records(gated_doc)
    assert all(r.quality == "review" and ocr.LOW_CONFIDENCE in r.reasons for r in gated)


def test_ocr_off_leaves_the_page_flagged(tmp_path):
    doc = _extract(write_scan_pdf(tmp_path / "scan.pdf"), ocr=False)
    assert doc.pages[0].needs_ocr and doc.text == ""
    assert "page 1 has no text layer (needs OCR)" in doc.warnings


def test_audit_reports_ocr_pages_and_mean_confidence(tmp_path):
    doc = _extract(write_scan_pdf(tmp_path / "scan.pdf", pages=2, text_page=True))
    row = audit_document(doc)
    assert row.ocr_pages == 2 and row.empty_pages == 0 and not row.needs_ocr
    expected = round(sum(p.ocr_confidence for p in doc.pages[1:]) / 2, 1)
    assert row.ocr_confidence == expected and row.ocr_confidence >= 80
    gated = audit_document(_extract(write_scan_pdf(tmp_path / "s.pdf"), ocr_min_confidence=101))
    assert gated.ocr_low_confidence_pages == 1 and gated.status == "warn"
    assert any("low OCR confidence" in w for w in gated.warnings)


def test_ocr_timeout_costs_only_that_file(tmp_path):
    doc = pdf.extract(write_scan_pdf(tmp_path / "scan.pdf").read_bytes(), "scan.pdf", ocr_timeout=0.001)
    assert doc.pages[0].needs_ocr and doc.pages[0].ocr_confidence is None
    assert any("OCR" in w for w in doc.warnings)


def test_page_cap(tmp_path, monkeypatch):
    monkeypatch.setattr(ocr, "MAX_PAGES", 1)
    doc = _extract(write_scan_pdf(tmp_path / "scan.pdf", pages=2))
    assert doc.pages[0].ocr_confidence is not None and doc.pages[1].needs_ocr
    assert "2 pages need OCR; only the first 1 were read" in doc.warnings


def test_extract_options_switch_ocr_and_validate_the_gate(tmp_path):
    from chunkwise.errors import ConfigError
    from chunkwise.extract import PDF, ExtractOptions, extract_bytes

    data = write_scan_pdf(tmp_path / "scan.pdf").read_bytes()
    assert extract_bytes(data, "scan.pdf", PDF, ExtractOptions(ocr=False)).pages[0].needs_ocr
    gated = extract_bytes(data, "scan.pdf", PDF, ExtractOptions(ocr_min_confidence=100)).pages[0]
    assert gated.ocr_confidence is not None and gated.review_reason == ocr.LOW_CONFIDENCE
    with pytest.raises(ConfigError, match="between 0 and 100"):
        ExtractOptions(ocr_min_confidence=150)


def test_audit_command_shows_ocr_pages(tmp_path, capsys):
    import json

    from chunkwise.cli.main import main

    path = write_scan_pdf(tmp_path / "scan.pdf")
    assert main(["audit", str(path)]) == 0
    out = capsys.readouterr().out
    assert "1 @ " in out and "%" in out
    assert main(["audit", str(path), "--json"]) == 0
    row = json.loads(capsys.readouterr().out.splitlines()[0])
    assert row["ocr_pages"] == 1 and row["ocr_confidence"] >= 80 and row["needs_ocr"] is False


def test_a_page_pypdf_cannot_read_is_recovered_by_ocr(tmp_path, monkeypatch):
    import pypdf
    from pdf_fixtures import BODY, write_outline_pdf

    real = pypdf.PageObject.extract_text

    def flaky(self, *args, **kwargs):
        if self.page_number == 1:
            raise pypdf.errors.PdfReadError("bad content stream")
        return real(self, *args, **kwargs)

    monkeypatch.setattr(pypdf.PageObject, "extract_text", flaky)
    doc = _extract(write_outline_pdf(tmp_path / "book.pdf"))
    page = doc.pages[1]
    assert page.ocr_confidence is not None and not page.needs_ocr
    assert "Harbours" in doc.text[page.start : page.end] and BODY.split()[3] in doc.text[page.start : page.end]
    assert doc.warnings[0].startswith("page 2: text extraction failed")
