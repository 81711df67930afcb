"""THE packing algorithm, written once.

Strategies only say where a cut may go and how good it is (``Level``). ``pack`` measures the text
between candidate cuts in one batched sizer call, then walks forward greedily: from the current start
it finds how far the budget reaches (bisect on prefix sums) and cuts at the *highest* level available
in that reach, as far as possible. When no candidate fits, the piece is split inside at whitespace
(or between CJK characters), and only if a single word is over budget at a unit boundary — tokenizing
just that piece, once. Text is never re-tokenized candidate by candidate.
"""
from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from dataclasses import dataclass
from itertools import accumulate
from typing import Iterable, Sequence

from chunkwise.chunking.levels import Level
from chunkwise.chunking.sizing import CharSizer, Sizer

_NONWS = re.compile(r"\S")
# Python calls these whitespace; tokenizers treat them as control characters and delete them, so a
# cut next to one may join two words into one token.
_SOFT_SPACE = frozenset("\x0b\x0c\x1c\x1d\x1e\x1f\x85")


def hard_space(ch: str) -> bool:
    return ch.isspace() and ch not in _SOFT_SPACE
_WS_CHARS = (" ", "\n", "\t", "\u3000", "\xa0", "\r")


def is_cjk(ch: str) -> bool:
    o = ord(ch)
    return (
        0x3040 <= o <= 0x30FF  # kana
        or 0x3400 <= o <= 0x4DBF
        or 0x4E00 <= o <= 0x9FFF
        or 0xF900 <= o <= 0xFAFF
        or 0xAC00 <= o <= 0xD7AF  # hangul syllables
        or 0x3000 <= o <= 0x303F  # CJK punctuation
        or 0xFF00 <= o <= 0xFFEF  # full-width forms
    )


@dataclass(frozen=True, slots=True)
class Piece:
    start: int
    end: int
    size: int  # body units (estimate for inexact sizers; chunkers re-measure the embedded text)
    level: Level
    review: bool = False
    exact: bool = True  # False when a candidate cut inside the piece split a word: size is an estimate


def skip_ws(text: str, pos: int, end: int) -> int:
    m = _NONWS.search(text, pos, end)
    return m.start() if m else end


def trim_end(text: str, start: int, end: int) -> int:
    while end > start and text[end - 1].isspace():
        end -= 1
    return end


def merge_cuts(cuts: Iterable[tuple[int, Level]], start: int, end: int) -> tuple[list[int], list[Level]]:
    """Sorted unique cut positions strictly inside (start, end), each with its best level."""
    best: dict[int, Level] = {}
    for pos, level in cuts:
        if start < pos < end and best.get(pos, -1) < level:
            best[pos] = level
    positions = sorted(best)
    return positions, [best[p] for p in positions]


class _Segments:
    """The region cut at every candidate, measured once, with prefix sums for O(log n) reach queries."""

    def __init__(self, text: str, start: int, end: int, positions: list[int], levels: list[Level], sizer: Sizer):
        self.text = text
        self.pos = [start, *positions, end]
        self.lev = [Level.END, *levels, Level.END]
        counts = sizer.count_many([text[a:b] for a, b in zip(self.pos, self.pos[1:])])
        self.prefix = [0, *accumulate(counts)]
        self.by_level: dict[Level, list[int]] = {}
        for i in range(1, len(self.pos)):
            self.by_level.setdefault(self.lev[i], []).append(i)
        self.order = sorted(self.by_level, reverse=True)
        # Cuts with text on both sides split a word, so counts of the pieces may not add up.
        dirty = [0] * len(self.pos)
        for i in range(1, len(self.pos) - 1):
            p = self.pos[i]
            dirty[i] = dirty[i - 1] + (not hard_space(text[p - 1]) and not hard_space(text[p]))
        dirty[-1] = dirty[-2] if len(dirty) > 1 else 0
        self.dirty = dirty
        self.sizer = sizer
        self._spans: dict[int, tuple[Sequence[int], Sequence[int]]] = {}

    def segment_of(self, s: int, hint: int) -> int:
        k = hint
        while self.pos[k + 1] <= s:
            k += 1
        return k

    def spans(self, k: int) -> tuple[Sequence[int], Sequence[int]]:
        if k not in self._spans:
            self._spans[k] = self.sizer.spans(self.text[self.pos[k] : self.pos[k + 1]])
        return self._spans[k]

    def units_before(self, k: int, s: int) -> int:
        """Prefix coordinate of position ``s`` inside segment ``k``."""
        rel = s - self.pos[k]
        if rel == 0:
            return self.prefix[k]
        if k in self._spans:
            return self.prefix[k] + bisect_left(self._spans[k][0], rel)
        if isinstance(self.sizer, CharSizer):
            return self.prefix[k] + rel
        return self.prefix[k]  # only whitespace was skipped: free for exact sizers

    def best_cut(self, k: int, j: int) -> int:
        """Highest-level candidate index in (k, j], the furthest one at that level."""
        for level in self.order:
            lst = self.by_level[level]
            i = bisect_right(lst, j) - 1
            if i >= 0 and lst[i] > k:
                return lst[i]
        raise AssertionError("best_cut called with an empty range")


