"""Running headers, footers and page numbers: found across pages, removed with the offset map kept.

A line that opens or closes most pages ("ACME Corp - Confidential", "Page 3 of 9") is layout, not
content; left in, it lands in the middle of sentences that cross a page break and in every chunk's
embedding. Removing too much is worse than removing too little (a lost table row is lost evidence),
so a line counts as page furniture only when all of this holds:

- it sits among the first or last ``edge`` non-blank lines of its page, on the same side (top or
  bottom) on at least ``min_share`` of the pages with text (and on two pages or more);
- it is short (``MAX_HEADER_CHARS``);
- every copy is identical apart from a page number: each digit run is either the same on every copy
  or counts the pages (its value minus the page number is constant, "Page 3 of 9" / "Page 4 of 9");
- a line that is identical on every copy has words in it (two letters or more): a constant line of
  digits and punctuation ("07/17/2015", "$ 1,250.00") is data that happens to repeat, not furniture;
- what is removed is less than ``MAX_REMOVED_SHARE`` of the document's visible characters: a
  document made only of near-identical pages (receipts, forms) keeps its text, and the refusal is
  reported (``RunningLines.refused``) so ``audit`` can say so.
"""
from __future__ import annotations

import math
import re
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from chunkwise.errors import ConfigError
from chunkwise.normalise.offsets import Edit, Normalised, apply_edits
from chunkwise.types import Document

MAX_HEADER_CHARS = 80
MAX_REMOVED_SHARE = 0.5  # never strip half a document's visible text as "headers"
MIN_PAGES = 4  # with fewer pages a repeated line is as likely content as furniture
_LINE_RE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)?")
_DIGITS_RE = re.compile(r"\d+")
_ROMAN_RE = re.compile(r"[ivxlcdm]{1,7}", re.IGNORECASE)
_LETTERS_RE = re.compile(r"[^\W\d_]{2}")
_ROMAN = {"i": 1, "v": 5, "x": 10, "l": 50, "c": 100, "d": 500, "m": 1000}


def line_key(line: str) -> str:
    """What two header lines must share: the same words, digit runs ignored ("Page 3 of 9" and
    "Page 10 of 9" -> "Page # of #"); a line that is only a roman numeral counts as a page number."""
    key = " ".join(line.split())
    if _ROMAN_RE.fullmatch(key):
        return "#"
    return _DIGITS_RE.sub("#", key)


def _edges(page: str, edge: int) -> list[tuple[int, int, str, str]]:
    """``(start, end, text, side)`` of the edge lines; a short page's lines are both top and bottom."""
    lines = [(m.start(), m.end(), m.group()) for m in _LINE_RE.finditer(page) if m.group().strip()]
    if len(lines) <= 2 * edge:
        half = (len(lines) + 1) // 2
        return [(s, e, t, "top" if i < half else "bottom") for i, (s, e, t) in enumerate(lines)]
    return [(s, e, t, "top") for s, e, t in lines[:edge]] + [(s, e, t, "bottom") for s, e, t in lines[-edge:]]


@dataclass(frozen=True)
class RunningLines:
    """What running-header removal found in one document.

    ``lines``: the accepted line keys ("Page # of #"); ``spans``: the ``(start, end)`` ranges of
    ``doc.text`` they occupy; ``shown``: one readable entry per removed line with its page count;
    ``refused``: why nothing was removed although lines repeat ("" when removal went ahead)."""

    lines: frozenset[str] = frozenset()
    spans: tuple[tuple[int, int], ...] = ()
    shown: tuple[str, ...] = ()
    refused: str = ""


def _number(token: str) -> int:
    if token.isdigit():
        return int(token)
    total, prev = 0, 0
    for ch in reversed(token.lower()):
        v = _ROMAN[ch]
        total, prev = (total - v, prev) if v < prev else (total + v, v)
    return total


def _values(text: str) -> list[int]:
    t = " ".join(text.split())
    return [_number(t)] if _ROMAN_RE.fullmatch(t) else [int(d) for d in _DIGITS_RE.findall(t)]


