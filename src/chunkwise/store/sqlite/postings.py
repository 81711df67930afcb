"""One term's FTS5 postings read in one SQLite step, decoded by numpy.

Why: a row-by-row ``fetchall`` returns to Python once per matched row (thousands per query term),
and CPython's ``sqlite3`` releases and re-takes the GIL around every ``sqlite3_step``. Alone that is
cheap; with two search threads (``chunkwise serve``) each re-take waits for the other thread's
Python, so every row became a GIL hand-over between cores, and the per-row Python that followed
(tuples, a varint loop per docsize record) ran under that contention too. Here FTS5 does the whole
match, join and ``bm25()`` calls inside one step (a materialised CTE aggregated by
``group_concat``), so the GIL is released once for all of it, and the columns come back as a
handful of strings that numpy parses in C. Same rows, lengths and scores as the row-by-row read
(FTS5 prints a score with 15 significant digits; the term counts derived from it are integers).
"""
from __future__ import annotations

from typing import Sequence

_COLUMNS = 4  # chunks_fts: lex_body, lex_title, lex_heading, acl_index (one docsize varint each)


def matched_sql(fields: int) -> str:
    """One row: (matched rows, their rowids, their docsize records in hex, then per lexical field the
    ``bm25()`` weighted 1 on that column and 0 elsewhere), every list in the same row order."""
    calls = ", ".join("bm25(chunks_fts, " + ", ".join("1.0" if j == i else "0.0" for j in range(_COLUMNS)) + f") AS s{i}"
                      for i in range(fields))
    lists = ", ".join(f"group_concat(s{i}, ',')" for i in range(fields))
    return (f"WITH m AS MATERIALIZED (SELECT chunks_fts.rowid AS k, d.sz AS sz, {calls} FROM chunks_fts "
            f"JOIN chunks_fts_docsize d ON d.id = chunks_fts.rowid WHERE chunks_fts MATCH ?) "
            f"SELECT count(*), group_concat(k, ','), group_concat(hex(sz), ''), {lists} FROM m")


def varint_table(blob: bytes, rows: int, columns: int = _COLUMNS):
    """``rows`` docsize records laid end to end (each ``columns`` SQLite varints: 7 bits a byte, high
    bit set on every byte but a number's last) as an int64 array (rows, columns); None when the bytes
    do not hold exactly that many numbers (the caller then decodes record by record)."""
    import numpy as np

    data = np.frombuffer(blob, dtype=np.uint8)
    last = np.flatnonzero(data < 0x80)  # each number's last byte
    if last.size != rows * columns or (last.size and last[-1] != data.size - 1):
        return None
    if not rows:
        return np.zeros((0, columns), dtype=np.int64)
    index = np.arange(data.size)
    owner = np.searchsorted(last, index)  # the number each byte belongs to
    shift = 7 * (last[owner] - index)
    if shift.max(initial=0) > 56:
        return None  # wider than any token count: leave it to the record-by-record decoder
    parts = (data & 0x7F).astype(np.int64) << shift
    starts = np.concatenate(([0], last[:-1] + 1))
    return np.add.reduceat(parts, starts).reshape(rows, columns)


def parse_list(text: str | None, dtype, count: int):
    """A ``group_concat(..., ',')`` of numbers as a numpy array of ``count`` values (C parsing)."""
    import numpy as np

    if not count:
        return np.zeros(0, dtype=dtype)
    values = np.fromstring(text, dtype=dtype, sep=",")
    if values.size != count:
        raise ValueError(f"expected {count} values from SQLite, parsed {values.size}")
    return values


def decode(row: Sequence, fields: int):
    """(keys, body lengths, lengths over all columns, scores (n, fields)) from ``matched_sql``'s row;
    None when a docsize record is not ``_COLUMNS`` plain varints (the caller reads row by row)."""
    import numpy as np

    count = int(row[0])
    sizes = varint_table(bytes.fromhex(row[2] or ""), count)
    if sizes is None:
        return None
    keys = parse_list(row[1], np.int64, count)
    scores = np.column_stack([parse_list(row[3 + i], np.float64, count) for i in range(fields)]) if count \
        else np.zeros((0, fields))
    return keys, sizes[:, 0].astype(np.float64), sizes.sum(axis=1).astype(np.float64), scores