def _last_break(text: str, s: int, limit: int) -> tuple[int, Level] | None:
    """Furthest whitespace or CJK-character boundary p with s < p <= limit."""
    best = -1
    for ch in _WS_CHARS:
        i = text.rfind(ch, s + 1, limit + 1)
        if i > best:
            best = i
    for p in range(limit, max(best, s, limit - 64), -1):
        if p < len(text) and is_cjk(text[p - 1]) and is_cjk(text[p]):
            return p, Level.WORD
    if best > s:
        return best, Level.WORD
    return None


def _word_start_at_or_after(text: str, q: int, limit: int) -> int:
    """First position >= q that begins a word (so overlap never starts mid-word); ``limit`` if none."""
    if q <= 0 or text[q - 1].isspace() or is_cjk(text[q - 1]):
        return q
    m = re.compile(r"\s").search(text, q, limit)
    return skip_ws(text, m.end(), limit) if m else limit


def pack(
    text: str,
    start: int,
    end: int,
    cuts: Iterable[tuple[int, Level]],
    sizer: Sizer,
    budget: int,
    overlap: int = 0,
    floor: Level = Level.WORD,
    floors: Sequence[tuple[int, int, Level]] = (),
) -> list[Piece]:
    """Pack ``text[start:end]`` into pieces of at most ``budget`` units.

    ``floor`` (or a per-range entry of ``floors``) is the lowest level a cut may use without the
    piece being flagged for review: a code line or table row split inside, a word split in two.
    """
    if budget < 1:
        raise ValueError("budget must be at least one unit")
    positions, levels = merge_cuts(cuts, start, end)
    seg = _Segments(text, start, end, positions, levels, sizer)
    pos, prefix = seg.pos, seg.prefix
    last = len(pos) - 1
    pieces: list[Piece] = []
    s = skip_ws(text, start, end)
    k = 0
    while s < end:
        k = seg.segment_of(s, k)
        base = seg.units_before(k, s)
        j = bisect_right(prefix, base + budget) - 1
        if j > k:
            c = seg.best_cut(k, j)
            e = trim_end(text, s, pos[c])
            clean = seg.dirty[c - 1] == seg.dirty[k]
            pieces.append(Piece(s, e, prefix[c] - base, seg.lev[c], exact=clean))
            nxt = pos[c]
            if overlap and c < last:
                q = max(bisect_left(prefix, prefix[c] - overlap), k + 1)
                if q < c:
                    nxt = pos[q]
            s = skip_ws(text, nxt, end)
            continue
        # The rest of segment k does not fit: cut inside it.
        seg_start = pos[k]
        starts, ends = seg.spans(k)
        rel = s - seg_start
        t0 = bisect_left(starts, rel)
        tl = t0 + budget  # first unit that must stay out
        limit = seg_start + starts[tl] if tl < len(starts) else pos[k + 1]
        found = _last_break(text, s, limit)
        if found is None:
            p = seg_start + ends[min(tl, len(ends)) - 1]
            level = Level.WORD if (p < end and is_cjk(text[p - 1]) and is_cjk(text[p])) else Level.UNIT
        else:
            p, level = found
        used = bisect_right(ends, p - seg_start) - t0
        e = trim_end(text, s, p)
        piece_floor = floor
        for a, b, f in floors:
            if a <= s < b or a < e <= b:
                piece_floor = max(piece_floor, f)
        pieces.append(Piece(s, e, used, level, review=level < piece_floor))
        nxt = p
        if overlap:
            t_ov = max(t0 + 1, t0 + used - overlap)
            if t_ov < t0 + used:
                q = _word_start_at_or_after(text, seg_start + starts[t_ov], p)
                if s < q < p:
                    nxt = q
        s = skip_ws(text, nxt, end)
    return pieces
