"""Issue 25 item 9: the memory limit is absolute — the worker's whole address space, what it holds
from its warm-up included — not an allowance added to what it held before each item."""
from __future__ import annotations

from chunkwise.sandbox import Limits, Pool

from hostile import Ballast


def outcomes(fn, items, memory_mb):
    with Pool(fn, workers=1, isolate=True, limits=Limits(memory_mb=memory_mb, seconds=120)) as pool:
        return list(pool.map(items))


def test_what_the_worker_holds_counts_against_the_limit():
    # 200 MB held + 150 MB for the item: over 300 MB (an allowance on top would have let it pass).
    small, big = outcomes(Ballast(200), [1, 150], memory_mb=300)
    assert small.ok and small.value == 1 << 20
    assert not big.ok and big.failure.kind == "memory" and "300 MB" in big.failure.reason


def test_a_worker_already_over_the_limit_says_so():
    (out,) = outcomes(Ballast(400), [1], memory_mb=300)
    assert not out.ok and out.failure.kind == "memory" and "already uses" in out.failure.reason
