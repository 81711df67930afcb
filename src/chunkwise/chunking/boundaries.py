"""Boundary finders: each returns candidate cuts as ``(position, Level)``.

A cut at ``p`` ends a piece at ``p``; whitespace after it is skipped by the packer. Finders run once
per document with C-level regex scans; words and single units are found lazily by the packer.
"""
from __future__ import annotations

import re
from typing import Iterator

from chunkwise.chunking.levels import Level

_PARA = re.compile(r"\n[ \t\r\f\v]*\n")
_LINE = re.compile(r"\n")
# Sentence end: terminal punctuation, optional closing quotes/brackets, then whitespace (Latin) or
# nothing at all (CJK full stops need no space).
_SENT_LATIN = re.compile(r"[.!?…]+[\"'”’)\]»]*(?=\s)")
_SENT_CJK = re.compile(r"[。！？][」』”’)）]*")
_ABBREV = frozenset(
    "e.g i.e etc vs mr mrs ms dr prof st sr jr no fig figs eq al approx cf ca inc ltd co corp dept est "
    "jan feb mar apr jun jul aug sep sept oct nov dec mt ft vol pp ed".split()
)
_WORD_BEFORE = re.compile(r"([\w.]+)$")


def paragraphs(text: str, start: int = 0, end: int | None = None) -> Iterator[tuple[int, Level]]:
    end = len(text) if end is None else end
    for m in _PARA.finditer(text, start, end):
        yield m.start(), Level.BLOCK


def lines(text: str, start: int = 0, end: int | None = None, level: Level = Level.LINE) -> Iterator[tuple[int, Level]]:
    end = len(text) if end is None else end
    for m in _LINE.finditer(text, start, end):
        yield m.start(), level


def _is_abbreviation(text: str, dot: int) -> bool:
    if text[dot] != ".":
        return False
    m = _WORD_BEFORE.search(text, max(0, dot - 20), dot)
    if not m:
        return False
    word = m.group(1).lower().rstrip(".")
    if word in _ABBREV:
        return True
    return len(word) == 1 and word.isalpha()  # an initial: "J. Smith"


def sentences(text: str, start: int = 0, end: int | None = None) -> Iterator[tuple[int, Level]]:
    """Sentence ends. A heuristic on purpose: fast, offset-exact, language-light; it skips common
    abbreviations and initials and does not end a sentence before a lowercase continuation."""
    end = len(text) if end is None else end
    for m in _SENT_LATIN.finditer(text, start, end):
        p = m.end()
        nxt = p
        while nxt < end and text[nxt].isspace():
            nxt += 1
        if nxt < end and text[nxt].islower():
            continue
        if _is_abbreviation(text, m.start()):
            continue
        yield p, Level.SENTENCE
    for m in _SENT_CJK.finditer(text, start, end):
        yield m.end(), Level.SENTENCE


def literal(text: str, sep: str, level: Level, start: int = 0, end: int | None = None) -> Iterator[tuple[int, Level]]:
    """A user separator: whitespace separators cut before themselves, others (".", "?") after."""
    end = len(text) if end is None else end
    keep = not sep.isspace()
    pat = re.compile(re.escape(sep))
    for m in pat.finditer(text, start, end):
        yield (m.end() if keep else m.start()), level


def sentence_spans(text: str, start: int = 0, end: int | None = None) -> list[tuple[int, int]]:
    """Sentences as trimmed spans, paragraph and line-block ends counting as sentence ends."""
    end = len(text) if end is None else end
    cuts = sorted({p for p, _ in sentences(text, start, end)} | {p for p, _ in paragraphs(text, start, end)})
    spans = []
    a = start
    for p in [*cuts, end]:
        s, e = a, p
        while s < e and text[s].isspace():
            s += 1
        while e > s and text[e - 1].isspace():
            e -= 1
        if e > s:
            spans.append((s, e))
        a = p
    return spans
