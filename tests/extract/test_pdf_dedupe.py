"""``pdf_dedupe.dedupe_chars`` is pdfplumber's ``Page.dedupe_chars`` (same characters, same order),
without its quadratic ``sorted(key=chars.index)``."""
from __future__ import annotations

import pytest

from chunkwise.extract.pdf_dedupe import _Indexed, dedupe_chars


def test_index_means_what_list_index_means():
    a = {"text": "a", "x0": 1.0, "doctop": 2.0}
    copy = dict(a)  # equal, not the same object: list.index finds the first equal one
    b = {"text": "b", "x0": 1.0, "doctop": 2.0}
    chars = _Indexed([a, b, copy])
    assert [chars.index(c) for c in (a, b, copy)] == [list.index(chars, c) for c in (a, b, copy)] == [0, 1, 0]
    with pytest.raises(ValueError):
        chars.index({"text": "z", "x0": 0.0, "doctop": 0.0})


def test_an_overprinted_page_is_deduplicated_exactly_as_pdfplumber_does(tmp_path):
    pdfplumber = pytest.importorskip("pdfplumber")
    fpdf = pytest.importorskip("fpdf")
    pdf = fpdf.FPDF()
    pdf.add_page()
    pdf.set_font("Helvetica", size=11)
    for row in range(30):
        line = f"Row {row} of the harbour ledger: {row * 17} barrels"
        pdf.text(20, 20 + row * 8, line)
        if row % 2 == 0:  # bold faked by drawing again on the spot (and a hair to the right)
            pdf.text(20, 20 + row * 8, line)
            pdf.text(20.2, 20 + row * 8, line)
    path = tmp_path / "overprinted.pdf"
    pdf.output(str(path))
    with pdfplumber.open(path) as doc:
        page = doc.pages[0]
        theirs = page.dedupe_chars().chars
        ours = dedupe_chars(page).chars
        assert len(ours) < len(page.chars)
        assert ours == theirs
        assert [id(c) for c in ours] == [id(c) for c in theirs]  # the very same objects, in the same order
        assert dedupe_chars(page).extract_text() == page.dedupe_chars().extract_text()
