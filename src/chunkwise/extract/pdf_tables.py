"""Ruled tables on PDF pages, found with pdfplumber (MIT; pdfminer.six underneath).

pypdf reads a table column by column or cell by cell in stream order, so its rows are lost.
pdfplumber's table finder rebuilds the grid from the drawn rules. pdfminer is slow (pure Python
layout analysis), so only pages that draw enough rules for a grid are handed to it; the rest of the
document never pays for it. A table's lines are then taken out of the page's text flow and the
table is written as pipe rows in their place, so the table chunker repeats its header.
"""
from __future__ import annotations

import io
from typing import NamedTuple

MIN_RULES = 6  # a 2x2 grid draws at least this many rules
MAX_TABLE_PAGES = 200  # pages handed to pdfplumber per document (each costs ~50 ms)
SLACK = 3.0  # points of tolerance around a table's box


class Table(NamedTuple):
    top: float  # distance from the page's top edge, points (pdfplumber's coordinates)
    bottom: float
    x0: float
    x1: float
    rows: list[list[str]]


def find_tables(data: bytes, pages: list[int], warnings: list[str]) -> dict[int, list[Table]]:
    """0-based page index → its tables with at least two rows and two columns."""
    if not pages:
        return {}
    try:
        import pdfplumber
    except ImportError:
        warnings.append("pdfplumber is not installed (pip install 'chunkwise[pdf]'): ruled tables "
                        "are read as lines of text")
        return {}
    if len(pages) > MAX_TABLE_PAGES:
        warnings.append(f"{len(pages)} pages draw rules; tables looked for on the first {MAX_TABLE_PAGES} only")
        pages = pages[:MAX_TABLE_PAGES]
    out: dict[int, list[Table]] = {}
    try:
        with pdfplumber.open(io.BytesIO(data), pages=[p + 1 for p in pages]) as doc:
            for index, page in zip(pages, doc.pages):
                found = _page_tables(page)
                if found:
                    out[index] = found
    except Exception as exc:  # noqa: BLE001 - pdfminer raises anything on a hostile file; text stays
        warnings.append(f"table detection failed ({type(exc).__name__}); tables read as lines of text")
        return {}
    return out


def _page_tables(page) -> list[Table]:
    found = []
    for table in page.find_tables():
        rows = [[_cell(c) for c in row] for row in table.extract()]
        rows = [r for r in rows if any(r)]
        if len(rows) >= 2 and max(len(r) for r in rows) >= 2:
            x0, top, x1, bottom = table.bbox
            found.append(Table(float(top), float(bottom), float(x0), float(x1), rows))
    return found


def _cell(value) -> str:
    return " ".join(str(value or "").split())


def inside(table: Table, x: float | None, y: float | None, page_top: float) -> bool:
    """Whether a line starting at (x, baseline y in PDF space) lies in the table's box."""
    if x is None or y is None:
        return False
    top = page_top - y
    return (table.top - SLACK <= top <= table.bottom + SLACK
            and table.x0 - SLACK <= x <= table.x1 + SLACK)
