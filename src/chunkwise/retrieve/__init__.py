"""Retrieval: BM25 / dense / hybrid with the permission filter inside every query, merged hits,
neighbour and parent expansion, and context assembly under a token budget. numpy is imported only
when an in-memory index is built."""
from chunkwise.retrieve.merge import merge_hits
from chunkwise.retrieve.store import Retriever, search
from chunkwise.retrieve.types import Hit, Omission, Passage, SearchResult

__all__ = ["Hit", "Omission", "Passage", "Retriever", "SearchResult", "merge_hits", "search"]
