"""Printing helpers: JSON for machines, aligned plain-text tables for people.

Everything printed comes from untrusted documents (text, file names, headings, error messages that
quote them), so nothing reaches a terminal raw: ``safe`` writes C0/C1 control characters (ESC
sequences that clear the screen or set the title, carriage returns that overwrite a line, newlines
that forge log lines), DEL and the invisible/bidirectional format characters (U+200B-U+200F,
U+202A-U+202E, U+2066-U+2069, ...) as visible escapes. ``table`` and ``preview`` apply it to every
cell; JSON output escapes the C1 and format characters too (JSON itself escapes only C0).
"""
from __future__ import annotations

import json
import re
import sys
from typing import Iterable, Sequence

_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u00ad\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff\ufff9-\ufffb]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape(m: re.Match) -> str:
    ch = m.group()
    if ch in _NAMED:
        return _NAMED[ch]
    code = ord(ch)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def safe(text: object) -> str:
    """``text`` as one printable line: control and format characters become visible escapes
    (``\\x1b``, ``\\n``, ``\\u202e``). Printable text, any script, is left as it is."""
    s = "" if text is None else str(text)
    return _UNSAFE.sub(_escape, s)


def _plain(obj):
    """Values JSON has no type for: access tags (a document's metadata holds its ``acl``) as their list."""
    from chunkwise.access import AccessTags

    if isinstance(obj, AccessTags):
        return list(obj.tags)
    raise TypeError(f"Object of type {type(obj).__name__} is not JSON serializable")


def _json_line(obj) -> str:
    return _UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", json.dumps(obj, ensure_ascii=False, default=_plain))


def _orjson():
    """orjson (the ``fast`` extra) when installed, else None: ``chunk --json`` then uses ``json``."""
    global _ORJSON
    if _ORJSON is False:
        try:
            import orjson
        except ImportError:
            orjson = None
        _ORJSON = orjson
    return _ORJSON


_ORJSON = False


def _record_line(obj, orjson) -> str:
    """``_json_line`` for the many records of ``chunk --json``: the same values, escaped the same way
    (orjson, like ``json``, escapes C0 only; C1 and format characters are escaped here), written
    without the spaces after ``,`` and ``:`` (and a non-finite float, which no record holds, as
    ``null``: ``json`` wrote ``Infinity``, which is not JSON). What orjson refuses (a lone surrogate, an integer over
    64 bits, a key that is not a string) goes through ``json`` as before."""
    try:
        line = orjson.dumps(obj, default=_plain, option=orjson.OPT_PASSTHROUGH_DATACLASS).decode()
    except TypeError:  # orjson.JSONEncodeError is a TypeError
        return _json_line(obj)
    return _UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", line) if _UNSAFE.search(line) else line


def emit_json(obj) -> None:
    sys.stdout.write(_json_line(obj) + "\n")


def emit_jsonl(rows: Iterable[dict]) -> None:
    out = sys.stdout
    for row in rows:
        out.write(_json_line(row) + "\n")


def preview(text: str, width: int) -> str:
    flat = safe(" ".join(text.split()))
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def table(headers: Sequence[str], rows: Sequence[Sequence], right: Sequence[int] = ()) -> str:
    cells = [[safe(h) for h in headers]] + [["" if c is None else safe(c) for c in r] for r in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]

    def fmt(r):
        return "  ".join(c.rjust(w) if i in right else c.ljust(w) for i, (c, w) in enumerate(zip(r, widths))).rstrip()

    lines = [fmt(cells[0]), "  ".join("-" * w for w in widths)]
    lines += [fmt(r) for r in cells[1:]]
    return "\n".join(lines)


def counted(counts: dict) -> str:
    """``auto:prose 12, auto:table 2`` (e.g. the routes that made a document's chunks)."""
    return ", ".join(f"{key} {n}" for key, n in counts.items())