def _furniture(key: str, copies: list[tuple[int, str]], need: int) -> list[int] | None:
    """Indexes of the copies that are one running line (see the module rules), or None."""
    values = [_values(text) for _, text in copies]
    slots = len(values[0])
    if any(len(v) != slots for v in values):
        return None
    keep = list(range(len(copies)))
    counter = False
    for i in range(slots):
        const = Counter(values[k][i] for k in keep)
        ctr = Counter(values[k][i] - copies[k][0] for k in keep)
        (cv, cn), (dv, dn) = const.most_common(1)[0], ctr.most_common(1)[0]
        if dn > cn:
            counter = True
            keep = [k for k in keep if values[k][i] - copies[k][0] == dv]
        else:
            keep = [k for k in keep if values[k][i] == cv]
    if len({copies[k][0] for k in keep}) < need:
        return None
    if not counter and not _LETTERS_RE.search(key):
        return None
    return keep


def running_lines(doc: Document, *, min_share: float = 0.6, edge: int = 3) -> RunningLines:
    """Find the running headers/footers of a paged Document (see the module rules)."""
    if not 0 < min_share <= 1:
        raise ConfigError(f"min_share must be in (0, 1], got {min_share}; 0.6 means 'on 60% of pages'")
    pages = [(p.number, p.start, doc.text[p.start : p.end]) for p in doc.pages]
    return _find([(n, s, t) for n, s, t in pages if t.strip()], min_share, edge, doc.text)


def _find(pages: list[tuple[int, int, str]], min_share: float, edge: int, full: str) -> RunningLines:
    if len(pages) < 2:
        return RunningLines()
    groups: dict[tuple[str, str], list[tuple[int, str, int, int]]] = defaultdict(list)
    for number, base, text in pages:
        for s, e, line, side in _edges(text, edge):
            key = line_key(line)
            if len(key) <= MAX_HEADER_CHARS:
                groups[(side, key)].append((number, line, base + s, base + e))
    need = max(2, math.ceil(min_share * len(pages) - 1e-9))
    keys: set[str] = set()
    spans: set[tuple[int, int]] = set()
    shown: list[str] = []
    for (_, key), copies in groups.items():
        if len({c[0] for c in copies}) < need:
            continue
        keep = _furniture(key, [(c[0], c[1]) for c in copies], need)
        if keep is None:
            continue
        keys.add(key)
        spans.update((copies[k][2], copies[k][3]) for k in keep)
        text = " ".join(copies[keep[0]][1].split())
        shown.append(f"{key if '#' in key else text} ({len({copies[k][0] for k in keep})} pages)")
    if not spans:
        return RunningLines()
    removed = sum(len(full[s:e].strip()) for s, e in spans)
    visible = sum(len("".join(t.split())) for _, _, t in pages)
    if visible and removed >= MAX_REMOVED_SHARE * visible:
        return RunningLines(refused=f"{len(keys)} repeated line(s) ({', '.join(sorted(shown)[:3])}) make up "
                                    f"{removed / visible:.0%} of the text; kept, as they are content, not page furniture")
    return RunningLines(frozenset(keys), tuple(sorted(spans)), tuple(sorted(shown)))


def find_repeated_lines(pages: Sequence[str], min_share: float = 0.6, edge: int = 3) -> set[str]:
    """Keys (see ``line_key``) of running lines in ``pages`` (page texts, numbered from 1)."""
    if not 0 < min_share <= 1:
        raise ConfigError(f"min_share must be in (0, 1], got {min_share}; 0.6 means 'on 60% of pages'")
    found, pos, parts = [], 0, []
    for n, text in enumerate(pages, 1):
        if text.strip():
            found.append((n, pos, text))
        parts.append(text)
        pos += len(text)
    return set(_find(found, min_share, edge, "".join(parts)).lines)


def strip_repeated_lines(
    doc: Document, lines: set[str] | None = None, *, min_share: float = 0.6, edge: int = 3
) -> Normalised:
    """``doc.text`` without its running headers/footers (found with ``running_lines``; ``lines``
    narrows them to those keys), mapped back to ``doc.text``. A document without pages is unchanged."""
    if not doc.pages or lines is not None and not lines:
        return Normalised.identity(doc.text)
    found = running_lines(doc, min_share=min_share, edge=edge)
    spans = found.spans
    if lines is not None:
        spans = tuple((s, e) for s, e in spans if line_key(doc.text[s:e]) in lines)
    edits: list[Edit] = [(s, e, "") for s, e in spans]
    return apply_edits(doc.text, edits)
