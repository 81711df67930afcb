"""Reciprocal rank fusion: a pure function over ranked lists, ties in the one order of retrieve/ties.py."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Hashable, Mapping, Sequence

from chunkwise.errors import ConfigError
from chunkwise.lexical import check_weight, parse_weights
from chunkwise.retrieve.ties import ChunkIds, settle

RRF_K = 60  # Cormack et al.'s constant; damps the head so one list cannot dominate


def rrf(rankings: Sequence[Sequence[Hashable]], k: int = RRF_K, weights: Sequence[float] | None = None,
        chunk_ids: ChunkIds | None = None, n: int | None = None) -> list[tuple[Hashable, float]]:
    """Fuse ranked lists of ids: score(id) = sum over lists of weight / (k + rank) (weights 1 unless
    given; an id only in a list weighted 0 still comes back, after the others). The first ``n``
    (None: all), best first; equal fused scores by the best single rank, then by ascending chunk id
    (retrieve/ties.py: ``chunk_ids`` names the ids of such ties; None: the ids are chunk ids)."""
    weights = [1.0] * len(rankings) if weights is None else list(weights)
    if len(weights) != len(rankings):
        raise ValueError(f"{len(weights)} weights for {len(rankings)} rankings")
    scores: dict[Hashable, float] = {}
    best: dict[Hashable, int] = {}
    for ranking, w in zip(rankings, weights):
        for rank, item in enumerate(ranking, start=1):
            scores[item] = scores.get(item, 0.0) + w / (k + rank)
            best[item] = min(best.get(item, rank), rank)
    primary = {item: (-score, best[item]) for item, score in scores.items()}
    ordered = sorted(scores, key=primary.__getitem__)
    return [(item, scores[item]) for item in settle(ordered, [primary[i] for i in ordered], n, chunk_ids)]


@dataclass(frozen=True)
class Fusion:
    """How hybrid search fuses its BM25 and dense lists: weighted RRF, ``bm25 / (k + rank) + dense /
    (k + rank)``. Equal weights are plain RRF; a weight of 0 leaves that list out.

    The default weighs the dense list half as much as BM25: chosen on the tune splits of both labelled
    sets (eval/examples.golden.jsonl and Chroma's questions) with the default model, where equal
    weights let MiniLM's weaker list push exact-term answers out of the first ranks (BENCHMARKS.md,
    "Defaults against BM25 alone")."""

    bm25: float = 1.0
    dense: float = 0.5
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

    def fuse(self, bm25: Sequence[Hashable], dense: Sequence[Hashable], chunk_ids: ChunkIds | None = None,
             n: int | None = None) -> list[tuple[Hashable, float]]:
        """The first ``n`` of the fused list (``rrf``; ``chunk_ids`` names the ids for ties)."""
        return rrf([bm25, dense], self.k, (self.bm25, self.dense), chunk_ids, n)
