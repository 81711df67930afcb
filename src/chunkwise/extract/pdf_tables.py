"""Ruled tables on PDF pages, found with pdfplumber (MIT; pdfminer.six underneath).

pypdf reads a table column by column or cell by cell in stream order, so its rows are lost.
pdfplumber's table finder rebuilds the grid from the drawn rules. pdfminer is slow (pure Python
layout analysis), so only pages that draw enough rules for a table, or whose text lines end in figures
or dot leaders (``pdf_aligned.candidate``: statements, tables of contents), are handed to it; the rest
of the document never pays for it. On those pages, tables without rules are then found from how the
words line up (``pdf_aligned``). A table's lines are then taken out of the page's text flow and the
table is written as pipe rows in their place, so the table chunker repeats its header.

Tables as reports draw them: a table ruled only across gets its missing outer sides
(``outer_sides``), and one ruled only above, under its header and below (booktabs) its columns from
how its words line up; text turned a quarter anticlockwise reads upwards; right-to-left cells come in
visual order and are turned to logical order, and a right-to-left table starts at its right.

**The work is bounded by what it does, not by the clock**, so the same file gives the same chunks
whatever the machine's load: pdfminer's cost grows with a page's drawn rules and characters, so a
page with more than ``MAX_PAGE_RULES`` rules or ``MAX_PAGE_CHARS`` characters is not handed to it,
and a document's table pages stop once their rules and characters add up to ``MAX_DOC_WORK`` — each
with a warning (in the run's output and ``audit``), the same on every machine. A real ruled page
(a 10-K statement: ~600 rules, ~5,000 characters) is far inside these bounds.

The clock stays only as a last guard against a page built to make layout analysis crawl inside
those bounds: ``PAGE_SECONDS`` a page and ``TOTAL_SECONDS`` a document, enforced by a ``SIGALRM``
timer on the main thread (pdfminer is pure Python, so the alarm interrupts it wherever it is). Hitting
it is a warning that says the output may differ between runs; off the main thread (no signals) only
the document guard applies, between pages, and the ingest worker's wall-time limit covers the rest.
"""
from __future__ import annotations

import contextlib
import io
import re
import signal
import threading
import time
from contextlib import contextmanager
from typing import NamedTuple

from chunkwise.extract import pdf_aligned
from chunkwise.extract.pdf_cells import table_text
from chunkwise.extract.pdf_dedupe import dedupe_chars

MIN_RULES = 3  # a booktabs table draws three rules (a 2x2 grid at least six)
MAX_TABLE_PAGES = 200  # pages handed to pdfplumber per document (each costs ~50 ms)
MAX_PAGE_RULES = 20_000  # drawn rules on one page handed to pdfplumber
MAX_PAGE_CHARS = 60_000  # characters on one page handed to pdfplumber
MAX_DOC_WORK = 1_500_000  # rules + characters over all of a document's table pages
PAGE_SECONDS = 60.0  # the last guard on one page (a real grid page takes well under a second)
TOTAL_SECONDS = 300.0  # and on one document
OVERPRINT_MIN = 10  # characters drawn twice on one spot before a page is de-duplicated
SLACK = 3.0  # points of tolerance around a table's box
SIDE_MIN_RULES = 3  # horizontal rules of one width that make an open-sided table (outer_sides)
SIDE_MIN_WIDTH = 40.0  # points: shorter rules are underlines, not table rules
SIDE_SNAP = 2.0  # points: rules whose ends agree this closely share a width
TEXT_MIN_ROWS = 3  # rows a booktabs table's text must line up into (_columns_from_text)


class _Overtime(BaseException):
    """Raised by the alarm: a BaseException, so no ``except Exception`` inside pdfminer swallows it."""


class Table(NamedTuple):
    top: float  # distance from the page's top edge, points (pdfplumber's coordinates)
    bottom: float
    x0: float
    x1: float
    rows: list[list[str]]


