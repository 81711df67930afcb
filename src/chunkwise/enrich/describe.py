"""A document's description: the one line the ``context`` header adds to every chunk's embedded text.

Why: a chunk cut from the middle of a document ("Press the red button twice") says nothing of what
the document is about; a short description of the whole document in its embedded text lets a query
about the document's subject find it (contextual headers). Where it comes from, first found wins:
front matter ``description`` or ``summary``; for code, the module docstring or the leading comment;
else the first paragraph of the body. Only the description's *place* is kept beside its text, so
enrichment can drop it from the chunks of any reader who may not read that place (a description
taken from a restricted section never reaches a wider chunk).
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from chunkwise.types import Document

MAX_CHARS = 240  # about 50 tokens: context, not a second chunk
_WS = re.compile(r"\s+")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s")
_PY_DOCSTRING = re.compile(r"\A(?:#![^\n]*\n)?(?:[ \t]*#[^\n]*\n|[ \t]*\n)*[ \t]*[rRuU]?(\"\"\"|''')(.*?)\1", re.S)
_LEAD_COMMENT = re.compile(r"\A(?:#![^\n]*\n)?\s*((?:(?://|#|--|;)[^\n]*\n\s*)+|/\*.*?\*/)", re.S)
_NOT_PROSE = re.compile(r"\s*(?:#{1,6}\s|<!--|```|~~~|\||[-*+]\s|\d+[.)]\s|>|!\[|=+\s*$|-+\s*$)")


@dataclass(frozen=True)
class Description:
    """``text``: one line; ``start``/``end``: where it came from in ``doc.text`` (both -1 for front
    matter, which is governed by the document's own tags)."""

    text: str
    start: int = -1
    end: int = -1


def one_line(text: str, limit: int = MAX_CHARS) -> str:
    """Whitespace collapsed, cut after the last whole sentence (else word) that fits ``limit``."""
    flat = _WS.sub(" ", text).strip()
    if len(flat) <= limit:
        return flat
    head = flat[: limit + 1]
    ends = [m.start() for m in _SENTENCE_END.finditer(head)]
    if ends and ends[-1] >= limit // 3:
        return head[: ends[-1]].strip()
    cut = head.rfind(" ", 0, limit)
    return (head[:cut] if cut > 0 else head[:limit]).rstrip(" ,;:") + " …"


def describe(doc: Document) -> Description | None:
    """The document's description (see the module docstring), or None when it has none."""
    meta = doc.metadata or {}
    for key in ("description", "summary"):
        value = meta.get(key)
        if isinstance(value, str) and value.strip():
            return Description(one_line(value))
    body = doc.text[doc.body_start :]
    if doc.media_type == "text/x-code":
        return _code_description(body, doc.body_start)
    for b in doc.blocks:
        if b.kind == "paragraph" and b.start >= doc.body_start and doc.text[b.start : b.end].strip():
            return Description(one_line(doc.text[b.start : b.end]), b.start, b.end)
    if doc.blocks:
        return None
    return _first_paragraph(body, doc.body_start)


def _first_paragraph(body: str, offset: int) -> Description | None:
    """The first run of prose lines in plain or Markdown text (headings, markers, fences, tables and
    lists skipped; a fenced block is skipped whole)."""
    pos, fence = 0, ""
    start = end = -1
    for line in body.splitlines(keepends=True):
        stripped = line.strip()
        if fence:
            if stripped.startswith(fence):
                fence = ""
        elif stripped.startswith(("```", "~~~")):
            if start >= 0:
                break
            fence = stripped[:3]
        elif not stripped:
            if start >= 0:
                break
        elif start < 0 and not _NOT_PROSE.match(line):
            start, end = pos, pos + len(line)
        elif start >= 0:
            if _NOT_PROSE.match(line):
                break
            end = pos + len(line)
        pos += len(line)
    if start < 0:
        return None
    text = one_line(body[start:end])
    return Description(text, offset + start, offset + end) if text else None


def _code_description(body: str, offset: int) -> Description | None:
    m = _PY_DOCSTRING.match(body)
    if m and m.group(2).strip():
        return Description(one_line(m.group(2)), offset + m.start(2), offset + m.end(2))
    m = _LEAD_COMMENT.match(body)
    if m:
        lines = [re.sub(r"^\s*(?://+|#+|--|;+|/\*+|\*+/?|\*/)\s?", "", ln).rstrip("*/ ").strip()
                 for ln in m.group(1).splitlines()]
        text = one_line(" ".join(ln for ln in lines if ln))
        if text and not re.match(r"(?i)(copyright|license|spdx|-\*-)", text):
            return Description(text, offset + m.start(1), offset + m.end(1))
    return None
