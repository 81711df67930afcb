"""Retrieval: BM25 / dense / hybrid with the permission filter inside every query, merged hits,
neighbour and parent expansion, and context assembly under a token budget. numpy is imported only
when an in-memory index is built.

The names below load on first use (PEP 562): a command that only reads a constant of one submodule
(``chunkwise chunk`` builds every subcommand's help, which names ``passages.DEFAULT_PASSAGE_BUDGET``)
does not import the store, the reranker and ``urllib`` with it (~0.1 CPU s of its start-up)."""
from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

_LAZY = {"merge_hits": "chunkwise.retrieve.merge", "Retriever": "chunkwise.retrieve.store",
         "search": "chunkwise.retrieve.store", **dict.fromkeys(("Hit", "Omission", "Passage", "SearchResult"),
                                                             "chunkwise.retrieve.types")}

if TYPE_CHECKING:
    from chunkwise.retrieve.merge import merge_hits
    from chunkwise.retrieve.store import Retriever, search
    from chunkwise.retrieve.types import Hit, Omission, Passage, SearchResult

__all__ = ["Hit", "Omission", "Passage", "Retriever", "SearchResult", "merge_hits", "search"]


def __getattr__(name: str):
    where = _LAZY.get(name)
    if where is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(where), name)
    globals()[name] = value  # looked up once
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_LAZY])