def within_bounds(work: dict[int, tuple[int, int]], warnings: list[str]) -> list[int]:
    """The pages (0-based) whose (rules, characters) pdfplumber may read, in order: each page within
    the per-page bounds, all of them within the document's, at most ``MAX_TABLE_PAGES``. Pure: the
    same pages for the same file, whatever the machine."""
    chosen, total = [], 0
    for index in sorted(work):
        rules, chars = work[index]
        if rules > MAX_PAGE_RULES or chars > MAX_PAGE_CHARS:
            warnings.append(f"page {index + 1}: {rules} drawn rules and {chars} characters are over the table "
                            f"finder's bounds ({MAX_PAGE_RULES} rules, {MAX_PAGE_CHARS} characters a page); "
                            "its tables read as lines of text")
            continue
        if len(chosen) == MAX_TABLE_PAGES or total + rules + chars > MAX_DOC_WORK:
            rest = sum(1 for i in work if i >= index)
            warnings.append(f"{rest} page(s) from page {index + 1} on draw rules past the "
                            f"table finder's document bounds ({MAX_TABLE_PAGES} pages, {MAX_DOC_WORK} rules and "
                            "characters); their tables read as lines of text")
            break
        chosen.append(index)
        total += rules + chars
    return chosen


class PageTables(NamedTuple):
    """One page's table detection as ``find_tables`` does it, done ahead (``page_tables``):
    ``found`` None when it failed (``warning`` says so), the words it read, what parsers said."""

    found: list | None
    words: list
    warning: str
    heard: tuple = ((), ())


def find_tables(data: bytes, pages: list[int] | dict[int, tuple[int, int]], warnings: list[str],
                words: dict[int, list[tuple[float, float, str]]] | None = None, known: dict | None = None,
                heard=None) -> dict[int, list[Table]]:
    """0-based page index → its tables with at least two rows and two columns. ``pages``: the
    candidate pages, each with its (drawn rules, characters) when known (then bounded by them).
    ``words``, when given, receives each page's words read on the way as (top, bottom, text).
    ``known``: pages already done (``page_tables``, in another process) -> their ``PageTables``,
    used where this would read them; ``heard(lines)`` receives their parser messages there."""
    drawn = {i: work[0] for i, work in pages.items()} if isinstance(pages, dict) else {}
    if isinstance(pages, dict):
        pages = within_bounds(pages, warnings)
    if not pages:
        return {}
    known = known or {}
    if any(p not in known for p in pages):
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
    left_to_read = [p for p in pages if p not in known]
    try:
        with _limit(TOTAL_SECONDS), contextlib.ExitStack() as scope:
            doc = scope.enter_context(pdfplumber.open(io.BytesIO(data), pages=[p + 1 for p in left_to_read])) \
                if left_to_read else None
            opened = iter(doc.pages) if doc is not None else iter(())
            for index in pages:
                if index in known:
                    done = known[index]
                    if words is not None:
                        words[index] = list(done.words)
                    if heard is not None:
                        heard(done.heard)
                    found, warning = done.found, done.warning
                else:
                    page = next(opened)
                    left = stop - time.monotonic()
                    if left <= 0:
                        raise _Overtime
                    found, warning = _read_page(page, index, drawn, words.setdefault(index, []) if words is not None
                                                else None, left, stop)
                if warning:
                    warnings.append(warning)
                elif found:
                    out[index] = found
    except _Overtime:
        warnings.append(f"table detection stopped after {TOTAL_SECONDS:.0f} s (the last guard: on a faster "
                        "or quieter machine more tables may be found); tables on the pages left read as lines of text")
    except Exception as exc:  # noqa: BLE001 - pdfminer raises anything on a hostile file; text stays
        warnings.append(f"table detection failed ({type(exc).__name__}); tables read as lines of text")
        return {}
    return out


def _read_page(page, index: int, drawn: dict, seen: list | None, left: float, stop: float
               ) -> tuple[list | None, str]:
    """One page's tables, or None and the warning saying why not. Raises ``_Overtime`` when the
    document's clock ran out."""
    try:
        with _limit(min(PAGE_SECONDS, left)):
            return _page_tables(page, seen, ruled=drawn.get(index, MIN_RULES) >= MIN_RULES), ""
    except Exception as exc:  # noqa: BLE001 - pdfminer raises anything on a hostile page
        return None, (f"page {index + 1}: table detection failed ({type(exc).__name__}); "
                      "its tables read as lines of text")
    except _Overtime:
        if time.monotonic() >= stop:
            raise
        return None, (f"page {index + 1}: table detection took over {PAGE_SECONDS:.0f} s (the last "
                      "guard: on a faster or quieter machine this page's tables may be found); "
                      "its tables read as lines of text")


