"""The one thread that owns the store and the model.

A SQLite connection may only be used by the thread that opened it, and one CPU model should run one
batch at a time (a second concurrent batch only slows both on a small machine), so every store read
and every embedding runs on a single worker thread, in arrival order; the event loop stays free for
/health and for accepting connections while a query runs.
"""
from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable, Sequence

from chunkwise import api


class Engine:
    def __init__(self, db: str, *, bm25: str = "fts5", generator_tokenizer: str | None = None, **ranking: Any) -> None:
        """``ranking``: the Retriever's field_weights and fusion."""
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="chunkwise-serve")
        try:
            self.retriever = self._pool.submit(api.open_retriever, db, bm25=bm25,
                                               generator_tokenizer=generator_tokenizer, **ranking).result()
        except BaseException:
            self._pool.shutdown(wait=False)
            raise
        self.db = db
        self.embedder = self.retriever.embedder
        self.model = self.embedder.name if self.embedder is not None else None
        self.dim = self.embedder.dim if self.embedder is not None else None

    def warm(self) -> None:
        """Load the model and build the in-memory index now, so the first caller does not wait
        seconds for them (and a broken model fails at start, not on the first query)."""
        def run() -> None:
            if self.embedder is not None:
                self.embedder.embed(["warm up"])
                self.retriever.warm()
        self._pool.submit(run).result()

    async def call(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        return await asyncio.wrap_future(self._pool.submit(fn, *args, **kwargs))

    # -- run on the worker thread ---------------------------------------------------------------
    def search(self, query: str, groups: Sequence[str], **options: Any) -> dict:
        return self.retriever.search(query, groups, **options).to_dict()

    def document(self, doc_id: str, groups: Sequence[str]) -> dict | None:
        doc = api.visible_document(self.retriever, doc_id, groups)
        return None if doc is None else doc.to_dict()

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return self.embedder.embed(list(texts))

    def count_tokens(self, texts: Sequence[str]) -> list[int]:
        """Tokens per text as the model reads them (special tokens included); embedders without a
        tokenizer of their own (hashing) count whitespace-separated words."""
        counter = getattr(self.embedder, "count_tokens", None)
        if counter is not None:
            return list(counter(list(texts)))
        return [len(t.split()) for t in texts]

    def close(self) -> None:
        try:
            self._pool.submit(self.retriever.close).result()
        finally:
            self._pool.shutdown(wait=True)
