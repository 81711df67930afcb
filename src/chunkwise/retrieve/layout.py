"""Rows grouped by access signature, so a permission filter is a few contiguous slices.

Only servable chunks (ready, at least one tag) are ever given to an index: the filter is not a
step that could be forgotten, an unservable chunk is simply not there. Rows are ordered by their
tag set, so the rows a caller may see form one slice per distinct tag set they share a tag with;
dense scoring reads only those slices and BM25 masks with them before taking the top k.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

from chunkwise.access import caller_groups


@dataclass
class AccessLayout:
    order: "object"  # numpy int array: position in the index -> input row
    signatures: list[tuple[str, ...]]
    bounds: list[tuple[int, int]]  # per signature, [start, end) in index positions
    by_tag: dict[str, list[int]]  # tag -> signature numbers
    _masks: dict = field(default_factory=dict, repr=False)
    _visible: dict = field(default_factory=dict, repr=False)

    @classmethod
    def build(cls, tags: Sequence[tuple[str, ...]], tiebreak: Sequence[int]) -> "AccessLayout":
        import numpy as np

        sigs = [tuple(sorted(set(t))) for t in tags]
        distinct = sorted(set(sigs))
        number = {s: i for i, s in enumerate(distinct)}
        sig_of = np.fromiter((number[s] for s in sigs), dtype=np.int64, count=len(sigs))
        order = np.lexsort((np.asarray(tiebreak, dtype=np.int64), sig_of)) if len(sigs) else np.zeros(0, np.int64)
        counts = np.bincount(sig_of, minlength=len(distinct)) if len(sigs) else np.zeros(0, np.int64)
        ends = np.cumsum(counts)
        bounds = [(int(e - c), int(e)) for c, e in zip(counts, ends)]
        by_tag: dict[str, list[int]] = {}
        for i, s in enumerate(distinct):
            for t in s:
                by_tag.setdefault(t, []).append(i)
        return cls(order, distinct, bounds, by_tag)

    @property
    def size(self) -> int:
        return len(self.order)

    def slices(self, groups) -> list[tuple[int, int]]:
        """Contiguous [start, end) position ranges the caller may see, adjacent ranges joined."""
        chosen = sorted({s for g in caller_groups(groups) for s in self.by_tag.get(g, ())})
        out: list[tuple[int, int]] = []
        for s in chosen:
            a, b = self.bounds[s]
            if a == b:
                continue
            if out and out[-1][1] == a:
                out[-1] = (out[-1][0], b)
            else:
                out.append((a, b))
        return out

    def mask(self, groups):
        """Boolean array over positions; cached per group set (callers repeat their groups)."""
        import numpy as np

        def build(key):
            m = np.zeros(self.size, dtype=bool)
            for a, b in self.slices(key):
                m[a:b] = True
            return m

        return _cached(self._masks, caller_groups(groups).tags, build)

    def visible(self, groups) -> "Visible":
        """The caller's slices as ``Visible``; cached per group set like ``mask``."""
        return _cached(self._visible, caller_groups(groups).tags, lambda key: Visible.of(self.slices(key)))


def _cached(cache: dict, key, build):
    """``cache[key]``, built on a miss; the oldest of 32 entries goes first. Search threads share
    the cache: two may evict at once, so eviction tolerates a key another thread just removed."""
    value = cache.get(key)
    if value is None:
        if len(cache) >= 32:
            try:
                cache.pop(next(iter(cache)), None)
            except (StopIteration, RuntimeError):  # emptied or resized by another thread meanwhile
                pass
        value = cache[key] = build(key)
    return value


@dataclass(frozen=True)
class Visible:
    """The positions a caller may see as sorted, disjoint [start, end) ranges, and the same rows
    numbered 0..n-1 in position order (``where[j]``: the position of the j-th). A term's postings
    are sorted by position, so the caller's part of them is one binary search per range, not a
    pass over all of them through a mask; and scores summed in the caller's own numbering need an
    array of the rows they may see, not one of the whole index."""

    starts: "object"  # numpy int64, one entry per range
    ends: "object"
    shift: "object"  # per range: a position minus this is its number in the caller's numbering
    where: "object"  # numpy int64: the position of each visible row, ascending

    @classmethod
    def of(cls, slices: Sequence[tuple[int, int]]) -> "Visible":
        import numpy as np

        starts = np.array([a for a, _ in slices], dtype=np.int64)
        ends = np.array([b for _, b in slices], dtype=np.int64)
        lengths = ends - starts
        where = np.concatenate([np.arange(a, b, dtype=np.int64) for a, b in slices]) if slices \
            else np.zeros(0, np.int64)
        return cls(starts, ends, starts - (np.cumsum(lengths) - lengths), where)

    @property
    def size(self) -> int:
        return len(self.where)
