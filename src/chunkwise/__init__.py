"""chunkwise: retrieval units with exact offsets, hard size caps and evidence.

The handful a user needs, all from ``chunkwise.api`` (the full facade)::

    import chunkwise

    records = chunkwise.chunk_file("docs/runbook.md", size=128)   # what ingest would store
    stats = chunkwise.ingest(["docs/"], "index.db", acl=["staff"])
    with chunkwise.open_retriever("index.db") as retriever:
        result = retriever.search("how do I roll back?", ["staff"], k=3)

Names are imported on first use (PEP 562), so ``import chunkwise`` loads no tokenizer, model,
PDF library or store: only what a name needs, when it is first touched.
"""
from __future__ import annotations

import importlib

__version__ = "0.1.0"

# name -> module that defines it; everything here is re-exported from chunkwise.api too.
_EXPORTS = {
    "chunk_text": "chunkwise.api",
    "chunk_file": "chunkwise.api",
    "ingest": "chunkwise.api",
    "search": "chunkwise.api",
    "open_retriever": "chunkwise.api",
    "open_store": "chunkwise.api",
    "evaluate": "chunkwise.api",
    "check": "chunkwise.api",
    "plan": "chunkwise.api",
    "make_chunker": "chunkwise.api",
    "Retriever": "chunkwise.retrieve",
    "ChunkRecord": "chunkwise.enrich.records",
    "ChunkConfig": "chunkwise.config",
    "Chunk": "chunkwise.types",
    "Document": "chunkwise.types",
    "Page": "chunkwise.types",
    "ChunkwiseError": "chunkwise.errors",
    "ConfigError": "chunkwise.errors",
    "DependencyError": "chunkwise.errors",
    "InputError": "chunkwise.errors",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'chunkwise' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # looked up once
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_EXPORTS])
