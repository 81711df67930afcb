"""Haystack 2: ``ChunkwiseSplitter`` and ``ChunkwiseRetriever`` components.

The splitter sets explicit Document ids (the chunk ids ``chunkwise ingest`` gives, stable across
runs) and exact offsets, in both Haystack's own meta names (``source_id``, ``split_id``,
``split_idx_start``, ``page_number``) and chunkwise's (``start_index``, ``end_index``,
``heading_path``, ``chunk_id``...). Needs ``pip install 'chunkwise[haystack]'``.
"""
from __future__ import annotations

from typing import Any

from chunkwise import api
from chunkwise.integrations._common import Engine, Searcher, chunk_config, declared_id, install_hint, passage_metadata

try:
    from haystack import Document, component, default_from_dict, default_to_dict
except ImportError as exc:  # pragma: no cover - exercised by the install-hint test
    raise install_hint("haystack", "haystack-ai", exc) from exc

__all__ = ["ChunkwiseRetriever", "ChunkwiseSplitter"]


@component
class ChunkwiseSplitter:
    """Splits Documents with the options of ``chunkwise chunk``::

        ChunkwiseSplitter(strategy="auto", size=254, header="path")

    A document's chunk ids come from its meta ``doc_id``/``source``/``file_path``, else its Haystack id
    (a hash of its content). Documents without text are passed over (Haystack's splitters refuse
    ``content=None``; an empty text gives no chunks).
    """

    def __init__(self, **options: Any) -> None:
        self.options = dict(options)
        self._engine = Engine(chunk_config(None, self.options))

    def to_dict(self) -> dict[str, Any]:
        return default_to_dict(self, **self.options)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "ChunkwiseSplitter":
        return default_from_dict(cls, data)

    @component.output_types(documents=list[Document])
    def run(self, documents: list[Document]) -> dict[str, list[Document]]:
        out = []
        for doc in documents:
            if not isinstance(doc, Document):
                raise api.ConfigError(f"ChunkwiseSplitter takes a list of haystack Documents, got {type(doc).__name__}")
            if doc.content is None:
                continue
            source_id = declared_id(doc.meta) or doc.id
            for p in self._engine.split_text(doc.content, source_id):
                meta = {**doc.meta, **p.metadata(), "source_id": doc.id, "split_id": p.index,
                        "split_idx_start": p.start}
                if p.page is not None:
                    meta["page_number"] = p.page
                out.append(Document(id=p.chunk_id, content=p.text, meta=meta))
        return {"documents": out}


@component
class ChunkwiseRetriever:
    """Searches a chunkwise store for one caller's groups (the filter runs inside the query)::

        ChunkwiseRetriever(db="index.db", groups=["sre"], k=5, mode="hybrid")

    ``run(query, top_k=None)`` returns ``{"documents": [...]}``: one Document per passage, with its
    score and citation meta (``source``, ``heading_path``, ``page``, ``start_index``/``end_index``).
    """

    def __init__(self, db: str, groups: list[str], k: int = 5, mode: str = "auto", expand: str = "none",
                 budget: int | None = None, bm25: str = "fts5", embedder: str = "auto") -> None:
        self.params = {"db": str(db), "groups": list(groups.split(",") if isinstance(groups, str) else groups),
                       "k": k, "mode": mode, "expand": expand, "budget": budget, "bm25": bm25, "embedder": embedder}
        self._searchers: dict[int, Searcher] = {}
        self._searcher(k)  # fail at construction on a bad store, groups or option

    def _searcher(self, k: int) -> Searcher:
        if k not in self._searchers:
            p = dict(self.params)
            p["k"] = k
            self._searchers[k] = Searcher(p.pop("db"), p.pop("groups"), **p)
        return self._searchers[k]

    def to_dict(self) -> dict[str, Any]:
        return default_to_dict(self, **self.params)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "ChunkwiseRetriever":
        return default_from_dict(cls, data)

    @component.output_types(documents=list[Document])
    def run(self, query: str, top_k: int | None = None) -> dict[str, list[Document]]:
        result = self._searcher(self.params["k"] if top_k is None else top_k).search(query)
        return {"documents": [Document(id=p.chunk_ids[0], content=p.text, score=p.score,
                                       meta=passage_metadata(p, rank))
                              for rank, p in enumerate(result.passages, start=1)]}

    def close(self) -> None:
        for s in self._searchers.values():
            s.close()
