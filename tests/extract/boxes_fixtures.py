"""A PDF drawn with fpdf2 with text at known places (points from the page's top left), for the
box tests of extraction, records, stores and the CLI: page 1 a heading and a paragraph that runs on
(no full stop) to page 2, where it goes on in lowercase; page 2 then a paragraph far down and right."""
from __future__ import annotations

from pathlib import Path

PAGE = (600.0, 800.0)
SIZE = 12.0
# (page, x, baseline from the top, text): where each line is drawn
LINES = (
    (1, 72.0, 100.0, "Harbour Ledgers"),
    (1, 72.0, 700.0, "The keepers wrote every ship into the ledger and"),
    (1, 72.0, 714.0, "counted the lanterns lit along the quay each night and"),
    (2, 72.0, 90.0, "their clerks copied the counts into a second book."),
    (2, 72.0, 104.0, "The book was kept in the harbour office."),
    (2, 330.0, 400.0, "Tides were noted apart."),
    (2, 330.0, 414.0, "A third clerk kept them."),
)


def write_boxes_pdf(path: Path) -> Path:
    from fpdf import FPDF

    pdf = FPDF(unit="pt", format=PAGE)
    pdf.set_auto_page_break(False)
    page = 0
    for number, x, y, text in LINES:
        if number != page:
            pdf.add_page()
            page = number
        pdf.set_font("Helvetica", "B" if text == LINES[0][3] else "", size=18 if text == LINES[0][3] else SIZE)
        pdf.text(x, y, text)
    path.write_bytes(bytes(pdf.output()))
    return path


def drawn(text: str) -> tuple[int, float, float, float, float]:
    """(page, x0, top, x1, bottom) of a line as drawn: its real width (the font's metrics), its
    height from cap height to baseline."""
    from fpdf import FPDF

    number, x, y, line = next(entry for entry in LINES if entry[3] == text)
    pdf = FPDF(unit="pt")
    heading = line == LINES[0][3]
    size = 18 if heading else SIZE
    pdf.set_font("Helvetica", "B" if heading else "", size=size)
    return number, x, y - 0.7 * size, x + pdf.get_string_width(line), y


def contains(box, inner, slack: float = 2.0) -> bool:
    """Whether ``box`` holds ``inner`` (both (page, x0, top, x1, bottom)), give or take ``slack`` points."""
    return (box[0] == inner[0] and box[1] <= inner[1] + slack and box[2] <= inner[2] + slack
            and box[3] >= inner[3] - slack and box[4] >= inner[4] - slack)
