"""Tables without drawn rules, found from how their words line up (pdfplumber word boxes).

Statements in annual reports, tables of contents and survey grids draw no rules: pypdf reads them in
stream order, a column at a time, and a page of a balance sheet comes out as a list of labels then a
list of numbers, the prior-year column lost among them. Here a page's words are grouped into lines by
position, each line cut into segments at wide gaps (and at dot leaders, which are dropped), and a run
of lines whose later segments are short and fall into the same columns is a table: the first segment
of a row is its label, the rest go to the column whose span they overlap.

What keeps prose out: a row counts only when every segment after its label is short (a number, a
date, a few words), at least ``MIN_ROWS`` such rows must be next to each other, and every column must
be used by ``MIN_ROWS`` rows and line up (right edges or left edges agree), and one column at least
must hold mostly figures (amounts, page numbers, marks such as "*"). A two-column paper's lines are
long on both sides, so its pages give no table; two columns of short lines of prose (Korean set
narrow) have no column of figures. Columns of prose are first split apart at their gutter
(``regions``), so a grid set in one column of a page is found beside the other column's text.

The work is bounded by the page's words (``MAX_WORDS``), never by the clock.
"""
from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from typing import NamedTuple

GUTTER = 12  # points of upright blank band between two columns of prose
MAX_GUTTERS = 8  # gutters tried on one page (each costs a pass over its words)
GUTTER_CROSSED = 2  # words that may cross a gutter (a footer or a title set across both columns)
PROSE_WORDS = 8  # a segment of this many words is running text
MIN_ROWS = 3  # rows with a label and at least one short cell, next to each other
MAX_WORDS = 20_000  # words on a page looked at (past it the page is left as text)
GAP_EM = 1.0  # a gap wider than this many font sizes between words separates cells
MAX_CELL_WORDS = 6  # a cell after the label holds at most this many words
MAX_CELL_CHARS = 50
LABEL_CHARS = 100  # a row of one segment longer than this is a paragraph's line, not a label
ROW_GAP_EM = 3.0  # rows further apart than this many font sizes are not one table
ALIGN = 3.0  # points: right or left edges this close line up
LINE_TOL = 2.5  # points: words whose tops differ by less share a line
_LEADER = re.compile(r"^[.\u2026\u00b7_]{2,}$|^\.$")
_LEADER_TAIL = re.compile(r"(?:\s?[.\u2026\u00b7]){3,}\s*$")
_CURRENCY = {"$", "€", "£", "¥"}
_MONO = re.compile(r"courier|mono|consol|typewriter|cmtt|lmtt|menlo", re.I)
_SHORT_END = re.compile(r"^[\d$€£(),.%*\u2014\u2013-]+$|^[ivxlc]{1,6}$")


class Segment(NamedTuple):
    x0: float
    x1: float
    text: str


class Row(NamedTuple):
    top: float
    bottom: float
    size: float
    segments: list[Segment]


def candidate(texts: list[str]) -> bool:
    """Cheap test on a page's text lines (from pypdf) for whether it may hold an unruled table:
    at least ``MIN_ROWS`` lines that end in a dot leader or in a short figure after other words
    ("Inventory 770,248 668,525", "Preface . . . . xi")."""
    hits = 0
    for text in texts:
        tokens = text.split()
        if len(tokens) >= 2 and (_LEADER_TAIL.search(" ".join(tokens[:-1])) or _figure(tokens[-1])):
            hits += 1
            if hits >= MIN_ROWS:
                return True
    return False


def _figure(token: str) -> bool:
    return bool(_SHORT_END.match(token)) and token[-1] not in ".," and len(token) <= 16


def page_rows(words: list[dict]) -> list[Row]:
    """The page's words as rows of segments, top to bottom: words whose vertical middles are close
    share a row (a larger "*" or "$" drawn a little higher stays on its row)."""
    lines: list[list[dict]] = []
    mid = lambda w: (float(w["top"]) + float(w["bottom"])) / 2  # noqa: E731
    for w in sorted(words[:MAX_WORDS], key=lambda w: (mid(w), float(w["x0"]))):
        if lines and abs(mid(w) - mid(lines[-1][0])) <= LINE_TOL:
            lines[-1].append(w)
        else:
            lines.append([w])
    return [_row(sorted(line, key=lambda w: float(w["x0"]))) for line in lines]


