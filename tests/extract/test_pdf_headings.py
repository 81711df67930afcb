"""PDF headings at body size (issue 27 item 2): an italic title-case line standing alone in a roman
text, a bold line set apart by a wider gap; not a paragraph that opens with a bold name; headings in
scripts without capitals; a heading wrapped over two sizes is one heading; a long heading line that
crosses the page middle is not cut into two columns."""
from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

pytest.importorskip("pypdf")
fpdf = pytest.importorskip("fpdf")

from chunkwise.extract import pdf  # noqa: E402

DEJAVU = Path("/usr/share/fonts/truetype/dejavu")
BODY = ("The spring keeps the locking and load carrying sections such a distance apart that the two sets "
        "of threads are out of phase, so a bolt screwed through must push the locking section outward. ")


def _doc():
    d = fpdf.FPDF(unit="pt", format="a4")
    d.set_auto_page_break(False)
    d.add_page()
    return d


def _para(d, y, text=BODY * 2, x=60, width=470):
    d.set_font("Times", size=10)
    d.set_xy(x, y)
    d.multi_cell(width, 12.5, text)
    return d.get_y()


def _heads(d):
    doc = pdf.extract(bytes(d.output()), "h.pdf")
    return [(doc.text[b.start:b.end], b.level) for b in doc.blocks if b.kind == "heading"], doc


def test_an_italic_title_case_line_alone_is_a_heading_an_italic_sentence_is_not():
    d = _doc()
    y = _para(d, 60)
    d.set_font("Times", "I", 10)
    d.text(60, y + 20, "Boots Self-Locking Nut")
    y = _para(d, y + 26)
    d.set_font("Times", "I", 10)
    d.text(60, y + 20, "see the figure below for the parts")
    _para(d, y + 26)
    heads, _ = _heads(d)
    assert [h for h, _ in heads] == ["Boots Self-Locking Nut"]


def test_a_bold_line_set_apart_is_a_heading_a_paragraph_opening_with_a_bold_name_is_not():
    d = _doc()
    y = _para(d, 60)
    d.set_font("Times", "B", 10)
    d.text(60, y + 22, "We build confident, satisfied clients")
    y = _para(d, y + 28)
    d.set_font("Times", "B", 10)
    d.text(60, y + 22, "Jim Bainbridge is a senior consultant on the harbour ledgers team in the")
    d.set_font("Times", size=10)
    d.text(60, y + 34.5, "Lab Services and Training organization, where he keeps the tide tables of")
    d.text(60, y + 47, "the northern harbours up to date for the clerks.")
    heads, _ = _heads(d)
    assert [h for h, _ in heads] == ["We build confident, satisfied clients"]


@pytest.mark.skipif(not (DEJAVU / "DejaVuSans-Bold.ttf").is_file(), reason="DejaVu fonts absent")
def test_a_heading_in_a_script_without_capitals_is_found():
    d = _doc()
    d.add_font("DejaVu", "", str(DEJAVU / "DejaVuSans.ttf"))
    d.add_font("DejaVu", "B", str(DEJAVU / "DejaVuSans-Bold.ttf"))
    d.set_font("DejaVu", size=10)
    for i in range(6):
        d.text(60, 60 + 12.5 * i, "שלום לכולם וברוכים הבאים לנמל הצפוני של העיר הישנה " + str(i))
    d.set_font("DejaVu", "B", 10)
    d.text(60, 160, "תקנות הנמל")
    d.set_font("DejaVu", size=10)
    for i in range(6):
        d.text(60, 176 + 12.5 * i, "הספינות נכנסות לנמל רק באור יום ובליווי של סירת גרר " + str(i))
    heads, _ = _heads(d)
    assert len(heads) == 1  # before: refused for not starting with a capital
    assert sorted(heads[0][0].replace(" ", "")) == sorted("תקנותהנמל")  # (fpdf2 draws it in visual order)


def test_a_title_wrapped_in_two_sizes_is_one_heading():
    d = _doc()
    d.set_font("Helvetica", "B", 33)
    d.text(40, 80, "Row and Column Access")
    d.set_font("Helvetica", "B", 30)
    d.text(40, 114, "Support in the Harbour")
    _para(d, 150)
    heads, _ = _heads(d)
    assert [h for h, _ in heads] == ["Row and Column Access Support in the Harbour"]


def test_a_long_heading_across_the_middle_of_a_one_column_page_stays_whole():
    d = _doc()
    y = 60.0
    names = ["The Birth of Word Processing", "The Rise of the Personal Computer Age", "The Modern Era of Writing",
             "A Glimpse into the Future of Our Word Processors"]
    for name in names:  # long bold headings drawn in two pieces, the second past the middle, each at its own x
        d.set_font("Times", "B", 13.5)
        d.text(72, y, f"{name} (1960s -")
        d.text(72 + d.get_string_width(f"{name} (1960s - "), y, "1970s)")
        y = _para(d, y + 8, BODY) + 24
    heads, doc = _heads(d)
    assert [h for h, _ in heads] == [f"{name} (1960s - 1970s)" for name in names]  # before: "(1960s -" alone


def test_respace_cuts_glued_words_apart_only_where_the_word_boxes_say():
    from chunkwise.extract.pdf_headings import respace

    assert respace("들어가며1", ["1", "들어가며"]) == "들어가며 1"  # a badge number drawn back to the left
    assert respace("Key  Features", ["Key", "Features"]) == "Key Features"
    assert respace("H2O levels", ["H2O", "levels"]) == "H2O levels"
    assert respace("들어가며1", ["들어가며"]) == "들어가며1"  # a part that is no word: unchanged
    assert respace("", []) == ""


@given(st.lists(st.text(alphabet="abc가나1", min_size=1, max_size=4), min_size=1, max_size=6))
def test_respace_keeps_every_character_in_order(words):
    from chunkwise.extract.pdf_headings import respace

    glued = "".join(words)
    out = respace(glued, words)
    assert out.replace(" ", "") == glued  # only spaces are ever added
