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

        key = caller_groups(groups).tags
        m = self._masks.get(key)
        if m is None:
            m = np.zeros(self.size, dtype=bool)
            for a, b in self.slices(key):
                m[a:b] = True
            if len(self._masks) >= 32:
                self._masks.pop(next(iter(self._masks)))
            self._masks[key] = m
        return m
