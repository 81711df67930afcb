"""Retrieval: BM25 / dense / hybrid with the permission filter inside every query, merged hits,
neighbour and parent expansion, and context assembly under a token budget. numpy is imported only
when an in-memory index is built.

The names below load on first use (PEP 562): a command that only reads a constant of one submodule
(``chunkwise chunk`` builds every subcommand's help, which names ``passages.DEFAULT_PASSAGE_BUDGET``)
does not import the store, the reranker and ``urllib`` (http, email, ssl) with it: ~0.05 CPU s of start-up."""
from __future__ import annotations

from typing import TYPE_CHECKING

from chunkwise.lazy import lazy_names

_LAZY = {"merge_hits": "chunkwise.retrieve.merge", "Retriever": "chunkwise.retrieve.store",
         "search": "chunkwise.retrieve.store", **dict.fromkeys(("Hit", "Omission", "Passage", "SearchResult"),
                                                             "chunkwise.retrieve.types")}

if TYPE_CHECKING:
    from chunkwise.retrieve.merge import merge_hits
    from chunkwise.retrieve.store import Retriever, search
    from chunkwise.retrieve.types import Hit, Omission, Passage, SearchResult

__all__ = ["Hit", "Omission", "Passage", "Retriever", "SearchResult", "merge_hits", "search"]


__getattr__, __dir__ = lazy_names(__name__, _LAZY)
