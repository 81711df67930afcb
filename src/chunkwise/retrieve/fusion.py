"""Reciprocal rank fusion and deterministic top-k: pure functions over plain arrays."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Hashable, Mapping, Sequence

from chunkwise.errors import ConfigError
from chunkwise.lexical import check_weight, parse_weights

RRF_K = 60  # Cormack et al.'s constant; damps the head so one list cannot dominate


def rrf(rankings: Sequence[Sequence[Hashable]], k: int = RRF_K,
        weights: Sequence[float] | None = None) -> list[tuple[Hashable, float]]:
    """Fuse ranked lists of ids: score(id) = sum over lists of weight / (k + rank) (weights 1 unless
    given; an id only in a list weighted 0 still comes back, after the others). Ties are broken by
    the best single rank, then by the id itself, so the order never depends on dict order."""
    weights = [1.0] * len(rankings) if weights is None else list(weights)
    if len(weights) != len(rankings):
        raise ValueError(f"{len(weights)} weights for {len(rankings)} rankings")
    scores: dict[Hashable, float] = {}
    best: dict[Hashable, int] = {}
    for ranking, w in zip(rankings, weights):
        for rank, item in enumerate(ranking, start=1):
            scores[item] = scores.get(item, 0.0) + w / (k + rank)
            best[item] = min(best.get(item, rank), rank)
    return sorted(scores.items(), key=lambda kv: (-kv[1], best[kv[0]], kv[0]))


@dataclass(frozen=True)
class Fusion:
    """How hybrid search fuses its BM25 and dense lists: weighted RRF, ``bm25 / (k + rank) + dense /
    (k + rank)``. Equal weights are plain RRF; a weight of 0 leaves that list out."""

    bm25: float = 1.0
    dense: float = 1.0
    k: int = RRF_K

    def __post_init__(self) -> None:
        for name in ("bm25", "dense"):
            check_weight(f"fusion weight {name}", getattr(self, name))
        if self.bm25 == 0 and self.dense == 0:
            raise ConfigError("fusion weights bm25 and dense cannot both be 0 (use --mode bm25 or dense instead)")
        if isinstance(self.k, bool) or not isinstance(self.k, int) or not 1 <= self.k <= 10_000:
            raise ConfigError(f"fusion k must be an integer from 1 to 10000, got {self.k!r}")

    @classmethod
    def parse(cls, value: "Fusion | Mapping | str | None") -> "Fusion":
        """``None`` (defaults), a mapping, or ``"bm25=1,dense=0.5"`` (the CLI's form; ``k=N`` too)."""
        if value is None or isinstance(value, Fusion):
            return value or cls()
        if isinstance(value, str):
            value = parse_weights(value, "fusion weights", ("bm25", "dense", "k"))
        value = dict(value)
        unknown = sorted(set(value) - {"bm25", "dense", "k"})
        if unknown:
            raise ConfigError(f"unknown name {unknown[0]!r} in fusion weights; use bm25=N,dense=N[,k=N]")
        if "k" in value and isinstance(value["k"], float) and value["k"].is_integer():
            value["k"] = int(value["k"])
        return cls(**value)

    def spec(self) -> str:
        """The CLI's form, ``bm25=N,dense=N,k=N`` (parses back to an equal value)."""
        return f"bm25={self.bm25:g},dense={self.dense:g},k={self.k}"

    def fuse(self, bm25: Sequence[Hashable], dense: Sequence[Hashable]) -> list[tuple[Hashable, float]]:
        return rrf([bm25, dense], self.k, (self.bm25, self.dense))


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