def _row(words: list[dict]) -> Row:
    size = max(float(w.get("bottom", 0)) - float(w.get("top", 0)) for w in words) or 10.0
    segments: list[Segment] = []
    current: list[dict] = []
    for w in words:
        if _LEADER.match(w["text"]):
            _flush(current, segments)
            current = []
            continue
        if current and float(w["x0"]) - float(current[-1]["x1"]) > GAP_EM * size:
            _flush(current, segments)
            current = []
        current.append(w)
    _flush(current, segments)
    top = min(float(w["top"]) for w in words)
    bottom = max(float(w["bottom"]) for w in words)
    return Row(top, bottom, size, segments)


def _flush(words: list[dict], segments: list[Segment]) -> None:
    text = " ".join(w["text"] for w in words)
    text = _LEADER_TAIL.sub("", text).strip()
    if words and text:
        segments.append(Segment(float(words[0]["x0"]), float(words[-1]["x1"]), text))


def _short(segment: Segment) -> bool:
    return len(segment.text) <= MAX_CELL_CHARS and len(segment.text.split()) <= MAX_CELL_WORDS


def _is_row(row: Row) -> bool:
    """A table row: two segments or more, every one after the first short."""
    return len(row.segments) >= 2 and all(_short(s) for s in row.segments[1:])


def find(words: list[dict]) -> list[tuple[float, float, float, float, list[list[str]]]]:
    """(top, bottom, x0, x1, rows of cells) for every aligned table on the page. Words set in a
    monospaced face are left out: a code listing lines up too ("FROM  function_usage")."""
    words = [w for w in words[:MAX_WORDS] if not _MONO.search(str(w.get("fontname", "")))]
    return [t for region in regions(words) for t in _find(page_rows(region))]


def regions(words: list[dict]) -> list[list[dict]]:
    """The page's words split at gutters between columns of prose: an upright band at least
    ``GUTTER`` points wide that at most ``GUTTER_CROSSED`` words cross (a running foot may), with at least ``MIN_ROWS`` lines of prose (a segment
    of ``PROSE_WORDS`` words or more) on each side. A survey grid set in the right column of a page
    shares its lines with the left column's text; split, it lines up. A statement's label and figure
    columns have no prose on the figures' side, so a table is never cut at its own columns."""
    if not words:
        return []
    left, right = min(float(w["x0"]) for w in words), max(float(w["x1"]) for w in words)
    covered = [0] * (int(right - left) + 2)
    for w in words:
        for x in range(int(float(w["x0"]) - left), int(float(w["x1"]) - left) + 1):
            covered[x] += 1
    cuts, run = [], 0
    for x, c in enumerate(covered):
        run = 0 if c > GUTTER_CROSSED else run + 1
        if run == GUTTER and len(cuts) < MAX_GUTTERS:
            cuts.append(left + x - GUTTER / 2)
    parts, rest = [], words
    for cut in cuts:
        a = [w for w in rest if float(w["x1"]) <= cut]
        b = [w for w in rest if float(w["x1"]) > cut]
        if _prose(a) >= MIN_ROWS and _prose(b) >= MIN_ROWS:
            parts.append(a)
            rest = b
    return parts + [rest]


def _prose(words: list[dict]) -> int:
    return sum(1 for r in page_rows(words) for s in r.segments if len(s.text.split()) >= PROSE_WORDS)


def _find(rows: list[Row]) -> list[tuple[float, float, float, float, list[list[str]]]]:
    out = []
    i = 0
    while i < len(rows):
        if not _is_row(rows[i]):
            i += 1
            continue
        start = i
        while start and _label(rows[start - 1]) and rows[start - 1].segments[0].text.endswith(":") \
                and _near(rows[start - 1], rows[start]):
            start -= 1  # a section label just above ("Current assets:") belongs to the table
        j = i
        while j + 1 < len(rows) and (_is_row(rows[j + 1]) or _label(rows[j + 1])) and _near(rows[j], rows[j + 1]):
            j += 1
        while not _is_row(rows[j]):
            j -= 1
        run = rows[start:j + 1]
        rowed = sum(1 for r in run if _is_row(r))
        if rowed >= MIN_ROWS and rowed * 2 >= len(run) and (table := _grid(run)):  # mostly rows, few labels
            out.append(table)
        i = j + 1
    return out


def _near(a: Row, b: Row) -> bool:
    return b.top - a.bottom <= ROW_GAP_EM * a.size


