"""Where a chunk is on its pages: the (page, box) list a citation highlights.

A chunk's boxes are those of the blocks its span overlaps (``Block.meta["boxes"]``, PDF only: points
from the page's top left), at block granularity: a chunk that starts mid-paragraph gets the whole
paragraph's box. Why blocks: they are what the extractor located; a finer cut would need a box per
line kept for every block. Formats without pages have no boxes, and their records an empty list.
"""
from __future__ import annotations

from bisect import bisect_left, bisect_right
from itertools import accumulate
from typing import Callable, Sequence

from chunkwise.types import Block

Box = tuple  # (page, x0, top, x1, bottom)


def box_finder(blocks: Sequence[Block]) -> Callable[[int, int], tuple[Box, ...]]:
    """A function giving the boxes of the blocks overlapping [start, end), in text order, each once."""
    boxed = sorted((b.start, b.end, tuple(tuple(x) for x in b.meta["boxes"]))
                   for b in blocks if b.meta and b.meta.get("boxes"))
    if not boxed:
        return lambda start, end: ()
    starts = [b[0] for b in boxed]
    reach = list(accumulate((b[1] for b in boxed), max))  # blocks may nest: the furthest end so far

    def find(start: int, end: int) -> tuple[Box, ...]:
        out: dict[Box, None] = {}
        for s, e, boxes in boxed[bisect_right(reach, start) : bisect_left(starts, max(end, start + 1))]:
            if s < end and start < e:
                out.update(dict.fromkeys(boxes))
        return tuple(out)

    return find
