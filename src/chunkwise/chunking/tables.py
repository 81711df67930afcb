"""Tables as units: whole when they fit, otherwise row groups that each repeat the header row.

The chunk's offsets cover its own rows (the first group also covers the header); the repeated header,
or the optional "Header: Value" rendering, lives in the embedded text and is counted in the cap.
"""
from __future__ import annotations

import re

from chunkwise.chunking.base import Draft, drafts_from_pieces
from chunkwise.chunking.levels import Level
from chunkwise.chunking.pack import pack
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
    text: str, start: int, end: int, sizer: Sizer, budget: int, *, fields: bool = False, **meta
) -> list[Draft]:
    """Row groups of a pipe table ``text[start:end]`` under ``budget`` units of embedded body."""
    lines = [(m.start(), m.end()) for m in _LINE.finditer(text, start, end)]
    whole = text[start:end]
    if len(lines) < 3:
        size = sizer.count(whole) - sizer.overhead
        if size <= budget:
            return [Draft(start, end, size, Level.BLOCK, kind="table", **meta)]
        return drafts_from_pieces(pack(text, start, end, [], sizer, budget, floor=Level.LINE), kind="table", **meta)
    header_text = text[lines[0][0] : lines[1][1]]
    header = cells(text[lines[0][0] : lines[0][1]])
    rows = lines[2:]
    rendered = [as_fields(header, text[a:b]) if fields else text[a:b] for a, b in rows]
    if not fields:
        size = sizer.count(whole) - sizer.overhead
        if size <= budget:
            return [Draft(start, end, size, Level.BLOCK, kind="table", rows=(0, len(rows)), **meta)]
    head_units = 0 if fields else sizer.count(header_text + "\n") - sizer.overhead
    row_units = sizer.count_many([r + "\n" for r in rendered])
    out: list[Draft] = []
    i = 0
    while i < len(rows):
        j, used = i, head_units
        while j < len(rows) and used + row_units[j] <= budget:
            used += row_units[j]
            j += 1
        a = start if i == 0 else rows[i][0]
        if j == i:  # one row over the budget: split inside it, flagged
            pieces = pack(text, rows[i][0], rows[i][1], [], sizer, max(1, budget - head_units), floor=Level.LINE)
            for n, p in enumerate(pieces):
                first = i == 0 and n == 0  # its offsets also cover the header lines
                body = text[p.start : p.end]
                embed = body if fields else (None if first else header_text + "\n" + body)
                out.append(
                    Draft(start if first else p.start, p.end, p.size + (head_units if first else 0), p.level,
                          True, ("table_row_split",), kind="table", rows=(i, i + 1), embed_body=embed, **meta)
                )
            i += 1
            continue
        body_rows = "\n".join(rendered[i:j])
        if fields:
            embed = body_rows
        elif i == 0:
            embed = None  # the slice already starts with the header
        else:
            embed = header_text + "\n" + text[rows[i][0] : rows[j - 1][1]]
        out.append(
            Draft(a, rows[j - 1][1], used, Level.END if j == len(rows) else Level.ITEM, kind="table",
                  rows=(i, j), embed_body=embed, **meta)
        )
        i = j
    return out