def page_tables(data: bytes, pages: list[int], drawn: dict[int, int]) -> dict[int, PageTables]:
    """``find_tables``'s work on each of ``pages`` (0-based, with their drawn rules), done ahead
    in a process of its own (a page range of a big PDF), each page's parser messages apart. Only
    what ``find_tables`` would give exactly: a page that ran into a clock guard is left out, and
    nothing comes back when pdfplumber is missing or cannot read the file (``find_tables`` then
    reads those pages itself and says why)."""
    from chunkwise.extract.capture import captured_parts

    if not pages:
        return {}
    try:
        import pdfplumber
    except ImportError:
        return {}
    out: dict[int, PageTables] = {}
    stop = time.monotonic() + TOTAL_SECONDS
    try:
        with _limit(TOTAL_SECONDS), pdfplumber.open(io.BytesIO(data), pages=[p + 1 for p in pages]) as doc:
            for index, page in zip(pages, doc.pages):
                left = stop - time.monotonic()
                if left <= 0:
                    break
                seen: list = []
                with captured_parts() as heard:
                    found, warning = _read_page(page, index, drawn, seen, left, stop)
                if "took over" not in warning:
                    out[index] = PageTables(found, seen, warning, heard.lines())
    except _Overtime:
        pass  # the pages done are exact; find_tables reads the rest
    except Exception:  # noqa: BLE001 - find_tables meets the same failure and reports it
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


def _page_tables(page, seen: list | None = None, ruled: bool = True) -> list[Table]:
    """The page's ruled tables (when it draws ``MIN_RULES`` rules: a page sent here only for its
    aligned text is not searched for grids in its few rules), then tables its words line up into
    outside them (``pdf_aligned``). Characters drawn twice on the spot (bold faked by overprinting:
    "EENNFFOORRCCEEDD") are read once."""
    if _overprinted(page):  # dedupe_chars costs a third more on a big page: only when needed
        page = dedupe_chars(page)  # pdfplumber's, without its quadratic sort
    found = _ruled(page) if ruled and len(page.edges) >= MIN_RULES else []
    px0, ptop, px1, pbottom = page.bbox
    every = page.extract_words(extra_attrs=["size", "fontname"])
    if seen is not None:
        seen.extend((float(w["top"]), float(w["bottom"]), w["text"]) for w in every)
    words = [w for w in every
             if px0 <= w["x0"] and w["x1"] <= px1 and ptop <= w["top"] and w["bottom"] <= pbottom  # on the page
             and not any(t.top - SLACK <= w["top"] <= t.bottom + SLACK and t.x0 - SLACK <= w["x0"] <= t.x1 + SLACK
                        for t in found)]
    for top, bottom, x0, x1, rows in pdf_aligned.find(words):
        found.append(Table(top, bottom, x0, x1, right_to_left_columns([[_cell(c) for c in r] for r in rows])))
    return found


def _overprinted(page) -> bool:
    """Whether ``OVERPRINT_MIN`` characters or more are drawn again on the very spot of another."""
    seen, twice = set(), 0
    for c in page.chars:
        key = (c.get("text"), round(float(c["x0"]), 1), round(float(c["top"]), 1))
        if key in seen:
            twice += 1
            if twice >= OVERPRINT_MIN:
                return True
        seen.add(key)
    return False


def _ruled(page) -> list[Table]:
    sides = outer_sides(page.edges)
    found = []
    for table in page.find_tables({"explicit_vertical_lines": sides} if sides else {}):
        if _clipped(page, table.bbox) is None:
            continue  # drawn wholly off the page: nobody sees it
        rows = _rows(table)
        if len(rows) >= 2 and max(len(r) for r in rows) == 1 and sides:
            rows = _columns_from_text(page, table) or rows
        if len(rows) >= 2 and max(len(r) for r in rows) >= 2:
            x0, top, x1, bottom = table.bbox
            found.append(Table(float(top), float(bottom), float(x0), float(x1), rows))
    return found


def _rows(table) -> list[list[str]]:
    rows = [[_cell(c) for c in row] for row in table_text(table, **_directions(table))]
    return right_to_left_columns([r for r in rows if any(r)])


def right_to_left_columns(rows: list[list[str]]) -> list[list[str]]:
    """A table written right to left (most of its cells with letters hold right-to-left ones) starts
    at its rightmost column: each row is reversed, so its first cell is the one read first."""
    worded = [c for r in rows for c in r if any(ch.isalpha() for ch in c)]
    if not worded or sum(1 for c in worded if _RTL.search(c)) * 2 <= len(worded):
        return rows
    return [r[::-1] for r in rows]


