"""DOCX equations (Office Math) as linear text in place, and tables nested in a cell kept in that cell,
marked (issue 27 item 5)."""
from __future__ import annotations

import pytest

pytest.importorskip("docx")

from docx_parts import build, p  # noqa: E402

from chunkwise.extract.docx import extract  # noqa: E402
from chunkwise.extract.omml import linear  # noqa: E402

M = "http://schemas.openxmlformats.org/officeDocument/2006/math"


def r(text: str) -> str:
    return f"<m:r><m:t>{text}</m:t></m:r>"


QUADRATIC = (  # x = (-b ± √(b^2 - 4ac)) / (2a)
    f'<m:oMath xmlns:m="{M}">{r("x=")}<m:f><m:num>{r("-b±")}<m:rad><m:radPr><m:degHide m:val="1"/></m:radPr>'
    f'<m:deg/><m:e><m:sSup><m:e>{r("b")}</m:e><m:sup>{r("2")}</m:sup></m:sSup>{r("-4ac")}</m:e></m:rad></m:num>'
    f'<m:den>{r("2a")}</m:den></m:f></m:oMath>')
SUM = (f'<m:oMath xmlns:m="{M}"><m:nary><m:naryPr><m:chr m:val="∑"/></m:naryPr><m:sub>{r("i=1")}</m:sub>'
       f'<m:sup>{r("n")}</m:sup><m:e><m:sSub><m:e>{r("x")}</m:e><m:sub>{r("i")}</m:sub></m:sSub></m:e></m:nary>'
       f'<m:d><m:dPr><m:begChr m:val="["/><m:endChr m:val="]"/></m:dPr><m:e>{r("a")}</m:e><m:e>{r("b")}</m:e></m:d>'
       f'</m:oMath>')


def test_equations_are_kept_in_place_as_linear_text():
    body = p("The roots are", extra=QUADRATIC) + p("Totals:", extra=SUM) + p("After the maths.")
    doc = extract(build(body), "maths.docx")
    lines = [doc.text[b.start:b.end] for b in doc.blocks]
    assert lines[0] == "The roots arex=(-b±√(b^2-4ac))/(2a)"
    assert lines[1] == "Totals:∑_(i=1)^n x_i[a|b]"
    assert lines[2] == "After the maths."


def test_linear_forms():
    from lxml import etree

    assert linear(etree.fromstring(QUADRATIC)) == "x=(-b±√(b^2-4ac))/(2a)"
    para = etree.fromstring(f'<m:oMathPara xmlns:m="{M}">{QUADRATIC}{SUM}</m:oMathPara>')
    assert linear(para) == "x=(-b±√(b^2-4ac))/(2a) ∑_(i=1)^n x_i[a|b]"
    unknown = etree.fromstring(f'<m:oMath xmlns:m="{M}"><m:groupChr><m:e>{r("y+z")}</m:e></m:groupChr></m:oMath>')
    assert linear(unknown) == "y+z"  # unknown structure: its typed text is never lost


def test_a_nested_table_stays_in_its_cell():
    inner = ("<w:tbl><w:tr><w:tc>" + p("Q1") + "</w:tc><w:tc>" + p("Q2") + "</w:tc></w:tr>"
             "<w:tr><w:tc>" + p("10") + "</w:tc><w:tc>" + p("12") + "</w:tc></w:tr></w:tbl>")
    outer = ("<w:tbl><w:tr><w:tc>" + p("Region") + "</w:tc><w:tc>" + p("Quarters") + "</w:tc></w:tr>"
             "<w:tr><w:tc>" + p("North") + "</w:tc><w:tc>" + p("Sales by quarter") + inner + "</w:tc></w:tr></w:tbl>")
    doc = extract(build(outer + p("Closing.")), "nested.docx")
    tables = [doc.text[b.start:b.end] for b in doc.blocks if b.kind == "table"]
    assert len(tables) == 1
    assert "| North | Sales by quarter [table: Q1 \\| Q2 ; 10 \\| 12] |" in tables[0]
    assert doc.text.count("Q1") == 1  # once, in its cell, not flattened into the outer row too
