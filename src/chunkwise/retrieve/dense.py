"""Exact cosine search over unit vectors, reading only the rows the caller may see.

Rows are stored in access-layout order, so the permitted rows are a few contiguous slices and the
scan is one matrix–vector product per slice: no copy, no mask over rows the caller cannot see.
Exact search returns k permitted results whenever k exist, which an approximate index that can
only post-filter cannot promise (issue 5's usearch measurement: up to 45% of queries short).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

MANY_SLICES = 64  # beyond this many slices, one gather beats many small products
SPLIT_ROWS = 100_000  # from this many permitted rows, the product runs in two threads (two halves)
SCORE_SLACK = 1e-5  # > the float32 rounding of a cosine computed by a BLAS product (or a server)


def exact_scores(rows, query):
    """The cosine of each (unit) row with the (unit) query, accumulated in float64 and rounded to
    float32: a function of the row and the query alone. A float32 BLAS product rounds differently
    with the matrix's shape, so two engines (an in-memory matrix, a server's candidates) would
    order near-ties differently; the final ranking is always made with these scores."""
    import numpy as np

    return (np.asarray(rows, dtype=np.float64) @ np.asarray(query, dtype=np.float64)).astype(np.float32)


def near_top(scores, k: int):
    """Positions of the scores within ``SCORE_SLACK`` of the ``k``-th largest (all when <= k): a
    superset of the top ``k`` by ``exact_scores``."""
    import numpy as np

    if scores.size <= k:
        return np.arange(scores.size)
    kth = np.partition(scores, scores.size - k)[scores.size - k]
    return np.flatnonzero(scores >= kth - SCORE_SLACK)


def normalise(vectors):
    """float32 rows of unit length; an all-zero row stays zero (it can never be similar to anything)."""
    import numpy as np

    m = np.asarray(vectors, dtype=np.float32)
    if m.ndim == 1:
        m = m.reshape(1, -1)
    norms = np.linalg.norm(m, axis=1, keepdims=True)
    return np.divide(m, norms, out=np.zeros_like(m), where=norms > 0)


def _split(slices: Sequence[tuple[int, int]], count: int) -> tuple[list, list]:
    """``slices`` cut after their first ``count`` rows, in their order: (those rows' slices, the rest)."""
    first, rest, seen = [], [], 0
    for a, b in slices:
        if seen >= count:
            rest.append((a, b))
        elif seen + (b - a) <= count:
            first.append((a, b))
        else:
            first.append((a, a + count - seen))
            rest.append((a + count - seen, b))
        seen += b - a
    return first, rest


@dataclass
class DenseMatrix:
    rows: "object"  # (n, dim) float32, unit length, in index-position order

    @property
    def dim(self) -> int:
        return int(self.rows.shape[1])

    def scores(self, query, slices: Sequence[tuple[int, int]]):
        """(positions, cosine scores) of every row inside ``slices``."""
        import numpy as np

        q = normalise(query)[0]
        if q.shape[0] != self.dim:
            raise ValueError(f"query vector has {q.shape[0]} dimensions, the index {self.dim}")
        if not slices:
            return np.zeros(0, np.int64), np.zeros(0, np.float32)
        pos = np.concatenate([np.arange(a, b) for a, b in slices])
        if pos.size < max(SPLIT_ROWS, 2):
            return pos, self._product(pos, slices, q)
        # Two halves of the rows, the second in a thread: a float32 matrix-vector product is
        # memory-bound and one core does not saturate the memory bus (at 1M chunks a caller's
        # 220k rows are ~340 MB read per query).
        import threading

        half = pos.size // 2
        first, second = _split(slices, half)
        out = np.empty(pos.size, dtype=np.float32)
        failed: list = []

        def run() -> None:
            try:
                out[half:] = self._product(pos[half:], second, q)
            except BaseException as exc:  # noqa: BLE001 — re-raised in the caller's thread below
                failed.append(exc)

        worker = threading.Thread(target=run, name="chunkwise-dense-half", daemon=True)
        worker.start()
        try:
            out[:half] = self._product(pos[:half], first, q)
        finally:
            worker.join()
        if failed:
            raise failed[0]
        return pos, out

    def _product(self, pos, slices, q):
        """Cosines of the rows at ``pos`` (which ``slices`` cover, in order) with ``q``."""
        import numpy as np

        if not slices:
            return np.zeros(0, np.float32)
        if len(slices) > MANY_SLICES:
            return self.rows[pos] @ q
        return np.concatenate([self.rows[a:b] @ q for a, b in slices])

    def exact(self, pos, query):
        """``exact_scores`` of the rows at ``pos``."""
        return exact_scores(self.rows[pos], normalise(query)[0])

    @property
    def nbytes(self) -> int:
        return int(self.rows.nbytes)
