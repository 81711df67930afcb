"""Tables as units: whole when they fit, otherwise row groups that each repeat the header row.

The chunk's offsets cover its own rows (the first group also covers the header); the repeated header,
or the optional "Header: Value" rendering, lives in the embedded text and is counted in the cap.
"""
from __future__ import annotations

import re
from bisect import bisect_left, bisect_right

from chunkwise.chunking.base import Draft, drafts_from_pieces
from chunkwise.chunking.levels import Level
from chunkwise.chunking.pack import Region, pack
from chunkwise.chunking.sizing import Sizer

_LINE = re.compile(r"[^\r\n]+")
_CELL_SPLIT = re.compile(r"(?<!\\)\|")


def cells(row: str) -> list[str]:
    row = row.strip()
    if row.startswith("|"):
        row = row[1:]
    if row.endswith("|") and not row.endswith("\\|"):
        row = row[:-1]
    return [c.strip() for c in _CELL_SPLIT.split(row)]


def as_fields(header: list[str], row: str) -> str:
    values = cells(row)
    return "; ".join(f"{h}: {v}" for h, v in zip(header, values) if v)


def table_drafts(
    text: str, start: int, end: int, sizer: Sizer, budget: int, *, max_chars: int, fields: bool = False, **meta
) -> list[Draft]:
    """Row groups of a pipe table ``text[start:end]`` under ``budget`` units and ``max_chars``
    characters of embedded body."""
    lines = [(m.start(), m.end()) for m in _LINE.finditer(text, start, end)]
    whole = text[start:end]
    if len(lines) < 3:
        size = sizer.count(whole) - sizer.overhead
        if size <= budget and end - start <= max_chars:
            return [Draft(start, end, size, Level.BLOCK, kind="table", **meta)]
        cuts = [(b, Level.LINE) for _, b in lines]
        return drafts_from_pieces(pack(text, start, end, cuts, sizer, budget, floor=Level.LINE, max_chars=max_chars),
                                  kind="table", **meta)
    header_text = text[lines[0][0] : lines[1][1]]
    header = cells(text[lines[0][0] : lines[0][1]])
    rows = lines[2:]
    rendered = [as_fields(header, text[a:b]) if fields else text[a:b] for a, b in rows]
    if not fields:
        size = sizer.count(whole) - sizer.overhead
        if size <= budget and end - start <= max_chars:
            return [Draft(start, end, size, Level.BLOCK, kind="table", rows=(0, len(rows)), **meta)]
    head_units = 0 if fields else sizer.count(header_text + "\n") - sizer.overhead
    head_chars = 0 if fields else len(header_text) + 1
    row_units = sizer.count_many([r + "\n" for r in rendered])
    row_chars = [len(r) + 1 for r in rendered]
    if head_units + _median(row_units) > budget or head_chars + _median(row_chars) > max_chars:
        return _rows_without_header(text, start, end, lines, sizer, budget, max_chars, meta)
    # Row groups are the shared packer over row ends, the table one region whose later pieces pay
    # for the repeated header; a row over the budget is cut inside (below the LINE floor: flagged).
    ends = [b for _, b in rows[:-1]]
    row_of = {b: k for k, b in enumerate(ends)}

    def measure(bounds):  # the embedded form of each group of rows: the rendered rows
        return [row_units[row_of[a] + 1] if a in row_of else row_units[0] for a, _ in bounds]

    pieces = pack(text, start, end, [(b, Level.ITEM) for b in ends], sizer, budget, floor=Level.LINE,
                  max_chars=max_chars, regions=[Region(start, end, head_units, head_chars)],
                  measure=measure if fields else None)
    starts = [a for a, _ in rows]
    out: list[Draft] = []
    for p in pieces:
        first = p.start == start
        r0 = max(0, bisect_right(starts, p.start) - 1)
        r1 = max(r0 + 1, bisect_left(starts, p.end))
        whole = rows[r0][0] >= p.start and rows[r1 - 1][1] <= p.end
        body = text[p.start : p.end]
        if fields:
            embed = "\n".join(rendered[r0:r1]) if whole else body
        else:
            embed = None if first else header_text + "\n" + body
        reasons = ()
        if p.review:
            reasons = ("table_row_split", "char_split") if p.reason == "char_split" else ("table_row_split",)
        out.append(Draft(p.start, p.end, p.size + (0 if first else head_units), p.level, p.review, reasons,
                         kind="table", rows=(r0, r1), embed_body=embed, exact=p.exact and not p.review, **meta))
    return out


def _median(values: list[int]) -> int:
    return sorted(values)[len(values) // 2]


def _rows_without_header(text: str, start: int, end: int, lines: list[tuple[int, int]], sizer: Sizer,
                         budget: int, max_chars: int, meta: dict) -> list[Draft]:
    """A header so wide that repeating it leaves no room for a typical row would turn the table into
    thousands of slivers (``|``, ``V``, ``Hos``). The rows are packed as plain lines instead, the
    header only where it stands: whole rows a reader can read, so not flagged (a piece flagged for a
    cut inside one unit also names ``table_header_not_repeated``)."""
    rows = lines[2:]
    row_starts = [a for a, _ in rows]
    cuts = [(lines[0][1], Level.LINE), (lines[1][1], Level.ITEM), *((b, Level.ITEM) for _, b in rows)]
    pieces = pack(text, start, end, cuts, sizer, budget, floor=Level.LINE, max_chars=max_chars)
    out = []
    for p in pieces:
        first = bisect_right(row_starts, p.start)  # rows starting at or before the piece start
        first = first - 1 if first and rows[first - 1][1] > p.start else first
        last = bisect_left(row_starts, p.end)  # rows starting before the piece end
        reasons = ("table_header_not_repeated", p.reason) if p.review else ()
        out.append(Draft(p.start, p.end, p.size, p.level, p.review, reasons, kind="table",
                         rows=(first, max(first, last)), exact=p.exact, **meta))
    return out
