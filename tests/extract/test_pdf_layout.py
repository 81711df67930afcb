"""PDF layout: margin stamps, running heads and figure text are never headings; numbered bold
sections and the outline are; two columns read left then right; ruled tables come out as tables;
printed page labels sit beside the physical page number."""
import pytest

pytest.importorskip("pypdf")
pytest.importorskip("fpdf")

from fixtures import assert_spans  # noqa: E402
from pdf_fixtures import (RUNNING_HEAD, STAMP, TABLE, write_outline_pdf, write_paper_pdf,  # noqa: E402
                          write_table_pdf)

from chunkwise.extract import pdf  # noqa: E402


def _extract(path):
    return pdf.extract(path.read_bytes(), path.name)


def _heads(doc):
    return [(b.text, b.level, b.meta["page"]) for b in doc.blocks if b.kind == "heading"]


def test_paper_headings_survive_stamp_running_head_and_figure(tmp_path):
    doc = _extract(write_paper_pdf(tmp_path / "paper.pdf"))
    assert _heads(doc) == [("Counting Ships in Old Harbour Ledgers", 1, 1), ("1 Introduction", 2, 1),
                           ("2 Method", 2, 2), ("2.1 Data", 3, 2)]
    assert "arXiv" not in doc.text and STAMP not in doc.text  # the rotated margin stamp is not content
    assert RUNNING_HEAD in doc.text  # kept as text (normalise removes running heads), never a heading
    assert "Accuracy" in doc.text and "Epochs" in doc.text  # figure labels stay text, not headings
    assert_spans(doc)


def test_two_columns_written_line_by_line_read_left_then_right(tmp_path):
    doc = _extract(write_paper_pdf(tmp_path / "paper.pdf"))
    words = doc.text[doc.pages[1].start : doc.pages[1].end].split()
    left = [i for i, w in enumerate(words) if w.startswith("left")]
    right = [i for i, w in enumerate(words) if w.startswith("right")]
    assert len(left) == len(right) == 150
    assert max(left) < min(right)
    assert [words[i] for i in left[:6]] == ["left0w0", "left0w1", "left0w2", "left0w3", "left0w4", "left1w0"]
    assert words[right[0]] == "right0w0" and words[right[-1]] == "right29w4"
    (data_heading,) = [b for b in doc.blocks if b.kind == "heading" and b.text == "2.1 Data"]
    assert doc.text.index("left0w0") > data_heading.end


def test_ruled_table_is_a_table_with_its_header(tmp_path):
    doc = _extract(write_table_pdf(tmp_path / "table.pdf"))
    (table,) = [b for b in doc.blocks if b.kind == "table"]
    assert table.meta["header"] == TABLE[0] and table.meta["page"] == 1
    lines = doc.text[table.start : table.end].split("\n")
    assert lines[:2] == ["| Station | Ships per day | Keeper |", "| --- | --- | --- |"]
    assert [doc.text[s:e] for s, e in table.meta["rows"]] == [f"| {' | '.join(r)} |" for r in TABLE[1:]]
    paras = [doc.text[b.start : b.end] for b in doc.blocks if b.kind == "paragraph"]
    assert paras == ["Traffic by station for the winter quarter is shown below.",
                     "West Cape was the busiest station of the quarter."]
    assert doc.text.count("North Point") == 1  # the table's text is not repeated as lines
    assert_spans(doc)


def test_table_chunker_repeats_the_pdf_table_header(tmp_path):
    from chunkwise.api import chunk_file

    path = write_table_pdf(tmp_path / "table.pdf")
    chunks = chunk_file(str(path), strategy="table", size=30, unit="words")
    rows = [c for c in chunks if "West Cape | 31" in c.text]
    assert rows and all("Station" in c.embed_text for c in rows)


def test_outline_gives_headings_and_levels(tmp_path):
    doc = _extract(write_outline_pdf(tmp_path / "book.pdf"))
    assert _heads(doc) == [("Preface", 1, 1), ("Harbours", 1, 2), ("Northern Harbours", 2, 3),
                           ("Southern Harbours", 2, 4), ("Index of Ships", 1, 5)]
    assert_spans(doc)


def test_printed_page_labels_beside_physical_numbers(tmp_path):
    doc = _extract(write_outline_pdf(tmp_path / "book.pdf"))
    assert [(p.number, p.label) for p in doc.pages] == [(1, "i"), (2, "ii"), (3, "1"), (4, "2"), (5, "3")]
    plain = _extract(write_table_pdf(tmp_path / "table.pdf"))
    assert [p.label for p in plain.pages] == [""]  # no /PageLabels: no invented labels


def test_broken_outline_falls_back_to_font_sizes(tmp_path, monkeypatch):
    import pypdf

    def broken(self):
        raise pypdf.errors.PdfReadError("bad outline")

    monkeypatch.setattr(pypdf.PdfReader, "outline", property(broken))
    doc = _extract(write_paper_pdf(tmp_path / "paper.pdf"))
    assert ("1 Introduction", 2, 1) in _heads(doc)


def test_table_detection_failure_keeps_the_text(tmp_path, monkeypatch):
    import pdfplumber

    def explode(*args, **kwargs):
        raise RuntimeError("pdfminer fell over")

    monkeypatch.setattr(pdfplumber, "open", explode)
    doc = _extract(write_table_pdf(tmp_path / "table.pdf"))
    assert "North Point" in doc.text and not [b for b in doc.blocks if b.kind == "table"]
    assert any("table detection failed" in w for w in doc.warnings)


