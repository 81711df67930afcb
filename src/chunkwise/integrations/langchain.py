"""LangChain: ``ChunkwiseSplitter`` (a ``TextSplitter``) and ``ChunkwiseRetriever`` (a ``BaseRetriever``).

Why not LangChain's own ``add_start_index``: it finds each chunk again with ``text.find`` and so
points repeated passages at their first occurrence; here ``start_index`` is chunkwise's own offset,
``page_content == text[start_index:end_index]`` for every chunk, the cap is measured in the
embedding model's tokens, and each Document's ``id`` is the chunk id ``chunkwise ingest`` would give
it (stable across runs, never random). Needs ``pip install 'chunkwise[langchain]'``.
"""
from __future__ import annotations

import copy
from typing import Any, Iterable

from chunkwise import api
from chunkwise.integrations._common import (PAGE_JOIN, Engine, Searcher, chunk_config, declared_id, embed_header,
                                            install_hint, page_index, page_number, page_starts, passage_metadata,
                                            runs)
from chunkwise.integrations.keywords import chunk_options

try:
    from langchain_core.callbacks import CallbackManagerForRetrieverRun
    from langchain_core.documents import Document
    from langchain_core.embeddings import Embeddings
    from langchain_core.retrievers import BaseRetriever
    from langchain_text_splitters import TextSplitter
    from pydantic import PrivateAttr
except ImportError as exc:  # pragma: no cover - exercised by the install-hint test
    raise install_hint("langchain", "langchain-core and langchain-text-splitters", exc) from exc

__all__ = ["ChunkwiseEmbeddings", "ChunkwiseRetriever", "ChunkwiseSplitter"]


class ChunkwiseSplitter(TextSplitter):
    """A LangChain TextSplitter taking the options of ``chunkwise chunk``::

        ChunkwiseSplitter(strategy="auto", size=254, unit="tokens", tokenizer="minilm", header="path")

    LangChain's own keywords map onto them: ``chunk_size`` -> ``size``, ``chunk_overlap`` ->
    ``overlap``, ``separators`` -> ``separators`` of the recursive strategy; one that cannot map
    (``length_function``) is a ConfigError saying what to pass instead.

    Every Document it makes carries ``metadata``: ``start_index``/``end_index`` (exact offsets into
    the text it was split from), ``heading_path``, ``page``/``page_end`` (files, or kept from the
    input's metadata), ``chunk_id``, ``chunk_index``, ``doc_id``, ``size`` (in the cap's units),
    ``needs_review``, ``acl`` and ``reasons``; and ``id`` = ``chunk_id``: the records ``chunkwise
    ingest`` stores, made by the same preparation (front matter, section access markers, ``acl=``
    and ``acl_map=`` default tags as ingest takes them). A document's id is its ``id``, else its
    metadata's ``source``, else a hash of its text, so re-splitting the same document gives the
    same ids. Consecutive Documents of one ``source`` with a ``page`` each (``PyPDFLoader``) are one
    document with pages: ``page``/``page_end`` keep the loader's numbers, ids are unique across the
    pages, and ``start_index``/``end_index`` index the pages joined by a blank line.

    With a contextual ``header`` configured, ``page_content`` is what chunkwise embeds: the header
    (also in ``metadata["header"]``), then the chunk's text, which is
    ``text[start_index:end_index]``; a vector store embedding ``page_content`` embeds the header.
    """

    def __init__(self, config: api.ChunkConfig | None = None, **options: Any) -> None:
        acl, acl_map = options.pop("acl", ()), options.pop("acl_map", None)  # default tags, as ingest takes them
        self._config = chunk_config(config, chunk_options("langchain", options))
        self._engine = Engine(self._config, acl, acl_map)
        super().__init__(chunk_size=self._config.size, chunk_overlap=self._config.overlap,
                         add_start_index=True, strip_whitespace=False)

    @property
    def config(self) -> api.ChunkConfig:
        return self._config

    def split_text(self, text: str) -> list[str]:
        return [p.embed_text for p in self._engine.split_text(text)]

    def create_documents(self, texts: list[str], metadatas: list[dict] | None = None,
                         ids: list[str | None] | None = None) -> list[Document]:
        metadatas = metadatas or [{}] * len(texts)
        ids = ids or [None] * len(texts)
        if not len(metadatas) == len(ids) == len(texts):
            raise api.ConfigError(f"{len(texts)} texts need as many metadatas and ids "
                                  f"(got {len(metadatas)} and {len(ids)})")
        out = []
        for group in runs(metadatas, ids, "page"):
            if len(group) > 1 or page_number(metadatas[group[0]], "page") is not None:
                out += self._pages([texts[i] for i in group], [metadatas[i] for i in group])
                continue
            text, meta, doc_id = texts[group[0]], metadatas[group[0]], ids[group[0]]
            for piece in self._engine.split_text(text, declared_id(meta, doc_id)):
                data = copy.deepcopy(meta)
                data.update(piece.metadata())
                out.append(_document(piece, data))
        return out

    def _pages(self, texts: list[str], metas: list[dict]) -> list[Document]:
        """The pages of one source (e.g. ``PyPDFLoader``'s Documents, metadata ``source`` and
        ``page``) as one document: chunks may cross a page break, ``page``/``page_end`` keep the
        loader's numbers, ids are unique across the pages, each Document's other metadata is its
        first page's, and ``start_index``/``end_index`` index the pages joined by a blank line."""
        pieces = self._engine.split_pages([(page_number(m, "page"), t) for t, m in zip(texts, metas)],
                                          declared_id(metas[0]) or "", PAGE_JOIN)
        starts = page_starts(texts)
        out = []
        for piece in pieces:
            data = copy.deepcopy(metas[page_index(piece, starts)])
            data.update(piece.metadata())
            out.append(_document(piece, data))
        return out

    def split_documents(self, documents: Iterable[Document]) -> list[Document]:
        docs = list(documents)
        return self.create_documents([d.page_content for d in docs], [d.metadata for d in docs],
                                     [d.id for d in docs])

    def split_file(self, path) -> list[Document]:
        """Any file chunkwise reads (Markdown, text, HTML, PDF, DOCX): pages and heading paths from the
        format itself; offsets point into its extracted text (``metadata["source"]`` = its path)."""
        return [_document(p, {"source": p.source, **p.metadata()}) for p in self._engine.split_file(path)]


