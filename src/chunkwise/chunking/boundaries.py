"""Boundary finders: each returns candidate cuts as ``(position, Level)``.

A cut at ``p`` ends a piece at ``p``; whitespace after it is skipped by the packer. Finders run once
per document with C-level regex scans; words and single units are found lazily by the packer.
"""
from __future__ import annotations

import re
from functools import lru_cache
from itertools import repeat
from typing import Iterator

from chunkwise.chunking.levels import Level

_PARA = re.compile(r"\n[ \t\r\f\v]*\n")
_LINE = re.compile(r"\n")
# Sentence end: terminal punctuation, optional closing quotes/brackets, then whitespace (Latin) or
# nothing at all (CJK full stops need no space). Abbreviations and single-letter initials are ruled
# out by fixed-width look-behinds, so the whole scan stays inside the regex engine.
_ABBREV = (
    "e.g i.e etc vs mr mrs ms dr prof st sr jr no fig figs eq al approx cf ca inc ltd co corp dept est "
    "jan feb mar apr jun jul aug sep sept oct nov dec mt ft vol pp ed"
).split()
# Look-behinds sit after the dot, so they are only tried where a dot was found.
# One look-behind per abbreviation length (a look-behind must have a fixed width), tried only at a
# dot that is followed by whitespace.
_BY_LEN: dict[int, list[str]] = {}
for _a in _ABBREV:
    _BY_LEN.setdefault(len(_a), []).append(re.escape(_a))
_NOT_ABBREV = "".join(rf"(?<!\b(?:{'|'.join(v)})\.)" for v in _BY_LEN.values())
# Every alternative starts with one literal character, so the engine skips to the next ".", "!", "?"
# or "…" with its first-character scan (``[!?…]`` as one alternative would make it try the whole
# pattern at every position: twice the time).
_SENT_LATIN = re.compile(
    rf"(?:\.(?=[.!?…\"'”’)\]»]*\s)(?<!\b\w\.){_NOT_ABBREV}|!|\?|…)[.!?…]*[\"'”’)\]»]*(?=\s)", re.I
)
_CJK_STOPS = "。！？"
_SENT_CJK = re.compile(rf"[{_CJK_STOPS}][」』”’)）]*")


def paragraphs(text: str, start: int = 0, end: int | None = None) -> list[tuple[int, Level]]:
    return list(zip(paragraph_starts(text, start, end), repeat(Level.BLOCK)))


def paragraph_starts(text: str, start: int = 0, end: int | None = None) -> list[int]:
    """The positions of ``paragraphs``, without a pair each."""
    end = len(text) if end is None else end
    return list(map(re.Match.start, _PARA.finditer(text, start, end)))


def lines(text: str, start: int = 0, end: int | None = None, level: Level = Level.LINE) -> Iterator[tuple[int, Level]]:
    end = len(text) if end is None else end
    for m in _LINE.finditer(text, start, end):
        yield m.start(), level


def sentences(text: str, start: int = 0, end: int | None = None) -> list[tuple[int, Level]]:
    """Sentence ends. A heuristic on purpose: fast, offset-exact, language-light. It does not demand
    a capital after the stop (real corpora are often lower-cased), but skips common abbreviations,
    initials and decimals."""
    end = len(text) if end is None else end
    lvl = Level.SENTENCE
    out = [(m.end(), lvl) for m in _SENT_LATIN.finditer(text, start, end)]
    if _has_cjk_stop(text, start, end):
        out += [(m.end(), lvl) for m in _SENT_CJK.finditer(text, start, end)]
    return out


def _has_cjk_stop(text: str, start: int, end: int) -> bool:
    # A ``find`` a stop: far cheaper than the class scan, which finds nothing in most texts.
    return not text.isascii() and any(text.find(mark, start, end) >= 0 for mark in _CJK_STOPS)


def sentence_ends(text: str, start: int = 0, end: int | None = None) -> list[int]:
    """The positions of ``sentences``, sorted and each once (``merge_cuts``' form, all of one level):
    a Latin end is followed by whitespace inside the stretch, so each lies strictly inside it."""
    end = len(text) if end is None else end
    out = list(map(re.Match.end, _SENT_LATIN.finditer(text, start, end)))
    if _has_cjk_stop(text, start, end):
        out = sorted({*out, *map(re.Match.end, _SENT_CJK.finditer(text, start, end))} - {end})
    return out


def literal(text: str, sep: str, level: Level, start: int = 0, end: int | None = None) -> list[tuple[int, Level]]:
    """A user separator: whitespace separators cut before themselves, others (".", "?") after."""
    return list(zip(literal_positions(text, sep, start, end), repeat(level)))


def literal_positions(text: str, sep: str, start: int = 0, end: int | None = None) -> list[int]:
    """The positions of ``literal``, without a pair each."""
    end = len(text) if end is None else end
    found = _literal_pattern(sep).finditer(text, start, end)
    return list(map(re.Match.start if sep.isspace() else re.Match.end, found))


@lru_cache(maxsize=256)
def _literal_pattern(sep: str) -> re.Pattern:
    """A literal: the engine finds its first character by a ``memchr``-like scan, where a class of
    characters (``[.?!]``) is tested at every position (~4x the time)."""
    return re.compile(re.escape(sep))


def marks_only(seps: tuple[str, ...]) -> bool:
    """Every separator is one non-space character (".", "?", "!"): each cuts after itself."""
    return all(len(sep) == 1 and not sep.isspace() for sep in seps)


def mark_ends(text: str, marks: tuple[str, ...], start: int = 0, end: int | None = None) -> list[int]:
    """The ``literal`` cut positions of single-character ``marks`` (see ``marks_only``): sorted, each
    once. One literal scan a mark (see ``_literal_pattern``); ``sorted`` merges the sorted runs."""
    end = len(text) if end is None else end
    found: list[int] = []
    for mark in set(marks):
        found += map(re.Match.end, _literal_pattern(mark).finditer(text, start, end))
    return sorted(found)


def literals(text: str, seps: tuple[str, ...], level: Level, start: int = 0, end: int | None = None
             ) -> list[tuple[int, Level]]:
    """``literal`` of each of ``seps``, concatenated; in one scan when every one is a single non-space
    character (".", "?", "!"): the same positions, each once."""
    if len(seps) > 1 and marks_only(seps):
        return list(zip(mark_ends(text, seps, start, end), repeat(level)))
    return [cut for sep in seps for cut in literal(text, sep, level, start, end)]


def sentence_spans(text: str, start: int = 0, end: int | None = None) -> list[tuple[int, int]]:
    """Sentences as trimmed spans, paragraph and line-block ends counting as sentence ends."""
    end = len(text) if end is None else end
    cuts = sorted({p for p, _ in sentences(text, start, end)} | {p for p, _ in paragraphs(text, start, end)})
    return trimmed_spans(text, cuts, start, end)


def trimmed_spans(text: str, cuts, start: int, end: int) -> list[tuple[int, int]]:
    """The non-blank stretches between sorted ``cuts`` inside ``[start, end)``, whitespace trimmed."""
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
