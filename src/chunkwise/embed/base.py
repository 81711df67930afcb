"""The Embedder protocol, the dependency check every embedder uses, and cosine similarity.

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
from typing import Protocol, Sequence, runtime_checkable

from chunkwise.errors import DependencyError

EMBED_INSTALL_HINT = "pip install 'chunkwise[embed]'"

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


def require(*modules: str, feature: str) -> None:
    """Raise DependencyError with the install hint unless every module can be imported.

    Uses ``find_spec`` so nothing is imported (torch takes seconds to import)."""
    missing = [m for m in modules if importlib.util.find_spec(m) is None]
    if missing:
        raise DependencyError(
            f"{feature} needs {' and '.join(missing)} (not installed); install with: {EMBED_INSTALL_HINT}"
        )


def texts_of(texts: Sequence[str]) -> list[str]:
    """The texts of one ``embed()`` call as a list; a lone string is refused (embedding it character
    by character would be silently wrong)."""
    if isinstance(texts, str):
        raise TypeError("embed() takes a sequence of texts, not one string; wrap it: embed([text])")
    return list(texts)


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
