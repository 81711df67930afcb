"""PDF layout fixtures, generated with fpdf2 into tmp_path: a paper (margin stamp, running head,
bold numbered headings at body size, figure labels, two columns written line by line), a ruled
table, an outline with printed page labels, and scanned pages rendered from known words."""
from __future__ import annotations

import io
from pathlib import Path

STAMP = "arXiv:2004.04906v3 [cs.CL] 3 Oct 2020"
RUNNING_HEAD = "Preprint under review at the Workshop on Harbours"
BODY = ("Harbour traffic was logged by hand for a century before the sensors arrived and the clerks "
        "kept their ledgers in a careful round script that is still easy to read today. ")
TABLE = [["Station", "Ships per day", "Keeper"], ["North Point", "12", "Ada"], ["South Reef", "7", "Grace"],
         ["West Cape", "31", "Edsger"]]
SCAN_WORDS = ("harbour", "ledger", "keeper", "lantern", "anchor", "voyage", "compass", "beacon", "tide",
              "shipwright")


def _pdf():
    from fpdf import FPDF

    pdf = FPDF()
    pdf.set_auto_page_break(False)
    return pdf


def _running_head(pdf) -> None:
    pdf.set_font("Helvetica", size=8)
    pdf.set_xy(10, 8)
    pdf.cell(0, 4, RUNNING_HEAD)


def write_paper_pdf(path: Path) -> Path:
    """Page 1: title, a rotated arXiv stamp in the left margin, "1 Introduction" (bold, body size),
    a figure with large axis labels; page 2: "2 Method", "2.1 Data" and two columns written a line
    at a time (left line, right line, ...), so content-stream order interleaves the columns."""
    pdf = _pdf()
    pdf.add_page()
    _running_head(pdf)
    with pdf.rotation(90, x=12, y=200):
        pdf.set_font("Times", size=20)
        pdf.set_text_color(128)
        pdf.text(12, 200, STAMP)
    pdf.set_text_color(0)
    pdf.set_font("Times", "B", 17)
    pdf.set_xy(20, 20)
    pdf.cell(0, 10, "Counting Ships in Old Harbour Ledgers")
    for y, heading, body in ((40, "1 Introduction", BODY * 4), (150, "", BODY * 2)):
        if heading:
            pdf.set_font("Times", "B", 11)
            pdf.set_xy(20, y)
            pdf.cell(0, 6, heading)
        pdf.set_font("Times", size=10)
        pdf.set_xy(20, y + 8)
        pdf.multi_cell(170, 5, body)
    pdf.set_font("Helvetica", size=14)  # figure: axis labels bigger than the body, not headings
    for x, y, label in ((30, 100, "Accuracy"), (90, 135, "Epochs"), (25, 130, "0.5"), (25, 108, "1.0")):
        pdf.text(x, y, label)
    pdf.line(28, 95, 28, 132)
    pdf.line(28, 132, 150, 132)
    pdf.add_page()
    _running_head(pdf)
    pdf.set_font("Times", "B", 11)
    pdf.set_xy(20, 20)
    pdf.cell(0, 6, "2 Method")
    pdf.set_xy(20, 28)
    pdf.cell(0, 6, "2.1 Data")
    pdf.set_font("Times", size=10)
    for i in range(30):
        pdf.text(20, 45 + i * 5, " ".join(f"left{i}w{j}" for j in range(5)))
        pdf.text(110, 45 + i * 5, " ".join(f"right{i}w{j}" for j in range(5)))
    path.write_bytes(bytes(pdf.output()))
    return path


def draw_table(pdf) -> None:
    """A paragraph, then ``TABLE`` ruled with its header row, on the current page."""
    pdf.set_font("Helvetica", size=11)
    pdf.multi_cell(0, 6, "Traffic by station for the winter quarter is shown below.")
    pdf.ln(4)
    with pdf.table(col_widths=(60, 40, 40)) as table:
        for row in TABLE:
            cells = table.row()
            for value in row:
                cells.cell(value)
    pdf.ln(4)


def write_table_pdf(path: Path) -> Path:
    """A paragraph, a ruled table with a header row, a paragraph."""
    pdf = _pdf()
    pdf.add_page()
    draw_table(pdf)
    pdf.multi_cell(0, 6, "West Cape was the busiest station of the quarter.")
    path.write_bytes(bytes(pdf.output()))
    return path


def write_outline_pdf(path: Path) -> Path:
    """Five pages with bookmarks (two levels) whose headings are set in the body font, and printed
    page labels i, ii, then 1, 2, 3."""
    from pypdf import PdfWriter

    pdf = _pdf()
    sections = [("Preface", 0), ("Harbours", 0), ("Northern Harbours", 1), ("Southern Harbours", 1),
                ("Index of Ships", 0)]
    for title, level in sections:
        pdf.add_page()
        pdf.set_font("Helvetica", size=11)
        pdf.start_section(title, level=level)
        pdf.cell(0, 6, title, new_x="LMARGIN", new_y="NEXT")
        pdf.multi_cell(0, 6, BODY * 3)
    raw = io.BytesIO(bytes(pdf.output()))
    writer = PdfWriter(clone_from=raw)
    writer.set_page_label(0, 1, style="/r")
    writer.set_page_label(2, 4, style="/D", start=1)
    with path.open("wb") as fh:
        writer.write(fh)
    return path


