"""Issue 27 item 1: every PDF block carries where it is on its pages (``meta["boxes"]``: (page, x0,
top, x1, bottom) in points from the page's top left), measured on a PDF drawn here with text at
known places: each drawn line lies inside its block's box, the box is no bigger than its lines
(give or take a few points), and a paragraph that runs on over a page break has a box per page."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from boxes_fixtures import LINES, contains, drawn, write_boxes_pdf  # noqa: E402

pytest.importorskip("fpdf")


@pytest.fixture(scope="module")
def doc(tmp_path_factory):
    from chunkwise.extract.pdf import extract

    path = write_boxes_pdf(tmp_path_factory.mktemp("boxes") / "ledgers.pdf")
    return extract(path.read_bytes(), "ledgers.pdf")


def _block_of(doc, text):
    at = doc.text.index(text)
    return next(b for b in doc.blocks if b.kind != "page_break" and b.start <= at < b.end)


def test_every_drawn_line_lies_in_its_blocks_box(doc):
    for number, _, _, text in LINES:
        block = _block_of(doc, text)
        [box] = block.meta["boxes"]
        assert box[0] == number == block.meta["page"]
        assert contains(box, drawn(text)), (text, box, drawn(text))


def test_a_box_is_no_bigger_than_its_lines(doc):
    for block in (b for b in doc.blocks if b.kind != "page_break"):
        [box] = block.meta["boxes"]
        lines = [drawn(t) for _, _, _, t in LINES if block.start <= doc.text.index(t) < block.end]
        assert lines
        assert abs(box[1] - min(x[1] for x in lines)) <= 1.0 and abs(box[3] - max(x[3] for x in lines)) <= 2.0
        assert min(x[2] for x in lines) - box[2] <= 6.0 and box[4] - max(x[4] for x in lines) <= 6.0


def test_a_paragraph_run_on_over_a_page_break_has_a_box_per_page(doc):
    from chunkwise.pipeline.chunk import normalised_view

    view, _ = normalised_view(doc)
    merged = next(b for b in view.blocks if "their clerks" in view.text[b.start:b.end])
    assert "The keepers wrote" in view.text[merged.start:merged.end]  # joined across the break
    first, second = merged.meta["boxes"]
    assert first[0] == 1 and second[0] == 2
    assert contains(first, drawn(LINES[2][3])) and contains(second, drawn(LINES[3][3]))


def test_a_ruled_tables_box_is_pdfplumbers(tmp_path):
    pytest.importorskip("pdfplumber")
    import pdfplumber

    from chunkwise.extract.pdf import extract
    from pdf_fixtures import write_table_pdf

    path = write_table_pdf(tmp_path / "table.pdf")
    doc = extract(path.read_bytes(), "table.pdf")
    [table] = [b for b in doc.blocks if b.kind == "table"]
    [box] = table.meta["boxes"]
    with pdfplumber.open(path) as pdf:
        want = pdf.pages[box[0] - 1].find_tables()[0].bbox
    assert box[1:] == pytest.approx(want, abs=0.1)
