"""PDF tables drawn without rules (issue 27 items 1 and 9): a financial statement keeps its row labels
and both year columns (wrapped labels whole, "$" apart from its figure, negatives in parentheses); a
table of contents with dot leaders is a table of (title, page); prose in two columns and code
listings are not tables."""
from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("fpdf")
pytest.importorskip("pdfplumber")

from chunkwise.extract import extract_bytes, pdf_aligned  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import pdf_statements  # noqa: E402

# (label, 2021, 2020) as printed in a 10-K balance sheet; a label with no figures is a section row
STATEMENT = [
    ("Current assets:", []),
    ("Cash and cash equivalents", ["16,058,714", "5,993,388"]),
    ("Accounts receivable, net of allowance of $348,695 and $145,000, respectively", ["4,377,165", "2,493,254"]),
    ("Inventory", ["770,248", "668,525"]),
    ("Total current assets", ["23,890,122", "11,562,833"]),
    ("Interest rate swap liability", ["\u2014", "66,009"]),
    ("Accumulated deficit", ["(33,543,351)", "(35,655,163)"]),
    ("Common stock, 65,000,000 shares authorized; $0.001 par value; 23,523,969 and 21,970,638 shares "
     "issued and outstanding, respectively", ["23,524", "21,971"]),
    ("Total assets", ["40,452,705", "30,574,594"]),
]


def _tables(doc):
    return [doc.text[b.start:b.end] for b in doc.blocks if b.kind == "table"]


def test_a_statement_keeps_every_label_and_both_year_columns():
    tables = [(["2021", "2020"], STATEMENT)]
    doc = extract_bytes(pdf_statements.render(tables), "s.pdf", "application/pdf")
    want = pdf_statements.truth(tables)
    assert len(want) == 16
    assert set(want) <= pdf_statements.table_triples(doc)  # before: labels, then one list of figures
    (table,) = _tables(doc)
    assert "| Current assets: |  |  |" in table  # the section row stays in its place
    rows = [r for r in table.splitlines() if "Common stock" in r]
    assert len(rows) == 1 and "respectively | 23,524 | 21,971 |" in rows[0]  # three lines, one label


def test_the_10k_statements_check_passes_its_target():
    html = pdf_statements.DEFAULT_HTML  # ../shared/data beside the repository, as in CI
    if not html.is_file():
        pytest.skip("../shared/data/unstructured is absent")
    tables = pdf_statements.statements(html.read_bytes())
    doc = extract_bytes(pdf_statements.render(tables), "s.pdf", "application/pdf")
    want = pdf_statements.truth(tables)
    got = pdf_statements.table_triples(doc)
    assert len(want) >= 100 and sum(t in got for t in want) >= 0.95 * len(want)


def _pdf():
    from fpdf import FPDF

    pdf = FPDF(unit="pt", format="a4")
    pdf.set_auto_page_break(False)
    pdf.add_page()
    pdf.set_font("Helvetica", size=10)
    return pdf


def test_a_table_of_contents_with_dot_leaders_is_a_table_of_titles_and_pages():
    pdf = _pdf()
    entries = [("Preface", "xi"), ("Chapter 1. Harbours", "1"), ("1.1 Northern harbours", "2"),
               ("1.2 Southern harbours", "5"), ("Chapter 2. Ships", "9")]
    pdf.text(60, 60, "Contents")
    for i, (title, page) in enumerate(entries):
        y = 90 + 14 * i
        pdf.text(60, y, title)
        end = 60 + pdf.get_string_width(title) + 6
        pdf.text(end, y, " ." * int((480 - end) / pdf.get_string_width(" .")))
        pdf.text(520 - pdf.get_string_width(page), y, page)
    doc = extract_bytes(bytes(pdf.output()), "toc.pdf", "application/pdf")
    (table,) = _tables(doc)
    rows = [[c.strip() for c in r.strip("|").split("|")] for r in table.splitlines() if not r.startswith("| ---")]
    assert rows == [list(e) for e in entries]  # leaders gone, every title whole beside its page
    assert "Contents" in doc.text


def test_prose_in_two_columns_and_a_code_listing_are_not_tables():
    pdf = _pdf()
    words = "the harbour clerks kept their ledgers in a careful round script".split()
    for i in range(12):
        line = " ".join(words[(i + k) % len(words)] for k in range(8))
        pdf.text(40, 80 + 12 * i, line)
        pdf.text(310, 80 + 12 * i, line + f" {i + 1}")  # lines ending in a number, side by side
    pdf.set_font("Courier", size=9)
    for i, (a, b) in enumerate([("SELECT", "name"), ("FROM", "ships"), ("WHERE", "tons > 10"), ("ORDER BY", "1")]):
        pdf.text(40, 300 + 11 * i, a)
        pdf.text(120, 300 + 11 * i, b)
    doc = extract_bytes(bytes(pdf.output()), "prose.pdf", "application/pdf")
    assert _tables(doc) == []


def test_candidate_pages_are_those_with_figures_or_leaders_at_line_ends():
    assert pdf_aligned.candidate(["Inventory 770,248 668,525", "Goodwill 1,091,000 1,091,000", "Total 3 4"])
    assert pdf_aligned.candidate(["Preface . . . . . xi", "Authors . . . . xii", "Index . . . 40"])
    assert not pdf_aligned.candidate(["It rained in 2020.", "The ships came in.", "Tides 1, 2 and 3 rose."])