def _document(piece, metadata: dict) -> Document:
    """The Document of one piece: its embedded text (the header, when one is configured, then the text)."""
    header = embed_header(piece.text, piece.embed_text)
    if header:
        metadata["header"] = header
    return Document(page_content=piece.embed_text if header else piece.text, metadata=metadata, id=piece.chunk_id)


class ChunkwiseRetriever(BaseRetriever):
    """A LangChain retriever over a chunkwise store, for one caller's groups::

        ChunkwiseRetriever(db="index.db", groups=["sre"], k=5, mode="hybrid", expand="neighbours")
        retriever.invoke("how do I roll back?", k=3, filters={"file_types": ["md"]})

    The permission filter runs inside the query, before ranking, exactly as ``chunkwise search``:
    a passage the groups may not read is never returned. Each Document is one passage (merged hits,
    or a hit grown by expansion) with its citation in ``metadata``: ``source``, ``heading_path``,
    ``page``, ``start_index``/``end_index``, ``chunk_ids``, ``score``, ``rank``. ``k``, ``mode``,
    ``expand``, ``budget`` and ``filters`` (doc_ids, source_prefix, file_types, updated_after,
    updated_before) are read at each call, so changing the attribute or passing ``k=``/``filters=``
    to ``invoke`` applies; the groups are fixed at construction. The retriever pickles (the copy
    reopens the store).
    """

    db: str
    groups: list[str]
    k: int = 5
    mode: str = "auto"
    expand: str = "none"
    budget: int | None = None
    bm25: str = "fts5"
    embedder: str = "auto"
    filters: dict | None = None
    _searcher: Searcher = PrivateAttr()

    def __init__(self, **data: Any) -> None:
        if isinstance(data.get("groups"), str):
            data["groups"] = data["groups"].split(",")
        if "db" in data:
            data["db"] = str(data["db"])
        super().__init__(**data)
        self._searcher = Searcher(self.db, self.groups, k=self.k, mode=self.mode, expand=self.expand,
                                  budget=self.budget, bm25=self.bm25, embedder=self.embedder, filters=self.filters)

    def _get_relevant_documents(self, query: str, *, run_manager: CallbackManagerForRetrieverRun,
                                **kwargs: Any) -> list[Document]:
        options = {"k": self.k, "mode": self.mode, "expand": self.expand, "budget": self.budget,
                   "filters": self.filters or {}, **kwargs}
        result = self._searcher.search(query, **options)
        return [Document(page_content=p.text, id=p.chunk_ids[0], metadata=passage_metadata(p, rank, result.withheld))
                for rank, p in enumerate(result.passages, start=1)]

    def close(self) -> None:
        self._searcher.close()


class ChunkwiseEmbeddings(Embeddings):
    """LangChain ``Embeddings`` with a chunkwise embedder (the vectors ``chunkwise ingest`` stores)::

        ChunkwiseEmbeddings()  # the model a new store is built with (minilm-onnx-int8); or "minilm",
                               # "hashing", "minilm-onnx", "openai:URL" with model=

    Queries and documents are embedded alike (chunkwise's models are symmetric). The model loads on
    first use; a text over the model's token limit raises unless ``allow_truncation=True``.
    """

    def __init__(self, embedder: str = api.DEFAULT_EMBEDDER, *, model: str | None = None, batch_size: int | None = None,
                 allow_truncation: bool = False) -> None:
        made = api.make_embedder(embedder, batch_size=batch_size, allow_truncation=allow_truncation, model=model)
        if made is None:
            raise api.ConfigError(f"embedder {embedder!r} makes no vectors; name one that does (minilm, hashing, ...)")
        self._embedder = made

    @property
    def name(self) -> str:
        """``model@version``: the name stores record with every vector."""
        return self._embedder.name

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return self._embedder.embed(list(texts)) if texts else []

    def embed_query(self, text: str) -> list[float]:
        return self._embedder.embed([text])[0]
