"""Reciprocal rank fusion and deterministic top-k: pure functions over plain arrays."""
from __future__ import annotations

from typing import Hashable, Sequence

RRF_K = 60  # Cormack et al.'s constant; damps the head so one list cannot dominate


def rrf(rankings: Sequence[Sequence[Hashable]], k: int = RRF_K) -> list[tuple[Hashable, float]]:
    """Fuse ranked lists of ids: score(id) = sum over lists of 1 / (k + rank). Ties are broken by
    the best single rank, then by the id itself, so the order never depends on dict order."""
    scores: dict[Hashable, float] = {}
    best: dict[Hashable, int] = {}
    for ranking in rankings:
        for rank, item in enumerate(ranking, start=1):
            scores[item] = scores.get(item, 0.0) + 1.0 / (k + rank)
            best[item] = min(best.get(item, rank), rank)
    return sorted(scores.items(), key=lambda kv: (-kv[1], best[kv[0]], kv[0]))


def top_k(scores, k: int, tiebreak, candidates=None):
    """Indices of the ``k`` largest ``scores`` (numpy), ties broken by ascending ``tiebreak``
    (an integer array aligned with ``scores``). Only positions in ``candidates`` (if given) and
    with a score above zero are considered by callers that pass pre-masked candidates.

    Uses argpartition, then keeps every element tied with the k-th so that the tie-break, not
    the partition's internal order, decides who is in."""
    import numpy as np

    idx = np.arange(len(scores)) if candidates is None else np.asarray(candidates)
    if k <= 0 or idx.size == 0:
        return idx[:0]
    vals = scores[idx] if candidates is not None else scores
    if idx.size > k:
        kth = np.partition(vals, idx.size - k)[idx.size - k]
        keep = vals >= kth
        idx, vals = idx[keep], vals[keep]
    order = np.lexsort((tiebreak[idx], -vals))
    return idx[order[:k]]
