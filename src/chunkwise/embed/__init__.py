"""Embedders: one protocol (``name``, ``dim``, ``max_tokens``, ``embed``) and ``make_embedder``.

Importing this package loads neither numpy nor torch: the hashing embedder imports numpy (when
installed) on its first batch, and the MiniLM embedder imports sentence-transformers and torch
when it loads its model.
"""
from chunkwise.embed.base import EMBED_INSTALL_HINT, Embedder, cosine
from chunkwise.embed.factory import VALID_NAMES, make_embedder
from chunkwise.embed.hashing import HashingEmbedder
from chunkwise.embed.minilm import MiniLMEmbedder

__all__ = [
    "EMBED_INSTALL_HINT",
    "VALID_NAMES",
    "Embedder",
    "HashingEmbedder",
    "MiniLMEmbedder",
    "cosine",
    "make_embedder",
]