_word = st.text(alphabet="abcdefghij", min_size=1, max_size=8)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(_word, min_size=6, max_size=14), min_size=1, max_size=30))
def test_lines_of_long_prose_never_make_a_table(lines):
    """Guarantee: lines of running text (many words, no wide gaps) give no table, whatever the words."""
    words, top = [], 0.0
    for line in lines:
        x = 40.0
        for w in line:
            width = 5.0 * len(w)
            words.append({"text": w, "x0": x, "x1": x + width, "top": top, "bottom": top + 10, "fontname": "Times"})
            x += width + 2.5
        top += 12
    assert pdf_aligned.find(words) == []


def test_rows_group_words_by_their_middles_and_cut_at_wide_gaps():
    w = lambda t, x0, x1, top, bottom: {"text": t, "x0": x0, "x1": x1, "top": top, "bottom": bottom}  # noqa: E731
    rows = pdf_aligned.page_rows([w("Persons", 100, 130, 11, 20), w("with", 132, 150, 11, 20),
                                  w("*", 300, 308, 8, 21)])  # a larger star drawn a little higher
    assert [[s.text for s in r.segments] for r in rows] == [["Persons with", "*"]]
    assert re.fullmatch(r"[\d.]+", str(rows[0].size))


def test_a_grid_in_one_column_of_a_two_column_page_is_found_with_its_wrapped_header():
    """The left column's prose shares its lines with the grid; split at the gutter, the grid lines up
    (Docling's table_mislabeled_as_picture.pdf, made small)."""
    pdf = _pdf()
    pdf.set_font("Helvetica", size=8)
    prose = "legal aid is provided by the state and by civil society groups in most countries"
    for i in range(30):
        pdf.text(40, 80 + 11 * i, prose)  # the left column, down the whole page
    for i in range(4):
        pdf.text(330, 80 + 11 * i, prose[:60])  # the right column's question above the grid
    pdf.text(500, 140, "State funded")
    pdf.text(556, 140, "CSOs")
    pdf.text(506, 149, "legal aid")
    groups = ["Persons with disabilities", "Children", "Women", "Refugees or stateless persons"]
    for i, group in enumerate(groups):
        y = 165 + 14 * i
        pdf.text(330, y, "y")
        pdf.text(345, y, group)
        pdf.text(520, y, "*")
        pdf.text(562, y, "*")
    doc = extract_bytes(bytes(pdf.output()), "grid.pdf", "application/pdf")
    (table,) = _tables(doc)
    lines = table.splitlines()
    assert lines[0] == "|  |  | State funded legal aid | CSOs |"
    assert lines[2:] == [f"| y | {g} | * | * |" for g in groups]
    assert doc.text.count(prose) == 30 and doc.text.count(prose[:60]) == 34  # no prose went into the table


def test_a_two_column_paper_with_a_footer_across_its_gutter_gives_no_table():
    """Backus's 1978 paper (Unstructured's example documents): numbered lines ending in figures in
    both columns and a running foot across the gutter; a false table of its prose before."""
    path = Path(__file__).resolve().parents[3] / "shared" / "data" / "unstructured" / "example-docs" / "pdf" / "a1977-backus-p21.pdf"
    if not path.is_file():
        pytest.skip("../shared/data/unstructured is absent")
    doc = extract_bytes(path.read_bytes(), path.name, "application/pdf")
    assert _tables(doc) == []


_cell = st.one_of(st.sampled_from(["12", "3,400", "(7)", "\u2014", "*"]), _word)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(_cell, min_size=1, max_size=4), min_size=1, max_size=12),
       st.lists(st.sampled_from([80.0, 160.0, 240.0, 320.0]), min_size=4, max_size=4, unique=True))
def test_table_cells_hold_only_words_of_the_page_each_once(grid, columns):
    """Guarantee: whatever the layout, a table's cells are made of the page's words, none invented
    and none used twice."""
    columns = sorted(columns)
    words = []
    for r, row in enumerate(grid):
        for c, text in enumerate(row):
            x1 = columns[c] + 30  # right-aligned, as figures are
            words.append({"text": text, "x0": x1 - 5.0 * len(text), "x1": x1, "top": 40.0 + 12 * r,
                          "bottom": 50.0 + 12 * r, "fontname": "Helvetica"})
    from collections import Counter

    have = Counter(w["text"] for w in words)
    used = Counter(t for table in pdf_aligned.find(words) for row in table[4] for cell in row for t in cell.split())
    assert not used - have


def test_a_cell_drawn_twice_on_the_spot_reads_once():
    """Bold faked by overprinting (redp5110's "EENNFFOORRCCEEDD FFOORR AALLLL AACCCCEESSSS")."""
    pdf = _pdf()
    rows = [["Clause", "Meaning"], ["ENFORCED", "always applies"], ["ENABLE", "starts enabled"], ["DISABLE", "starts off"]]
    x, top, h = (60, 200, 400), 100, 20
    for i in range(len(rows) + 1):
        pdf.line(x[0], top + i * h, x[-1], top + i * h)
    for v in x:
        pdf.line(v, top, v, top + h * len(rows))
    for r, row in enumerate(rows):
        for c, value in enumerate(row):
            for _ in range(2 if c == 0 else 1):  # the first column drawn twice, exactly on itself
                pdf.text(x[c] + 4, top + r * h + 14, value)
    doc = extract_bytes(bytes(pdf.output()), "twice.pdf", "application/pdf")
    (table,) = _tables(doc)
    assert "| ENFORCED | always applies |" in table and "EENN" not in table
