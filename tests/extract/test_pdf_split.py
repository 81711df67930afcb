"""A PDF's pages scanned in ranges (``pdf.scan``, each range in another worker) and joined
(``pdf.extract_scans``) give exactly the Document one pass gives: blocks, headings (font statistics
over every page), tables, page labels, warnings. Ingest relies on it to share a big PDF among its
workers and still build the same store (``pipeline/split.py``)."""
from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytest.importorskip("pypdf")
pytest.importorskip("fpdf")

from pdf_fixtures import write_long_pdf, write_outline_pdf, write_paper_pdf, write_table_pdf  # noqa: E402

from chunkwise.extract import ExtractOptions, extract_bytes, pdf  # noqa: E402
from chunkwise.extract.pdf import extract_scans as extract_pdf_scans  # noqa: E402

PDF = "application/pdf"
PAGES = 64


@pytest.fixture(scope="module")
def long_pdf(tmp_path_factory):
    data = write_long_pdf(tmp_path_factory.mktemp("split") / "long.pdf", pages=PAGES).read_bytes()
    return data, extract_bytes(data, "long.pdf", PDF, ExtractOptions())


def joined(data: bytes, name: str, bounds: list[int]):
    scans = [pdf.scan(data, name, a, b) for a, b in zip(bounds, bounds[1:])]
    return extract_pdf_scans(data, name, scans, ExtractOptions())


def test_the_long_fixture_has_what_a_range_alone_cannot_tell(long_pdf):
    _, whole = long_pdf
    kinds = {(b.kind, b.level) for b in whole.blocks}
    assert ("heading", 1) in kinds and ("heading", 2) in kinds and ("table", 0) in kinds
    assert pdf.page_count(long_pdf[0], "long.pdf") == PAGES


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.integers(1, PAGES - 1), max_size=5, unique=True))
def test_any_page_ranges_give_the_document_of_one_pass(long_pdf, cuts):
    data, whole = long_pdf
    assert joined(data, "long.pdf", [0, *sorted(cuts), PAGES]) == whole


@pytest.mark.parametrize("write", [write_outline_pdf, write_paper_pdf, write_table_pdf])
def test_every_page_apart_gives_the_document_of_one_pass(tmp_path, write):
    """Outline headings and page labels, a two-column paper, a ruled table: one range per page."""
    data = write(tmp_path / "f.pdf").read_bytes()
    whole = extract_bytes(data, "f.pdf", PDF, ExtractOptions())
    n = pdf.page_count(data, "f.pdf")
    assert joined(data, "f.pdf", list(range(n + 1))) == whole


def test_scans_that_miss_pages_or_come_out_of_order_are_refused(long_pdf):
    data, _ = long_pdf
    first, second = pdf.scan(data, "long.pdf", 0, 10), pdf.scan(data, "long.pdf", 10, PAGES)
    with pytest.raises(ValueError, match="out of order"):
        extract_pdf_scans(data, "long.pdf", [second, first])
    with pytest.raises(ValueError, match="cover 10 of 64"):
        extract_pdf_scans(data, "long.pdf", [first])
