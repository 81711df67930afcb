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

import re
import sys
from typing import Iterable

from chunkwise.cli import output
from chunkwise.enrich.records import _FIELDS, _VALUES, READY

# ``output._UNSAFE``'s characters as UTF-8 (orjson writes UTF-8; a character's bytes never occur
# inside another's): C0, DEL, C1 (U+0080-U+009F), U+00AD, U+061C, U+180E, U+200B-U+200F,
# U+2028-U+202E, U+2060-U+2069, U+FEFF, U+FFF9-U+FFFB. A line holding none is written as orjson made it.
_UNSAFE_UTF8 = re.compile(rb"[\x00-\x1f\x7f]|\xc2[\x80-\x9f\xad]|\xd8\x9c|\xe1\xa0\x8e|\xe2\x80[\x8b-\x8f\xa8-\xae]"
                          rb"|\xe2\x81[\xa0-\xa9]|\xef\xbb\xbf|\xef\xbf[\xb9-\xbb]")


def record_line(record) -> bytes:
    """The UTF-8 line (newline included) ``chunk --json`` prints for one ``ChunkRecord``."""
    orjson = output._orjson()
    row = dict(zip(_FIELDS, _VALUES(record)))
    row["needs_review"] = record.quality != READY
    if orjson is not None:
        try:
            line = orjson.dumps(row, default=output._plain,
                                option=orjson.OPT_PASSTHROUGH_DATACLASS | orjson.OPT_APPEND_NEWLINE)
        except TypeError:  # orjson.JSONEncodeError is a TypeError: the slow path says it all
            pass
        else:
            if not _UNSAFE_UTF8.search(line, 0, len(line) - 1):
                return line
    return line_of_dict({**record.to_dict(), "needs_review": row["needs_review"]})


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
