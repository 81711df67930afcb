"""``pdf_cells.table_text`` is pdfplumber's ``Table.extract`` (the same cell text, row by row),
without testing every character against every row."""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chunkwise.extract.pdf_cells import table_text

from pdf_fixtures import TABLE, write_table_pdf  # noqa: E402

pdfplumber = pytest.importorskip("pdfplumber")


def test_a_ruled_table_reads_as_pdfplumber_reads_it(tmp_path):
    pytest.importorskip("fpdf")
    path = write_table_pdf(tmp_path / "table.pdf")
    with pdfplumber.open(path) as doc:
        tables = doc.pages[0].find_tables()
        assert tables
        for table in tables:
            assert table_text(table) == table.extract()
            assert table_text(table, char_dir_rotated="btt") == table.extract(char_dir_rotated="btt")
        assert [c for c in table_text(tables[0])[1] if c] == TABLE[1]


class _Page:
    """What ``Table.extract`` reads of a page: its characters."""

    def __init__(self, chars):
        self.chars = chars


_coord = st.integers(0, 12).map(float)  # few values: characters on cell edges, ties and empty cells


@st.composite
def _chars(draw):
    out = []
    for n in range(draw(st.integers(0, 40))):
        x0, top = draw(_coord), draw(_coord)
        w, h = draw(st.sampled_from([0.0, 0.5, 1.0, 2.0])), draw(st.sampled_from([0.0, 1.0, 2.0]))
        out.append({"text": "abcdefgh"[n % 8], "x0": x0, "x1": x0 + w, "top": top, "bottom": top + h,
                    "doctop": top, "upright": draw(st.booleans()), "width": w, "height": h,
                    "matrix": (1, 0, 0, 1, x0, top)})
    if draw(st.booleans()) and out:
        out[0] = {**out[0], "top": float("nan")}  # never in a box, for either
    return out


@st.composite
def _grid(draw):
    xs = sorted(draw(st.sets(_coord, min_size=2, max_size=5)))
    ys = sorted(draw(st.sets(_coord, min_size=2, max_size=5)))
    cells = [(a, t, b, u) for t, u in zip(ys, ys[1:]) for a, b in zip(xs, xs[1:])]
    keep = draw(st.lists(st.booleans(), min_size=len(cells), max_size=len(cells)))
    return [c for c, k in zip(cells, keep) if k] or cells[:1]


@settings(max_examples=200, deadline=None)
@given(_chars(), _grid())
def test_any_grid_reads_as_pdfplumber_reads_it(chars, cells):
    table = pdfplumber.table.Table(_Page(chars), cells)
    assert table_text(table) == table.extract()