def _columns_from_text(page, table) -> list[list[str]] | None:
    """A table ruled only across (booktabs: a rule above, one under the header, one below) is a grid
    of one column; its columns and rows are then read from how its words line up. Taken only when
    that gives at least ``TEXT_MIN_ROWS`` rows that each fill two cells or more."""
    inner = _within(page, table.bbox).find_tables({"vertical_strategy": "text", "horizontal_strategy": "text"})
    for candidate in inner:
        rows = _rows(candidate)
        if len(rows) >= TEXT_MIN_ROWS and all(sum(1 for c in r if c) >= 2 for r in rows):
            return rows
    return None


def outer_sides(edges: list[dict]) -> list[dict]:
    """The left and right sides of open-sided tables, as vertical edges for pdfplumber: a table ruled
    only across (reports, and papers' booktabs style) has no outer vertical line, and pdfplumber's
    grid then loses its first and last columns. ``SIDE_MIN_RULES`` horizontal rules of one width,
    starting and ending at the same x, are taken to be such a table, closed from its first rule to
    its last."""
    groups: dict[tuple[int, int], list[dict]] = {}
    for e in edges:
        if e.get("orientation") == "h" and e["x1"] - e["x0"] >= SIDE_MIN_WIDTH:
            groups.setdefault((round(e["x0"] / SIDE_SNAP), round(e["x1"] / SIDE_SNAP)), []).append(e)
    sides = []
    for rules in groups.values():
        tops = sorted({round(float(e["top"]), 1) for e in rules})
        if len(tops) < SIDE_MIN_RULES:
            continue
        top, bottom = tops[0], tops[-1]
        for x in (min(float(e["x0"]) for e in rules), max(float(e["x1"]) for e in rules)):
            sides.append({"x0": x, "x1": x, "top": top, "bottom": bottom, "height": bottom - top, "width": 0.0,
                          "orientation": "v", "object_type": "line"})
    return sides


def _clipped(page, bbox):
    """``bbox`` clipped to the page, or None when nothing of it is on the page."""
    x0, top, x1, bottom = bbox
    px0, ptop, px1, pbottom = page.bbox
    box = (max(x0, px0), max(top, ptop), min(x1, px1), min(bottom, pbottom))
    return box if box[0] < box[2] and box[1] < box[3] else None


def _within(page, bbox):
    """The page cropped to ``bbox`` clipped to the page: a table drawn past the page edge has a box
    pdfplumber refuses to crop to. Only called for a box with some of it on the page."""
    return page.crop(_clipped(page, bbox))


def _directions(table) -> dict:
    """Reading directions for pdfplumber's cell text. Text turned a quarter anticlockwise (a narrow
    column's header) reads bottom to top; pdfplumber reads all turned text top to bottom, so such a
    header came out backwards ("LTCBOJ*" for "*JOBCTL")."""
    turned = [c for c in _within(table.page, table.bbox).chars if not c.get("upright", True)]
    upward = sum(1 for c in turned if (c.get("matrix") or (0, 0))[1] > 0)
    return {"char_dir_rotated": "btt"} if turned and upward * 2 > len(turned) else {}


def _cell(value) -> str:
    """One line of text; each of the cell's lines turned to logical order on its own, so a wrapped
    right-to-left cell keeps its lines in order."""
    return " ".join(w for line in str(value or "").split("\n") for w in logical_order(line).split())


_RTL = re.compile("[\u0590-\u08ff\ufb1d-\ufdff\ufe70-\ufeff]")
_LTR_RUN = re.compile("[0-9A-Za-z\u00c0-\u024f](?:[0-9A-Za-z\u00c0-\u024f.,:/%+-]*[0-9A-Za-z\u00c0-\u024f%])?")
_MIRROR = str.maketrans("()[]{}<>", ")(][}{><")


def logical_order(text: str) -> str:
    """A right-to-left cell as pdfplumber gives it — its characters in visual order, left to right on
    the page, so every Arabic or Hebrew word reads backwards — turned into logical order: the line
    reversed, then each left-to-right run inside it (numbers, dates, Latin words) turned back, and
    brackets mirrored. Cells without right-to-left letters are returned unchanged."""
    if not _RTL.search(text):
        return text
    flipped = text[::-1].translate(_MIRROR)
    return _LTR_RUN.sub(lambda m: m.group()[::-1], flipped)


def inside(table: Table, x: float | None, y: float | None, page_top: float) -> bool:
    """Whether a line starting at (x, baseline y in PDF space) lies in the table's box."""
    if x is None or y is None:
        return False
    top = page_top - y
    return (table.top - SLACK <= top <= table.bottom + SLACK
            and table.x0 - SLACK <= x <= table.x1 + SLACK)
