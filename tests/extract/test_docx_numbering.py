"""DOCX list and heading numbers computed from numbering.xml as Word draws them, and merged table
cells repeated under every column they cover (issue 27: DOCX heading and word recall)."""
from __future__ import annotations

import pytest

pytest.importorskip("docx")
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from docx_parts import build, p  # noqa: E402
from fixtures import assert_spans  # noqa: E402

from chunkwise.extract.docx import extract  # noqa: E402
from chunkwise.extract.docx_numbering import _format  # noqa: E402

NUM_NS = 'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"'


def _lvl(ilvl: int, fmt: str, text: str, start: int = 1, legal: bool = False) -> str:
    return (f'<w:lvl w:ilvl="{ilvl}"><w:start w:val="{start}"/><w:numFmt w:val="{fmt}"/>'
            f'{"<w:isLgl/>" if legal else ""}<w:lvlText w:val="{text}"/></w:lvl>')


def _numbering(abstracts: dict[int, str], nums: dict[int, tuple[int, str]]) -> tuple[str, str, str]:
    body = "".join(f'<w:abstractNum w:abstractNumId="{a}">{levels}</w:abstractNum>' for a, levels in abstracts.items())
    body += "".join(f'<w:num w:numId="{n}"><w:abstractNumId w:val="{a}"/>{extra}</w:num>'
                    for n, (a, extra) in nums.items())
    return ("numbering", "word/numbering.xml", f"<w:numbering {NUM_NS}>{body}</w:numbering>")


def _item(text: str, num: int, ilvl: int = 0, style: str = "") -> str:
    return p(text, style, ppr=f'<w:numPr><w:ilvl w:val="{ilvl}"/><w:numId w:val="{num}"/></w:numPr>')


OUTLINE = _lvl(0, "decimal", "%1.") + _lvl(1, "lowerLetter", "%2)") + _lvl(2, "lowerRoman", "%1.%2.%3")
BULLETS = _lvl(0, "bullet", "\u2022")


def _texts(doc):
    return [doc.text[b.start : b.end] for b in doc.blocks]


def test_ordered_lists_nest_restart_and_skip_bullets():
    body = (_item("Plan", 1) + _item("Budget", 1, 1) + _item("Staff", 1, 1) + _item("Detail", 1, 2)
            + _item("Build", 1) + _item("Tools", 1, 1) + _item("A point", 2) + _item("Ship", 1))
    parts = {"rIdN": _numbering({0: OUTLINE, 1: BULLETS}, {1: (0, ""), 2: (1, "")})}
    doc = extract(build(body, parts), "n.docx")
    assert _texts(doc) == ["1. Plan", "a) Budget", "b) Staff", "1.b.i Detail", "2. Build", "a) Tools",
                           "A point", "3. Ship"]
    assert [b.kind for b in doc.blocks] == ["list_item"] * 8
    assert_spans(doc)


def test_instances_of_one_definition_continue_unless_restarted():
    override = '<w:lvlOverride w:ilvl="0"><w:startOverride w:val="1"/></w:lvlOverride>'
    body = _item("one", 1) + _item("two", 1) + p("Between.") + _item("three", 2) + _item("again", 3)
    parts = {"rIdN": _numbering({0: OUTLINE}, {1: (0, ""), 2: (0, ""), 3: (0, override)})}
    assert _texts(extract(build(body, parts), "c.docx")) == ["1. one", "2. two", "Between.", "3. three", "1. again"]


def test_numbered_heading_styles_carry_their_number():
    legal = _lvl(0, "upperRoman", "%1", legal=False) + _lvl(1, "decimal", "%1.%2", legal=True)
    styles_extra = ('<w:style w:type="paragraph" w:styleId="H1"><w:name w:val="heading 1"/><w:pPr><w:numPr>'
                    '<w:numId w:val="1"/></w:numPr></w:pPr></w:style>'
                    '<w:style w:type="paragraph" w:styleId="H2"><w:name w:val="heading 2"/><w:pPr><w:numPr>'
                    '<w:ilvl w:val="1"/><w:numId w:val="1"/></w:numPr></w:pPr></w:style>')

    def add_styles(files):
        files["word/styles.xml"] = files["word/styles.xml"].replace(b"</w:styles>", styles_extra.encode() + b"</w:styles>")

    body = (p("Scope", "H1") + p("Terms", "H2") + p("Rules", "H2") + p("Method", "H1") + p("Data", "H2")
            + p("Unnumbered", "H1", ppr='<w:numPr><w:numId w:val="0"/></w:numPr>'))
    doc = extract(build(body, {"rIdN": _numbering({0: legal}, {1: (0, "")})}, mutate=add_styles), "h.docx")
    heads = [(b.text, b.level) for b in doc.blocks if b.kind == "heading"]
    assert heads == [("I Scope", 1), ("1.1 Terms", 2), ("1.2 Rules", 2), ("II Method", 1), ("2.1 Data", 2),
                     ("Unnumbered", 1)]


def test_a_skipped_level_prints_its_start_and_counts_on():
    body = _item("Top", 1) + _item("Deep", 1, 2) + _item("Middle", 1, 1)
    doc = extract(build(body, {"rIdN": _numbering({0: OUTLINE}, {1: (0, "")})}), "s.docx")
    assert _texts(doc) == ["1. Top", "1.a.i Deep", "b) Middle"]


