"""Issue 27 item 8: when OCR's wall-clock guard is hit, the file's warnings say that its output
depends on the machine's load — never a silent change of output."""
import json

from chunkwise.extract import ocr


def test_a_page_over_tesseracts_time_limit_is_a_warning_that_names_the_clock(monkeypatch):
    lines = [json.dumps({"page": 0, "error": "Tesseract process timeout"}).encode()]
    monkeypatch.setattr(ocr, "_run", lambda payload, deadline: (lines, ""))
    warnings: list[str] = []
    assert ocr.ocr_pages(b"%PDF", [0], warnings) == {}
    assert warnings == [f"page 1: OCR failed (Tesseract process timeout){ocr.CLOCK_HINT}"]


def test_the_whole_run_over_its_deadline_is_a_warning_that_names_the_clock(monkeypatch):
    monkeypatch.setattr(ocr, "_run", lambda payload, deadline: ([], f"over {deadline:.0f} s"))
    warnings: list[str] = []
    ocr.ocr_pages(b"%PDF", [0, 1], warnings, timeout=5)
    assert warnings == [f"OCR stopped: over 40 s; 2 page(s) left unread{ocr.CLOCK_HINT}"]


def test_a_page_that_fails_otherwise_names_no_clock(monkeypatch):
    lines = [json.dumps({"page": 0, "error": "OSError: bad image"}).encode()]
    monkeypatch.setattr(ocr, "_run", lambda payload, deadline: (lines, ""))
    warnings: list[str] = []
    ocr.ocr_pages(b"%PDF", [0], warnings)
    assert warnings == ["page 1: OCR failed (OSError: bad image)"]