def test_a_page_that_makes_table_detection_crawl_costs_only_its_tables(tmp_path, monkeypatch):
    import time

    from chunkwise.extract import pdf_tables

    path = write_table_pdf(tmp_path / "table.pdf")
    real = pdf_tables._page_tables
    monkeypatch.setattr(pdf_tables, "PAGE_SECONDS", 0.5)

    def crawl(page, seen=None, ruled=True):  # pure-Python work for 30 s, as pdfminer on a hostile page
        until = time.monotonic() + 30
        while time.monotonic() < until:
            sum(range(1000))
        return []

    monkeypatch.setattr(pdf_tables, "_page_tables", crawl)
    start = time.monotonic()
    doc = _extract(path)
    assert time.monotonic() - start < 10
    assert not [b for b in doc.blocks if b.kind == "table"] and "North Point" in doc.text  # text kept
    assert any("table detection took over" in w for w in doc.warnings), doc.warnings
    monkeypatch.setattr(pdf_tables, "_page_tables", real)
    assert [b for b in _extract(path).blocks if b.kind == "table"]  # the timer is gone: tables again
    monkeypatch.setattr(pdf_tables, "TOTAL_SECONDS", 0.3)
    monkeypatch.setattr(pdf_tables, "_page_tables", crawl)
    doc = _extract(path)
    assert any("table detection stopped after" in w for w in doc.warnings), doc.warnings


def test_table_pages_are_bounded_by_their_work_not_the_clock(tmp_path, monkeypatch):
    """Issue 27 item 8: which pages go to the table finder depends on the page (its rules and
    characters), never on the machine's speed; a page over the bounds is a warning, the same on every run."""
    from chunkwise.extract import pdf_tables

    path = write_table_pdf(tmp_path / "table.pdf")
    found = _extract(path)
    assert [b for b in found.blocks if b.kind == "table"]
    monkeypatch.setattr(pdf_tables, "MAX_PAGE_RULES", 3)  # the table page draws more rules than this
    runs = [_extract(path) for _ in range(2)]
    for doc in runs:
        assert not [b for b in doc.blocks if b.kind == "table"] and "North Point" in doc.text
        assert any("over the table finder's bounds" in w for w in doc.warnings), doc.warnings
    assert runs[0].text == runs[1].text and runs[0].warnings == runs[1].warnings


def test_within_bounds_is_pure_and_ordered():
    from chunkwise.extract.pdf_tables import MAX_DOC_WORK, MAX_PAGE_CHARS, MAX_PAGE_RULES, within_bounds

    warnings: list[str] = []
    work = {4: (10, 100), 0: (MAX_PAGE_RULES + 1, 10), 2: (50, MAX_PAGE_CHARS + 1), 1: (8, 500)}
    assert within_bounds(work, warnings) == [1, 4]
    assert len(warnings) == 2 and "page 1:" in warnings[0] and "page 3:" in warnings[1]
    big = {i: (MAX_PAGE_RULES, MAX_PAGE_CHARS) for i in range(100)}
    cut: list[str] = []
    kept = within_bounds(big, cut)
    assert kept == list(range(len(kept))) and 0 < len(kept) < 100
    assert sum(r + c for r, c in (big[i] for i in kept)) <= MAX_DOC_WORK
    assert cut and f"from page {len(kept) + 1} on" in cut[0]


def test_bold_title_lines_and_slightly_larger_bold_lines_are_headings():
    """Docling's multi_page.pdf kind of layout: section titles bold at 13.5 pt over 12 pt body text
    (below the plain size ratio), and a bold title line at body size above its paragraph. Bullets,
    sentences and a bold line inside a paragraph (no break above it) are not headings."""
    from chunkwise.extract.pdf_headings import font_headings
    from chunkwise.extract.pdf_lines import Line

    body = [Line("Body text that runs on for a while and fills the line with words.", 12.0, None, None)] * 6
    page = [Line("The Evolution of the Word Processor", 12.0, None, None, bold=True), *body,
            Line("", 0.0, None, None), Line("Pre-Digital Era (19th Century)", 13.5, None, None, bold=True), *body,
            Line("• OpenOffice and LibreOffice: Open", 12.0, None, None, bold=True), *body,
            Line("", 0.0, None, None), Line("This bold line ends a sentence.", 12.0, None, None, bold=True), *body,
            Line("Bold Phrase Inside A Paragraph", 12.0, None, None, bold=True), *body]
    levels = font_headings([page])[0]
    named = {ln.text: lv for ln, lv in zip(page, levels) if lv}
    assert set(named) == {"The Evolution of the Word Processor", "Pre-Digital Era (19th Century)"}, named
    assert named["Pre-Digital Era (19th Century)"] < named["The Evolution of the Word Processor"]


def test_tex_bold_extended_faces_are_bold():
    from chunkwise.extract.pdf_lines import BOLD_MARKS, _BOLD_FACE

    def bold(name):
        return any(b in name for b in BOLD_MARKS) or bool(_BOLD_FACE.search(name))

    assert bold("/aaaaad+sfbx1000") and bold("/cmbx12") and bold("/nimbusromno9l-medi")
    assert not bold("/aaaaag+sfrm1000") and not bold("/timesnewromanpsmt") and not bold("/mediumslab")
