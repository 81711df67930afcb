"""Closed forms for fixed windows (seed 001): chunk counts, index inflation, straddle risk."""
from __future__ import annotations

import math
from dataclasses import dataclass

from chunkwise.config import ChunkConfig


@dataclass(frozen=True)
class Plan:
    """Closed forms for fixed windows (seed 001): what a size/overlap choice costs and guarantees."""

    size: int
    overlap: int
    doc_words: int
    evidence: int
    chunks: int
    stored_units: int
    inflation: float
    limit_inflation: float
    guaranteed_evidence: int
    straddle_probability: float

    def to_dict(self) -> dict:
        return dict(self.__dict__)


def n_windows(total: int, size: int, overlap: int) -> int:
    if total <= 0:
        return 0
    return 1 if total <= size else math.ceil((total - size) / (size - overlap)) + 1


def straddle_probability(size: int, overlap: int, evidence: int) -> float:
    """Chance that evidence of ``evidence`` units, placed at a random offset, lands whole in no window."""
    if evidence <= overlap + 1:
        return 0.0
    if evidence > size:
        return 1.0
    return max(0.0, 1.0 - (size - evidence + 1) / (size - overlap))


def plan(size: int, overlap: int, doc_words: int = 100_000, evidence: int = 26) -> Plan:
    ChunkConfig(strategy="fixed", size=size, overlap=overlap, unit="words")  # same validation as chunking
    n = n_windows(doc_words, size, overlap)
    stored = doc_words + max(n - 1, 0) * overlap
    return Plan(
        size=size,
        overlap=overlap,
        doc_words=doc_words,
        evidence=evidence,
        chunks=n,
        stored_units=stored,
        inflation=stored / doc_words if doc_words else 0.0,
        limit_inflation=size / (size - overlap),
        guaranteed_evidence=overlap + 1,
        straddle_probability=straddle_probability(size, overlap, evidence),
    )


