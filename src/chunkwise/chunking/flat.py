"""The packer's top level held in numpy arrays, for cuts that are all of one level (fixed windows).

Why: fixed windows give the packer every word end as a candidate (~230,000 a MB). As Python lists
(positions, levels, prefix sums, per-level index lists, a dirty-cut scan) they cost more than the
tokenizer pass itself, while the walk that reads them touches only a few entries per window. Here
the positions, counts and prefix sums stay arrays; a window's reach is two ``searchsorted`` calls.
With one level below ``END``, ``_Segments.best_cut`` always returns the furthest candidate in
reach, so that is what ``reach`` takes. Everything else (a segment longer than the budget, the
fine levels inside it, ``Piece`` flags) is the generic packer's, unchanged: ``flat_segments``
returns None wherever this shortcut does not hold (several levels, long segments) and the generic
``_Segments`` packs instead. A test holds the pieces equal to the generic packer's.
"""
from __future__ import annotations

from bisect import insort
from typing import Callable

import numpy as np

from chunkwise.chunking.codes import char_codes
from chunkwise.chunking.levels import Level

# ``pack._PLAIN_SPACE`` (this module does not import the packer: the packer imports it).
_PLAIN_CODES = np.array([ord(c) for c in " \n\t\r"])


def _plain(codes: np.ndarray) -> np.ndarray:
    out = codes == _PLAIN_CODES[0]
    for c in _PLAIN_CODES[1:].tolist():
        out |= codes == c
    return out


def count_spans_array(sizer, text: str, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """``sizer.count_spans`` of array spans, as an array (a sizer may count arrays natively)."""
    native = getattr(sizer, "count_spans_array", None)
    if native is not None:
        return native(text, starts, ends)
    return np.asarray(sizer.count_spans(text, starts.tolist(), ends.tolist()), dtype=np.int64)


def flat_segments(ctx, start: int, end: int, cuts: tuple, child_of: Callable, clean_cut: Callable
                  ) -> "FlatSegments | None":
    """The top level of ``pack`` for ``cuts`` = (sorted unique positions strictly inside
    (start, end), their levels), or None when the generic ``_Segments`` must do it. ``ctx`` is the
    packer's ``_Ctx``; ``child_of`` and ``clean_cut`` are the packer's functions of those names."""
    positions, levels = cuts
    if len(positions) == 0:
        return None
    level = levels[0]
    if level >= Level.END or not isinstance(levels, (list, tuple)) or levels.count(level) != len(levels):
        return None
    pos = np.empty(len(positions) + 2, dtype=np.int64)
    pos[0], pos[-1] = start, end
    pos[1:-1] = positions
    lengths = np.diff(pos)
    if int(lengths.max()) > ctx.long or (lengths <= 0).any():  # long segments get a plan: generic
        return None
    codes = char_codes(ctx.text)
    if codes is None:
        return None
    counts = count_spans_array(ctx.sizer, ctx.text, pos[:-1], pos[1:])
    return FlatSegments(ctx, pos, counts, Level(level), codes, child_of, clean_cut)


class FlatSegments:
    """``_Segments`` at depth 0 with every inner cut of one level, held in arrays (see the module)."""

    depth = 0

    def __init__(self, ctx, pos: np.ndarray, counts: np.ndarray, level: Level, codes: np.ndarray,
                 child_of: Callable, clean_cut: Callable):
        self.ctx = ctx
        self._child_of = child_of
        self.pos = pos
        self.level = level
        self.last = len(pos) - 1
        self.prefix = np.zeros(len(pos), dtype=np.int64)
        np.cumsum(counts, out=self.prefix[1:])
        self._children: dict = {}
        # Cuts with no plain space on either side may split a word (``_Segments.__init__``).
        inner = pos[1:-1]
        doubt = inner[~_plain(codes[inner]) & ~_plain(codes[inner - 1])]
        text = ctx.text
        for p in doubt.tolist():
            if not clean_cut(text, p):
                insort(ctx.dirty, p)

    @property
    def total(self) -> int:
        return int(self.prefix[-1])

    def segment_of(self, s: int) -> int:
        return int(self.pos.searchsorted(s, "right")) - 1

    def child(self, k: int):
        if k not in self._children:
            self._children[k] = self._child_of(self.ctx, 0, int(self.pos[k]), int(self.pos[k + 1]),
                                         int(self.prefix[k + 1] - self.prefix[k]))
        return self._children[k]

    def units_before(self, s: int, k: int | None = None) -> tuple[int, bool]:
        """Units before ``s`` (``k``: its segment, when the caller has it) and whether that is exact."""
        if k is None:
            k = self.segment_of(s)
        here = int(self.prefix[k])
        if s == self.pos[k]:
            return here, True
        kid = self._children.get(k)
        if kid is None:
            return here, True
        inner, exact = kid.units_before(s)
        return here + inner, exact and kid.total == int(self.prefix[k + 1]) - here

    def reach(self, s: int, budget: int, overlap: int, limit: int | None = None
              ) -> tuple[int, int, Level, int, bool, bool]:
        """``_Segments.reach`` for one level of cuts: the furthest candidate in reach is the cut."""
        pos, prefix = self.pos, self.prefix
        k = self.segment_of(s)
        base, exact = self.units_before(s, k)
        j = int(prefix.searchsorted(base + budget, "right")) - 1
        j = min(j, int(pos.searchsorted(s + self.ctx.max_chars, "right")) - 1)
        if limit is not None and limit < pos[-1]:  # the end of the range cuts nothing: no search
            j = min(j, int(pos.searchsorted(limit, "right")) - 1)
        if j > k:
            c = j
            cut = int(pos[c])
            nxt = cut
            if overlap and c < self.last:
                q = max(int(prefix.searchsorted(prefix[c] - overlap, "left")), k + 1)
                if q < c:
                    nxt = int(pos[q])
            return cut, int(prefix[c]) - base, Level.END if c == self.last else self.level, nxt, exact, False
        kid = self.child(k)
        if kid is None:  # a single unit: nothing finer exists
            p = int(pos[k + 1])
            if p - s > self.ctx.max_chars:
                p = s + self.ctx.max_chars
                return p, max(1, int(prefix[k + 1]) - base), Level.UNIT, p, False, True
            return p, int(prefix[k + 1]) - base, Level.UNIT, p, exact, False
        return kid.reach(s, budget, overlap)
