"""``chunk --json``'s output lines, made where the records are made (the contained worker) and
written by the caller as they came.

Why: the worker packed each record as a pickled dict, and the calling process unpickled it, copied
it to add ``needs_review`` and serialised it: three passes over every record's fields. Here each
``ChunkRecord`` becomes its line once, in the worker (``pipeline.doors.prepare_paths(encode=...)``),
and the caller writes the bytes. The line is exactly ``output._record_line`` of the record's dict
with ``needs_review`` after its fields: orjson writes the record's tuples as it writes the dict's
lists; what orjson refuses, or a character a terminal must not get raw, takes ``_record_line``.
The worker still only makes values: the file is parsed there as before, and only bytes of JSON
text come back (docs/security.md).
"""
from __future__ import annotations

import sys
from typing import Iterable

from chunkwise.cli import output
from chunkwise.enrich.records import _FIELDS, _VALUES, READY

def record_line(record) -> bytes:
    """The UTF-8 line (newline included) ``chunk --json`` prints for one ``ChunkRecord``."""
    orjson = output._orjson()
    row = dict(zip(_FIELDS, _VALUES(record)))
    if not record.boxes:  # as ``ChunkRecord.to_dict``: no key without boxes
        del row["boxes"]
    row["needs_review"] = record.quality != READY
    if orjson is not None:
        try:
            line = orjson.dumps(row, default=output._plain,
                                option=orjson.OPT_PASSTHROUGH_DATACLASS | orjson.OPT_APPEND_NEWLINE)
        except TypeError:  # orjson.JSONEncodeError is a TypeError: the slow path says it all
            pass
        else:
            if _raw_safe(line):
                return line
    return line_of_dict({**record.to_dict(), "needs_review": row["needs_review"]})


def _raw_safe(line: bytes) -> bool:
    """No character ``output._UNSAFE`` escapes in orjson's line (its newline aside). orjson escapes
    C0 itself, so of the rest an ASCII line can only hold DEL."""
    if line.isascii():
        return b"\x7f" not in line
    text = line.decode()
    return not output._UNSAFE.search(text, 0, len(text) - 1)


def line_of_dict(row: dict) -> bytes:
    """``row``'s line as the caller wrote it before (``output._record_line``), UTF-8. A lone surrogate (no record made
    from a file holds one; stdout refused it) is written as its JSON escape ``\\udXXX``."""
    orjson = output._orjson()
    text = output._record_line(row, orjson) if orjson is not None else output._json_line(row)
    return (text + "\n").encode("utf-8", "backslashreplace")


def write_lines(lines: Iterable[bytes]) -> None:
    """Write encoded lines to stdout: straight to its byte stream when it is UTF-8, else as text."""
    out = sys.stdout
    buffer = getattr(out, "buffer", None)
    if buffer is None or (out.encoding or "").lower().replace("-", "").replace("_", "") != "utf8":
        for line in lines:
            out.write(line.decode("utf-8"))
        return
    out.flush()  # anything written as text before goes first
    for line in lines:
        buffer.write(line)
