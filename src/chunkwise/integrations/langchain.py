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
from chunkwise.integrations._common import Engine, Searcher, chunk_config, declared_id, install_hint, passage_metadata

try:
    from langchain_core.callbacks import CallbackManagerForRetrieverRun
    from langchain_core.documents import Document
    from langchain_core.retrievers import BaseRetriever
    from langchain_text_splitters import TextSplitter
    from pydantic import PrivateAttr
except ImportError as exc:  # pragma: no cover - exercised by the install-hint test
    raise install_hint("langchain", "langchain-core and langchain-text-splitters", exc) from exc

__all__ = ["ChunkwiseRetriever", "ChunkwiseSplitter"]


class ChunkwiseSplitter(TextSplitter):
    """A LangChain TextSplitter taking the options of ``chunkwise chunk``::

        ChunkwiseSplitter(strategy="auto", size=254, unit="tokens", tokenizer="minilm", header="path")

    Every Document it makes carries ``metadata``: ``start_index``/``end_index`` (exact offsets into
    the text it was split from), ``heading_path``, ``page``/``page_end`` (files, or kept from the
    input's metadata), ``chunk_id``, ``chunk_index``, ``doc_id``, ``size`` (in the cap's units),
    ``needs_review``; and ``id`` = ``chunk_id``. A document's id is its ``id``, else its metadata's
    ``source``, else a hash of its text, so re-splitting the same document gives the same ids.
    """

    def __init__(self, config: api.ChunkConfig | None = None, **options: Any) -> None:
        self._config = chunk_config(config, options)
        self._engine = Engine(self._config)
        super().__init__(chunk_size=self._config.size, chunk_overlap=self._config.overlap,
                         add_start_index=True, strip_whitespace=False)

    @property
    def config(self) -> api.ChunkConfig:
        return self._config

    def split_text(self, text: str) -> list[str]:
        return [p.text for p in self._engine.split_text(text)]

    def create_documents(self, texts: list[str], metadatas: list[dict] | None = None,
                         ids: list[str | None] | None = None) -> list[Document]:
        metadatas = metadatas or [{}] * len(texts)
        ids = ids or [None] * len(texts)
        if not len(metadatas) == len(ids) == len(texts):
            raise api.ConfigError(f"{len(texts)} texts need as many metadatas and ids "
                                  f"(got {len(metadatas)} and {len(ids)})")
        out = []
        for text, meta, doc_id in zip(texts, metadatas, ids):
            for piece in self._engine.split_text(text, declared_id(meta, doc_id)):
                data = copy.deepcopy(meta)
                fields = piece.metadata()
                if fields["page"] is None and "page" in data:  # e.g. one Document per PDF page
                    del fields["page"], fields["page_end"]
                data.update(fields)
                out.append(Document(page_content=piece.text, metadata=data, id=piece.chunk_id))
        return out

    def split_documents(self, documents: Iterable[Document]) -> list[Document]:
        docs = list(documents)
        return self.create_documents([d.page_content for d in docs], [d.metadata for d in docs],
                                     [d.id for d in docs])

    def split_file(self, path) -> list[Document]:
        """Any file chunkwise reads (Markdown, text, HTML, PDF, DOCX): pages and heading paths from the
        format itself; offsets point into its extracted text (``metadata["source"]`` = its path)."""
        doc, pieces = self._engine.split_file(path)
        return [Document(page_content=p.text, id=p.chunk_id, metadata={"source": doc.source, **p.metadata()})
                for p in pieces]


class ChunkwiseRetriever(BaseRetriever):
    """A LangChain retriever over a chunkwise store, for one caller's groups::

        ChunkwiseRetriever(db="index.db", groups=["sre"], k=5, mode="hybrid", expand="neighbours")

    The permission filter runs inside the query, before ranking, exactly as ``chunkwise search``:
    a passage the groups may not read is never returned. Each Document is one passage (merged hits,
    or a hit grown by expansion) with its citation in ``metadata``: ``source``, ``heading_path``,
    ``page``, ``start_index``/``end_index``, ``chunk_ids``, ``score``, ``rank``.
    """

    db: str
    groups: list[str]
    k: int = 5
    mode: str = "auto"
    expand: str = "none"
    budget: int | None = None
    bm25: str = "fts5"
    embedder: str = "auto"
    _searcher: Searcher = PrivateAttr()

    def __init__(self, **data: Any) -> None:
        if isinstance(data.get("groups"), str):
            data["groups"] = data["groups"].split(",")
        if "db" in data:
            data["db"] = str(data["db"])
        super().__init__(**data)
        self._searcher = Searcher(self.db, self.groups, k=self.k, mode=self.mode, expand=self.expand,
                                  budget=self.budget, bm25=self.bm25, embedder=self.embedder)

    def _get_relevant_documents(self, query: str, *, run_manager: CallbackManagerForRetrieverRun) -> list[Document]:
        result = self._searcher.search(query)
        return [Document(page_content=p.text, id=p.chunk_ids[0], metadata=passage_metadata(p, rank))
                for rank, p in enumerate(result.passages, start=1)]

    def close(self) -> None:
        self._searcher.close()