def _label(row: Row) -> bool:
    """A row of one segment that may sit inside a table: a section label or the first line of a
    wrapped one, not a paragraph's line."""
    return len(row.segments) == 1 and len(row.segments[0].text) <= LABEL_CHARS


def _unwrap(run: list[Row]) -> list[Row]:
    """A label that wraps onto the next lines is one label: a line that goes on in other than a
    capital ("$145,000, respectively", "value; 0 shares issued") after a label line that does not end
    with ":" joins it, and the figures are those of its last line."""
    out: list[Row] = []
    for row in run:
        prev = out[-1] if out else None
        first = row.segments[0]
        if (prev is not None and len(prev.segments) == 1 and not prev.segments[0].text.endswith(":")
                and not first.text[:1].isupper() and first.x0 < _first_figure_x(row)
                and prev.segments[0].x0 <= first.x0 + ALIGN):
            merged = Segment(prev.segments[0].x0, first.x1, f"{prev.segments[0].text} {first.text}")
            out[-1] = Row(prev.top, row.bottom, row.size, [merged, *row.segments[1:]])
        else:
            out.append(row)
    return out


def _first_figure_x(row: Row) -> float:
    return row.segments[1].x0 if len(row.segments) > 1 else float("inf")


def _grid(run: list[Row]):
    """The run's cells by column, or None when its later segments do not line up in columns."""
    run = _unwrap(run)
    later = sorted((s for r in run for s in r.segments[1:]), key=lambda s: s.x0)
    spans: list[list[Segment]] = []
    for s in later:
        if spans and s.x0 <= max(t.x1 for t in spans[-1]) + ALIGN:
            spans[-1].append(s)
        else:
            spans.append([s])
    spans = _fold(spans)
    if not spans or any(len(span) < MIN_ROWS or not _aligned(span) for span in spans):
        return None
    if not any(_mostly(span, lambda s: _figure(s.text.split()[-1])) for span in spans):
        return None  # two columns of text side by side are prose, not a table
    bounds = [(min(s.x0 for s in span), max(s.x1 for s in span)) for span in spans]
    label_x1 = bounds[0][0]
    cells = []
    for row in run:
        cells_row = [""] * (len(bounds) + 1)
        for k, s in enumerate(row.segments):
            col = 0 if k == 0 and s.x1 <= label_x1 + ALIGN else _column(s, bounds)
            cells_row[col] = f"{cells_row[col]} {s.text}".strip()
        cells.append(cells_row)
    cells = _header(cells)
    x0 = min(r.segments[0].x0 for r in run)
    return (run[0].top, run[-1].bottom, x0, bounds[-1][1], cells)


def _header(cells: list[list[str]]) -> list[list[str]]:
    """The lines above the first labelled row are one header row, each column's words joined: a
    header cell wrapped over two lines ("State funded" over "legal aid") is one cell."""
    n = next((k for k, row in enumerate(cells) if row[0]), len(cells))
    if n < 2:
        return cells
    head = [" ".join(row[c] for row in cells[:n] if row[c]) for c in range(len(cells[0]))]
    return [head, *cells[n:]]


def _fold(spans: list[list[Segment]]) -> list[list[Segment]]:
    """A span of currency signs, or one too rare to be a column, joins the span to its right (the
    "$" printed apart from its figure), the last one the span to its left."""
    out: list[list[Segment]] = []
    carry: list[Segment] = []
    for span in spans:
        span = carry + span
        carry = []
        if len(span) < MIN_ROWS or all(s.text in _CURRENCY for s in span):
            carry = span
        else:
            out.append(span)
    if carry and out:
        out[-1] += carry
    return out


def _mostly(span: list[Segment], test) -> bool:
    return sum(1 for s in span if test(s)) * 5 >= len(span) * 3


def _aligned(span: list[Segment]) -> bool:
    """Most of a column's cells share their right edge (figures) or their left edge (text)."""
    need = max(MIN_ROWS, (len(span) * 3 + 4) // 5)
    for edges in (sorted(s.x1 for s in span), sorted(s.x0 for s in span)):  # n log n, not n²
        if any(bisect_right(edges, e + ALIGN) - bisect_left(edges, e - ALIGN) >= need for e in edges):
            return True
    return False


def _column(s: Segment, bounds: list[tuple[float, float]]) -> int:
    for k, (a, b) in enumerate(bounds, 1):
        if s.x0 <= b + ALIGN and s.x1 >= a - ALIGN:
            return k
    return 0