def test_numbering_that_points_nowhere_is_ignored():
    body = _item("ghost", 7) + _item("no level", 1, 5)
    doc = extract(build(body, {"rIdN": _numbering({0: OUTLINE}, {1: (0, "")})}), "g.docx")
    assert _texts(doc) == ["ghost", "no level"]


def test_horizontal_spans_repeat_and_late_rows_keep_their_columns():
    def tc(text, span=1):
        pr = f'<w:tcPr><w:gridSpan w:val="{span}"/></w:tcPr>' if span > 1 else ""
        return f"<w:tc>{pr}{p(text)}</w:tc>"

    tbl = ("<w:tbl><w:tr>" + tc("A") + tc("B") + tc("C") + "</w:tr>"
           "<w:tr>" + tc("x") + tc("Merged", 2) + "</w:tr>"
           '<w:tr><w:trPr><w:gridBefore w:val="2"/></w:trPr>' + tc("late") + "</w:tr></w:tbl>")
    doc = extract(build(tbl), "t.docx")
    assert doc.text == "| A | B | C |\n| --- | --- | --- |\n| x | Merged | Merged |\n|  |  | late |"


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 5000), st.sampled_from(["decimal", "lowerLetter", "upperLetter", "lowerRoman", "upperRoman",
                                               "decimalZero"]))
def test_formats_are_distinct_and_ordered(n, fmt):
    """A label is non-empty and differs from the next number's: two items never read alike."""
    a, b = _format(n, fmt), _format(n + 1, fmt)
    assert a and a != b
    if fmt in ("decimal", "decimalZero"):
        assert int(a) == n
    if fmt == "lowerLetter" and n <= 26:
        assert a == "abcdefghijklmnopqrstuvwxyz"[n - 1]
    if fmt == "upperRoman" and n < 4000:
        assert a.isupper() and set(a) <= set("MDCLXVI")


C_URI = "http://schemas.openxmlformats.org/drawingml/2006/chart"


def _series(name: str, cats: list[str], vals: list[str]) -> str:
    pts = lambda xs: "".join(f'<c:pt idx="{i}"><c:v>{x}</c:v></c:pt>' for i, x in enumerate(xs))  # noqa: E731
    return (f"<c:ser><c:tx><c:strRef><c:strCache>{pts([name])}</c:strCache></c:strRef></c:tx>"
            f"<c:cat><c:strRef><c:strCache>{pts(cats)}</c:strCache></c:strRef></c:cat>"
            f"<c:val><c:numRef><c:numCache>{pts(vals)}</c:numCache></c:numRef></c:val></c:ser>")


def test_a_chart_becomes_its_caption_and_data_table_after_its_paragraph():
    chart = (f'<c:chartSpace xmlns:c="{C_URI}" xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main">'
             "<c:chart><c:plotArea><c:barChart>"
             + _series("Revenue", ["2023", "2024"], ["1.2", "4.4000000000000004"])
             + _series("Cost", ["2023", "2024"], ["0.5", "0.7"])
             + "</c:barChart></c:plotArea></c:chart></c:chartSpace>")
    drawing = (f'<w:r><w:drawing><wp:inline><a:graphic><a:graphicData><c:chart xmlns:c="{C_URI}" r:id="rIdC"/>'
               "</a:graphicData></a:graphic></wp:inline></w:drawing></w:r>")
    doc = extract(build(p("Results", extra=drawing) + p("After."), {"rIdC": ("chart", "word/charts/chart1.xml", chart)}),
                  "c.docx")
    assert _texts(doc) == ["Results", "Bar chart",
                           "|  | Revenue | Cost |\n| --- | --- | --- |\n| 2023 | 1.2 | 0.5 |\n| 2024 | 4.4 | 0.7 |",
                           "After."]
    assert [b.meta.get("role") for b in doc.blocks] == [None, "chart", "chart", None]
    assert_spans(doc)


def test_check_boxes_read_by_state_and_numbered_lists_in_cells_keep_numbers():
    w14 = 'xmlns:w14="http://schemas.microsoft.com/office/word/2010/wordml"'

    def box(checked: str) -> str:  # the glyph is a private-use character of a symbol font: useless as text
        return (f'<w:sdt {w14}><w:sdtPr><w14:checkbox><w14:checked w14:val="{checked}"/></w14:checkbox></w:sdtPr>'
                '<w:sdtContent><w:r><w:t>\uf0fe</w:t></w:r></w:sdtContent></w:sdt>')

    body = (f'<w:p>{box("1")}<w:r><w:t xml:space="preserve"> Design</w:t></w:r></w:p>'
            f'<w:p>{box("0")}<w:r><w:t xml:space="preserve"> Docs</w:t></w:r></w:p>'
            "<w:tbl><w:tr><w:tc>" + p("Steps") + "</w:tc></w:tr><w:tr><w:tc>" + _item("Open", 1) + _item("Close", 1)
            + "</w:tc></w:tr></w:tbl>")
    doc = extract(build(body, {"rIdN": _numbering({0: OUTLINE}, {1: (0, "")})}), "b.docx")
    assert _texts(doc) == ["[x] Design", "[ ] Docs", "| Steps |\n| --- |\n| 1. Open 2. Close |"]