def write_scan_pdf(path: Path, pages: int = 1, text_page: bool = False) -> Path:
    """Pages that are only an image of rendered text (SCAN_WORDS), as a scanner makes them;
    ``text_page`` adds a first page with a real text layer."""
    from PIL import Image, ImageDraw, ImageFont

    pdf = _pdf()
    if text_page:
        pdf.add_page()
        pdf.set_font("Helvetica", size=11)
        pdf.multi_cell(0, 6, "This page has a real text layer and must not be read by OCR.")
    font = ImageFont.load_default(size=40)
    for n in range(pages):
        image = Image.new("L", (1700, 2200), 255)
        draw = ImageDraw.Draw(image)
        lines = [" ".join(SCAN_WORDS[i : i + 4]) for i in range(0, len(SCAN_WORDS), 4)]
        for i, line in enumerate([f"Page {n + 1} of the survey"] + lines):
            draw.text((150, 200 + i * 80), line, fill=0, font=font)
        buf = io.BytesIO()
        image.save(buf, format="PNG")
        pdf.add_page()
        pdf.image(buf, x=0, y=0, w=210, h=297)
    path.write_bytes(bytes(pdf.output()))
    return path


HANDBOOK_HEAD = "Harbour Authority Handbook - Internal"
HANDBOOK_PAGES = (
    ("Arrivals are logged at the north gate by the duty clerk.",
     "Every vessel that enters the basin must declare its immi-",
     "gration status to the clerk on arrival.",
     "Cargo manifests are checked the same day."),
    ("Pilots are assigned by rota for the outer channel.",
     "Night pilotage is paid at the higher rate.",
     "Tugs are booked through the port office.",
     "The harbour master signs every departure permit"),
    ("before the tide turns, and no vessel may leave without one.",
     "Fuel is sold at the west quay only.",
     "Fees are invoiced monthly."),
    ("Storm warnings are raised on the signal mast.",
     "All berths are cleared when the red flag flies.",
     "Contact the port office for exceptions."),
)
# What a reader copies from a viewer: one word where a line end hyphenated it, one sentence where a
# page break (footer "Page 2 of 4", running head) falls inside it.
HANDBOOK_HYPHENATED = "must declare its immigration status to the clerk on arrival"
HANDBOOK_PAGE_CROSSING = "The harbour master signs every departure permit before the tide turns"


def write_handbook_pdf(path: Path) -> Path:
    """Four pages, each with a running head and a "Page N of 4" footer, set line by line: page 1 breaks
    "immi-/gration" across a line end, and a sentence runs from the last line of page 2 onto page 3."""
    pdf = _pdf()
    for n, lines in enumerate(HANDBOOK_PAGES, 1):
        pdf.add_page()
        pdf.set_font("Helvetica", size=8)
        pdf.text(10, 10, HANDBOOK_HEAD)
        pdf.set_font("Helvetica", size=11)
        for i, line in enumerate(lines):
            pdf.text(20, 30 + 7 * i, line)
        pdf.set_font("Helvetica", size=8)
        pdf.text(100, 285, f"Page {n} of {len(HANDBOOK_PAGES)}")
    path.write_bytes(bytes(pdf.output()))
    return path


def write_long_pdf(path: Path, pages: int = 64) -> Path:
    """A long report, uncompressed (over 256 KB: big enough for ingest to split it among workers):
    per page a running head, a heading (chapters every eighth page set larger), paragraphs with a
    word hyphenated at a line end, a ruled table on every fifth page, and a paragraph that runs on
    to the next page. Headings come from font statistics over the whole document, so a page range
    read alone could not tell them."""
    pdf = _pdf()
    pdf.set_compression(False)
    for n in range(1, pages + 1):
        pdf.add_page()
        _running_head(pdf)
        pdf.set_xy(20, 20)
        if n % 8 == 1:
            pdf.set_font("Times", "B", 20)
            pdf.cell(0, 10, f"Chapter {n // 8 + 1}: {SCAN_WORDS[n // 8 % 10].title()} Harbours", new_x="LMARGIN",
                     new_y="NEXT")
        pdf.set_font("Times", "B", 14)
        name = f"{SCAN_WORDS[n % 10].title()} and {SCAN_WORDS[n // 10 % 10].title()}"  # running heads repeat: these do not
        pdf.cell(0, 8, f"Section {n}.1 {name}", new_x="LMARGIN", new_y="NEXT")
        pdf.set_font("Times", size=10)
        pdf.multi_cell(170, 5, BODY * (2 + n % 3) + f"Pier {n} kept a care-\nful count of ships.")
        if n % 5 == 0:
            pdf.ln(3)
            with pdf.table(col_widths=(60, 40, 40)) as table:
                for row in TABLE:
                    cells = table.row()
                    for value in row:
                        cells.cell(f"{value} {n}" if row is not TABLE[0] else value)
        pdf.ln(3)
        pdf.multi_cell(170, 5, BODY * 2 + f"This paragraph about pier {n} runs on")
    path.write_bytes(bytes(pdf.output()))
    return path
