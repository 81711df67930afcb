"""Haystack 2: ``ChunkwiseSplitter`` and ``ChunkwiseRetriever`` components.

The splitter sets explicit Document ids (the chunk ids ``chunkwise ingest`` gives, stable across
runs) and exact offsets, in both Haystack's own meta names (``source_id``, ``split_id``,
``split_idx_start``, ``page_number``) and chunkwise's (``start_index``, ``end_index``,
``heading_path``, ``chunk_id``, ``acl``...). Pages: a Document with form feeds (what
``PyPDFToDocument`` makes: one ``\f`` between pages) is one document with pages, offsets into its
content; consecutive Documents of one source with a ``page_number`` each (one per page) are one
document too, offsets into their contents joined by a blank line. Either way chunk ids are unique
across the pages and stable. The retriever's meta carries ``page_number`` too. Needs ``pip install 'chunkwise[haystack]'``.
"""
from __future__ import annotations

from typing import Any

from chunkwise import api
from chunkwise.integrations._common import (PAGE_JOIN, Engine, Searcher, chunk_config, declared_id, embed_header,
                                            filters_of, install_hint, page_index, page_number, page_starts,
                                            passage_metadata, runs)
from chunkwise.integrations.keywords import chunk_options

try:
    from haystack import Document, component, default_from_dict, default_to_dict
except ImportError as exc:  # pragma: no cover - exercised by the install-hint test
    raise install_hint("haystack", "haystack-ai", exc) from exc

__all__ = ["ChunkwiseRetriever", "ChunkwiseSplitter"]


@component
class ChunkwiseSplitter:
    """Splits Documents with the options of ``chunkwise chunk``::

        ChunkwiseSplitter(strategy="auto", size=254, header="path")
        ChunkwiseSplitter(split_by="word", split_length=200, split_overlap=20)  # DocumentSplitter's keywords

    With a contextual ``header`` configured, a chunk's ``content`` is what chunkwise embeds (the
    header, also in ``meta["header"]``, then the text): Haystack's embedders embed ``content``.
    A document's chunk ids come from its meta ``doc_id``/``source``/``file_path``, else its Haystack id
    (a hash of its content). Documents without text are passed over (Haystack's splitters refuse
    ``content=None``; an empty text gives no chunks).
    """

    def __init__(self, **options: Any) -> None:
        self.options = dict(options)
        chunking = {k: v for k, v in self.options.items() if k not in ("acl", "acl_map")}
        self._engine = Engine(chunk_config(None, chunk_options("haystack", chunking)), self.options.get("acl", ()),
                              self.options.get("acl_map"))

    def to_dict(self) -> dict[str, Any]:
        return default_to_dict(self, **self.options)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "ChunkwiseSplitter":
        return default_from_dict(cls, data)

    @component.output_types(documents=list[Document])
    def run(self, documents: list[Document]) -> dict[str, list[Document]]:
        for doc in documents:
            if not isinstance(doc, Document):
                raise api.ConfigError(f"ChunkwiseSplitter takes a list of haystack Documents, got {type(doc).__name__}")
        documents = [d for d in documents if d.content is not None]
        out = []
        for group in runs([d.meta for d in documents], [None] * len(documents), "page_number"):
            docs = [documents[i] for i in group]
            source_id = declared_id(docs[0].meta) or docs[0].id
            if len(docs) > 1 or page_number(docs[0].meta, "page_number") is not None:  # one Document per page
                pieces = self._engine.split_pages([(page_number(d.meta, "page_number"), d.content) for d in docs],
                                                  source_id, PAGE_JOIN)
            elif "\f" in docs[0].content:  # PyPDFToDocument: one Document, a form feed between pages
                pieces = self._engine.split_pages(list(enumerate(docs[0].content.split("\f"), 1)), source_id, "\f")
            else:
                pieces = self._engine.split_text(docs[0].content, source_id)
            starts = page_starts([d.content for d in docs])
            for p in pieces:
                doc = docs[page_index(p, starts)]  # the Document (of a page) the chunk begins in
                meta = {**doc.meta, **p.metadata(), "source_id": doc.id, "split_id": p.index,
                        "split_idx_start": p.start}
                if p.page is not None:
                    meta["page_number"], meta["page_end"] = p.page, p.page_end or p.page
                header = embed_header(p.text, p.embed_text)
                if header:
                    meta["header"] = header
                out.append(Document(id=p.chunk_id, content=p.embed_text if header else p.text, meta=meta))
        return {"documents": out}


@component
class ChunkwiseRetriever:
    """Searches a chunkwise store for one caller's groups (the filter runs inside the query)::

        ChunkwiseRetriever(db="index.db", groups=["sre"], top_k=5, mode="hybrid", filters={"file_types": ["md"]})

    ``run(query, top_k=None, filters=None)`` returns ``{"documents": [...]}``: one Document per
    passage, with its score and citation meta (``source``, ``heading_path``, ``page_number``,
    ``start_index``/``end_index``). ``filters`` are chunkwise's (doc_ids, source_prefix, file_types,
    updated_after, updated_before); at run time they replace the ones given at construction. The
    groups are fixed at construction. ``k`` is accepted for ``top_k``.
    """

    def __init__(self, db: str, groups: list[str], top_k: int | None = None, mode: str = "auto", expand: str = "none",
                 budget: int | None = None, bm25: str = "fts5", embedder: str = "auto", filters: dict | None = None,
                 k: int | None = None) -> None:
        if k is not None and top_k is not None and k != top_k:
            raise api.ConfigError(f"top_k={top_k} and k={k} name the same setting; pass one")
        filters_of(filters)  # a bad filter fails here, not on the first query
        self.params = {"db": str(db), "groups": list(groups.split(",") if isinstance(groups, str) else groups),
                       "top_k": top_k or k or 5, "mode": mode, "expand": expand, "budget": budget, "bm25": bm25,
                       "embedder": embedder, "filters": filters}
        p = dict(self.params)
        self._searcher = Searcher(p.pop("db"), p.pop("groups"), k=p.pop("top_k"), **p)

    def to_dict(self) -> dict[str, Any]:
        return default_to_dict(self, **self.params)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "ChunkwiseRetriever":
        return default_from_dict(cls, data)

    @component.output_types(documents=list[Document])
    def run(self, query: str, top_k: int | None = None, filters: dict | None = None) -> dict[str, list[Document]]:
        result = self._searcher.search(query, k=top_k, filters=filters)
        out = []
        for rank, p in enumerate(result.passages, start=1):
            meta = passage_metadata(p, rank, result.withheld)
            meta["page_number"] = meta["page"]
            out.append(Document(id=p.chunk_ids[0], content=p.text, score=p.score, meta=meta))
        return {"documents": out}

    def close(self) -> None:
        self._searcher.close()
