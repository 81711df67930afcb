"""A ``SearchIndex`` is shared by the server's search threads (``IndexCache``): its per-caller caches
must survive another thread evicting the same entry, or emptying the cache, between this thread's
look and its own eviction. Simulated deterministically: a cache whose oldest key another thread
removes the moment this one reads it."""
from __future__ import annotations

import pytest

from chunkwise.retrieve.index import Item, MemoryIndex


class _Raced(dict):
    """A full cache: reading its oldest key lets another thread evict that key first."""

    def __iter__(self):
        first = next(super().__iter__())
        dict.pop(self, first)  # the other thread's eviction, between our look and our pop
        return iter([first])


class _Resized(dict):
    """A full cache another thread resizes while this one starts to iterate it."""

    def __iter__(self):
        raise RuntimeError("dictionary changed size during iteration")


def _index() -> MemoryIndex:
    items = [Item(f"c{i}", "d", i, 0, 5, f"harbour ledger {i}", acl=(f"g{i % 3}",)) for i in range(9)]
    return MemoryIndex(items)


@pytest.mark.parametrize("kind", [_Raced, _Resized])
def test_bm25_statistics_cache_tolerates_another_threads_eviction(kind):
    index = _index()
    full = kind({(f"other{i}",): (i, 1.0) for i in range(32)})
    index.index._stats = full
    hits = index.search("harbour", ["g1"], k=3, mode="bm25")
    assert [h.chunk_id for h in hits] and all(h.acl == ("g1",) for h in hits)
    assert ("g1",) in full  # cached for the next search


@pytest.mark.parametrize("kind", [_Raced, _Resized])
def test_layout_caches_tolerate_another_threads_eviction(kind):
    layout = _index().index.layout
    layout._masks = kind({(f"other{i}",): None for i in range(32)})
    layout._visible = kind({(f"other{i}",): None for i in range(32)})
    assert layout.mask(["g1"]).sum() == 3
    assert layout.visible(["g1"]).size == 3
