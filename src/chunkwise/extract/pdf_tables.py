"""Ruled tables on PDF pages, found with pdfplumber (MIT; pdfminer.six underneath).

pypdf reads a table column by column or cell by cell in stream order, so its rows are lost.
pdfplumber's table finder rebuilds the grid from the drawn rules. pdfminer is slow (pure Python
layout analysis), so only pages that draw enough rules for a grid are handed to it; the rest of the
document never pays for it. A table's lines are then taken out of the page's text flow and the
table is written as pipe rows in their place, so the table chunker repeats its header.

A hostile page (millions of tiny rules, a content stream built to make layout analysis crawl) must
not hang an in-process ``chunkwise chunk``: each page gets ``PAGE_SECONDS`` and the document
``TOTAL_SECONDS``, enforced by a ``SIGALRM`` timer (pdfminer is pure Python, so the alarm interrupts
it wherever it is); a page over its time keeps its text as lines, with a warning. Off the main
thread (no signals there) only the document budget applies, checked between pages; the ingest
worker pool's wall-time limit covers that case.
"""
from __future__ import annotations

import io
import signal
import threading
import time
from contextlib import contextmanager
from typing import NamedTuple

MIN_RULES = 6  # a 2x2 grid draws at least this many rules
MAX_TABLE_PAGES = 200  # pages handed to pdfplumber per document (each costs ~50 ms)
PAGE_SECONDS = 10.0  # pdfplumber's time on one page (a real grid page takes well under a second)
TOTAL_SECONDS = 60.0  # and on one document
SLACK = 3.0  # points of tolerance around a table's box


class _Overtime(BaseException):
    """Raised by the alarm: a BaseException, so no ``except Exception`` inside pdfminer swallows it."""


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
    stop = time.monotonic() + TOTAL_SECONDS
    try:
        with _limit(TOTAL_SECONDS), pdfplumber.open(io.BytesIO(data), pages=[p + 1 for p in pages]) as doc:
            for index, page in zip(pages, doc.pages):
                left = stop - time.monotonic()
                if left <= 0:
                    raise _Overtime
                try:
                    with _limit(min(PAGE_SECONDS, left)):
                        found = _page_tables(page)
                except _Overtime:
                    if time.monotonic() >= stop:
                        raise
                    warnings.append(f"page {index + 1}: table detection took over {PAGE_SECONDS:.0f} s; "
                                    "its tables read as lines of text")
                    continue
                if found:
                    out[index] = found
    except _Overtime:
        warnings.append(f"table detection stopped after {TOTAL_SECONDS:.0f} s; tables on the pages left "
                        "read as lines of text")
    except Exception as exc:  # noqa: BLE001 - pdfminer raises anything on a hostile file; text stays
        warnings.append(f"table detection failed ({type(exc).__name__}); tables read as lines of text")
        return {}
    return out


@contextmanager
def _limit(seconds: float):
    """Raise ``_Overtime`` in this thread after ``seconds`` (main thread only; elsewhere a no-op).
    Nests: an outer timer is restored, and fires at once if it ran out meanwhile."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    start = time.monotonic()
    outer_delay, _ = signal.getitimer(signal.ITIMER_REAL)
    delay = min(seconds, outer_delay) if outer_delay else seconds

    def fire(signum, frame):
        raise _Overtime

    previous = signal.signal(signal.SIGALRM, fire)
    signal.setitimer(signal.ITIMER_REAL, max(delay, 1e-3))
    try:
        yield
    finally:
        while True:  # the alarm may fire while it is being disarmed: the work is done by then
            try:
                signal.setitimer(signal.ITIMER_REAL, 0)
                break
            except _Overtime:
                continue
        signal.signal(signal.SIGALRM, signal.SIG_DFL if previous is None else previous)
        if outer_delay:
            signal.setitimer(signal.ITIMER_REAL, max(outer_delay - (time.monotonic() - start), 1e-3))


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
