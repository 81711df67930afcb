"""The exact dense product over a caller's slices (retrieve/dense.py) split in two threads from
``SPLIT_ROWS`` rows: the same positions, in the same order, and the same cosines (to float32
rounding) as one product, whatever the slices and wherever the halves cut them; an error in the
thread reaches the caller."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from chunkwise.retrieve import dense

ROWS = 400


def _slices(cuts: list[int]) -> list[tuple[int, int]]:
    """Disjoint ascending [a, b) ranges from sorted cut points (every other gap kept)."""
    points = sorted(set([0, ROWS, *cuts]))
    return [(a, b) for i, (a, b) in enumerate(zip(points, points[1:])) if i % 2 == 0 and b > a]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(1, ROWS - 1), max_size=12), st.integers(0, 2**31 - 1), st.booleans())
def test_split_product_equals_one_product(cuts, seed, gather):
    rng = np.random.default_rng(seed)
    matrix = dense.DenseMatrix(dense.normalise(rng.standard_normal((ROWS, 24)).astype(np.float32)))
    query = rng.standard_normal(24).astype(np.float32)
    slices = _slices(cuts)
    saved = dense.SPLIT_ROWS, dense.MANY_SLICES
    try:
        dense.MANY_SLICES = 0 if gather else saved[1]  # the gather path and the per-slice path
        dense.SPLIT_ROWS = 10**9
        one = matrix.scores(query, slices)
        dense.SPLIT_ROWS = 1
        two = matrix.scores(query, slices)
    finally:
        dense.SPLIT_ROWS, dense.MANY_SLICES = saved
    assert one[0].tolist() == two[0].tolist() == [p for a, b in slices for p in range(a, b)]
    assert np.allclose(one[1], two[1], atol=1e-6)
    assert np.allclose(two[1], matrix.rows[two[0]].astype(np.float64) @ dense.normalise(query)[0], atol=1e-5)


def test_an_error_in_the_thread_reaches_the_caller(monkeypatch):
    matrix = dense.DenseMatrix(dense.normalise(np.eye(8, dtype=np.float32)))
    calls = []

    def failing(self, pos, slices, q):
        calls.append(len(pos))
        if len(calls) == 2:
            raise MemoryError("second half")
        return np.zeros(len(pos), np.float32)

    monkeypatch.setattr(dense, "SPLIT_ROWS", 1)
    monkeypatch.setattr(dense.DenseMatrix, "_product", failing)
    with pytest.raises(MemoryError):
        matrix.scores(np.ones(8, np.float32), [(0, 8)])
