"""Balanced hard-cap fallback (seed 000): ceil(n/N) children of near-equal size instead of the
greedy 7, 7, 1 — whose "fix" of merging the tail (7, 8) breaks the cap. ``balanced_cuts`` only plans
where the children end (word boundaries); the children are handed to ``pack`` as regions, so the cap
is enforced in one place. A child smaller than ``min_tail`` is flagged for review."""
from __future__ import annotations

import math
import re
from dataclasses import replace
from itertools import accumulate

from chunkwise.chunking.base import BaseChunker, Draft, drafts_from_pieces
from chunkwise.chunking.levels import Level
from chunkwise.chunking.pack import Region

_WORD = re.compile(r"\S+")


def balanced_cuts(sizes: list[int], cap: int) -> list[int] | None:
    """Split a run of word sizes into the fewest children under ``cap``, as equal as possible.

    Returns child end indices, or None when a single word exceeds the cap. Targets follow
    ``divmod(total, count)``: the first ``extra`` children get one unit more, as in the seed.
    """
    if any(s > cap for s in sizes):
        return None
    prefix = [0, *accumulate(sizes)]
    total = prefix[-1]
    count = max(1, math.ceil(total / cap))
    while True:
        base, extra = divmod(total, count)
        ends, i, ok = [], 0, True
        for c in range(1, count + 1):
            target = c * base + min(c, extra)
            limit = prefix[i] + cap
            j = i
            # furthest word end within the cap, then the one closest to the target
            while j < len(sizes) and prefix[j + 1] <= limit and prefix[j + 1] <= target:
                j += 1
            if j < len(sizes) and prefix[j + 1] <= limit and prefix[j + 1] - target < target - prefix[j]:
                j += 1
            if j == i:
                j = i + 1
            ends.append(j)
            i = j
            if i >= len(sizes):
                break
        if i < len(sizes):
            ok = False
        if ok:
            return ends
        count += 1


class BalancedChunker(BaseChunker):
    name = "balanced"

    def drafts(self, text: str, title: str) -> list[Draft]:
        budget, _ = self.body_budget((), title)
        min_tail = self.config.min_tail or max(1, budget // 4)
        words = [(m.start(), m.end()) for m in _WORD.finditer(text)]
        if not words:
            return []
        # Each word is measured with the gap before it, so inexact sizers (characters) stay safe.
        sizes = self.sizer.count_many(
            [text[words[i - 1][1] if i else a : b] for i, (a, b) in enumerate(words)]
        )
        chars = self.body_chars((), title)
        ends = balanced_cuts(sizes, budget) if all(b - a <= chars for a, b in words) else None
        if ends is None:  # a word over the cap: greedy fallback at unit level, flagged
            return drafts_from_pieces(self.pack(text, 0, len(text), [], budget, title=title))
        # The children are regions for the shared packer, which enforces the cap (a child whose
        # estimate was low, under an inexact sizer, is cut there like any other piece).
        starts = [0, *ends[:-1]]
        regions = [Region(words[i][0], words[j - 1][1]) for i, j in zip(starts, ends)]
        cuts = [(b, Level.WORD) for _, b in words[:-1]]  # the words the plan measured, as it did
        pieces = self.pack(text, 0, len(text), cuts, budget, title=title, regions=regions)
        last = words[-1][1]
        out = []
        for d in drafts_from_pieces(pieces):
            level = Level.END if d.end == last else d.level if d.level < Level.END else Level.WORD
            short = d.size < min_tail
            out.append(replace(d, level=level, review=d.review or short,
                               reasons=(*d.reasons, "short_tail") if short else d.reasons))
        return out
