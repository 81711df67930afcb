"""LlamaIndex: ``ChunkwiseNodeParser`` (a ``NodeParser``) and ``ChunkwiseRetriever`` (a ``BaseRetriever``).

Why override LlamaIndex's post-processing: it re-finds every node in its document with
``text.find`` (a repeated passage can land on another occurrence) and ids nodes with uuid4. Here
``start_char_idx``/``end_char_idx`` are chunkwise's own offsets (``document.text[start:end] ==
node.text``), node ids are the chunk ids ``chunkwise ingest`` gives (stable across runs), and
SOURCE / PREVIOUS / NEXT relationships are set. Needs ``pip install 'chunkwise[llamaindex]'``.

Metadata is flat (scalars only, what flat-metadata vector stores take): the heading path is one
string joined with `` > ``, lists are comma-joined, ``page_number`` is set. What a node gives an
embedder (``MetadataMode.EMBED``) is exactly what chunkwise embeds: the configured contextual header
(``header=``), then the text; what it gives an LLM (``MetadataMode.LLM``) is its citation line
(source, heading path, page), then the text.
"""
from __future__ import annotations

import uuid
from typing import Any, Dict, List, Sequence

from chunkwise import api
from chunkwise.integrations._common import (PAGE_JOIN, Engine, Searcher, chunk_config, citation, declared_id,
                                            embed_header, flat_metadata, install_hint, page_index, page_number,
                                            page_starts, passage_metadata, runs)
from chunkwise.integrations.keywords import chunk_options

try:
    from llama_index.core.node_parser.interface import NodeParser
    from llama_index.core.retrievers import BaseRetriever
    from llama_index.core.schema import (BaseNode, Document, MetadataMode, NodeRelationship, NodeWithScore,
                                         QueryBundle, TextNode)
    from pydantic import PrivateAttr
except ImportError as exc:  # pragma: no cover - exercised by the install-hint test
    raise install_hint("llamaindex", "llama-index-core", exc) from exc

__all__ = ["ChunkwiseNodeParser", "ChunkwiseRetriever"]

EMBED_KEY, LLM_KEY = "header", "citation"  # the only metadata an embedder / an LLM reads


def make_node(node_id: str, text: str, start: int | None, end: int | None, metadata: dict[str, Any], header: str = "") -> TextNode:
    """A TextNode with flat metadata whose EMBED content is ``header + text`` (chunkwise's embedded
    text) and whose LLM content is its citation line, then the text."""
    meta = flat_metadata(metadata)
    heading = [h for h in str(meta.get("heading_path") or "").split(" > ") if h]
    source = str(meta.get("source") or meta.get("file_path") or meta.get("file_name") or meta.get("doc_id") or "")
    meta[LLM_KEY] = citation(source, heading, meta.get("page"))
    if header:
        meta[EMBED_KEY] = header.rstrip()
    separator = header[len(header.rstrip()):] or "\n"
    return TextNode(id_=node_id, text=text, start_char_idx=start, end_char_idx=end, metadata=meta,
                    excluded_embed_metadata_keys=[k for k in meta if k != EMBED_KEY],
                    excluded_llm_metadata_keys=[k for k in meta if k != LLM_KEY],
                    metadata_template="{value}", text_template="{metadata_str}" + separator + "{content}")


def _stable_doc_id(node: BaseNode) -> str | None:
    """The node's id unless it is a random uuid4 (LlamaIndex's default), else its metadata's source."""
    try:
        random = str(uuid.UUID(node.node_id)) == node.node_id and uuid.UUID(node.node_id).version == 4
    except (ValueError, AttributeError, TypeError):
        random = False
    return declared_id(node.metadata, None if random else node.node_id)


class ChunkwiseNodeParser(NodeParser):
    """A LlamaIndex NodeParser taking the options of ``chunkwise chunk``::

        ChunkwiseNodeParser.from_options(strategy="auto", size=254, header="path")
        ChunkwiseNodeParser(chunk_size=254, chunk_overlap=20)  # LlamaIndex's keywords map onto them

    A document's chunk ids come from its ``id_`` (when set by the caller, not a random uuid4), else
    its metadata's ``file_path``/``source``, else a hash of its text.
    """

    chunk_options: Dict[str, Any] = {}
    acl: Any = ()  # default access tags, as ingest takes them (front matter and section markers still win)
    acl_map: Dict[str, Any] = {}
    _engine: Engine = PrivateAttr()

    def __init__(self, config: api.ChunkConfig | None = None, **data: Any) -> None:
        own = {k: data.pop(k) for k in list(data) if k not in type(self).model_fields}
        super().__init__(**data)
        cfg = chunk_config(config, chunk_options("llamaindex", {**self.chunk_options, **own}))
        self.chunk_options = {k: v for k, v in vars(cfg).items() if k != "extra"}
        self._engine = Engine(cfg, self.acl, self.acl_map)

    @classmethod
    def from_options(cls, config: api.ChunkConfig | None = None, **options: Any) -> "ChunkwiseNodeParser":
        access = {k: options.pop(k) for k in ("acl", "acl_map") if k in options}  # tags, not chunk options
        return cls(config, chunk_options=options, **access)

    @classmethod
    def class_name(cls) -> str:
        return "ChunkwiseNodeParser"

    @property
    def config(self) -> api.ChunkConfig:
        return self._engine.config

    def _parse_nodes(self, nodes: Sequence[BaseNode], show_progress: bool = False, **kwargs: Any) -> List[BaseNode]:
        """Each Document's records; consecutive pages of one file (``PDFReader``'s Documents: a
        ``page_label`` of digits and the same ``file_path``/``file_name``, no id of their own) are
        one document with pages: page numbers kept, ids unique across pages, offsets into the pages
        joined by a blank line, each node's SOURCE the page it begins on."""
        nodes = list(nodes)
        own = [_stable_doc_id(n) if _stable_doc_id(n) != declared_id(n.metadata) else None for n in nodes]
        out: List[BaseNode] = []
        for group in runs([n.metadata for n in nodes], own, "page_label"):
            parents = [nodes[i] for i in group]
            texts = [p.get_content(metadata_mode=MetadataMode.NONE) for p in parents]
            if len(parents) > 1 or page_number(parents[0].metadata, "page_label") is not None:
                pieces = self._engine.split_pages([(page_number(p.metadata, "page_label"), t)
                                                   for p, t in zip(parents, texts)],
                                                  declared_id(parents[0].metadata) or "", PAGE_JOIN)
            else:
                pieces = self._engine.split_text(texts[0], _stable_doc_id(parents[0]))
            starts = page_starts(texts)
            made = []
            for p in pieces:
                parent = parents[page_index(p, starts)]
                meta = {**(parent.metadata if self.include_metadata else {}), **p.metadata()}
                node = make_node(p.chunk_id, p.text, p.start, p.end, meta, embed_header(p.text, p.embed_text))
                node.relationships[NodeRelationship.SOURCE] = parent.as_related_node_info()
                made.append(node)
            if self.include_prev_next_rel:
                for a, b in zip(made, made[1:]):
                    a.relationships[NodeRelationship.NEXT] = b.as_related_node_info()
                    b.relationships[NodeRelationship.PREVIOUS] = a.as_related_node_info()
            out.extend(made)
        return out

    def _postprocess_parsed_nodes(self, nodes: List[BaseNode], parent_doc_map: Dict[str, Document]) -> List[BaseNode]:
        return nodes  # offsets, metadata and relationships are already exact (see the module docstring)


class ChunkwiseRetriever(BaseRetriever):
    """A LlamaIndex retriever over a chunkwise store, for one caller's groups::

        ChunkwiseRetriever("index.db", groups=["sre"], similarity_top_k=5, mode="hybrid",
                           filters={"file_types": ["md"]})

    The permission filter runs inside the query, before ranking. Each result is a TextNode (id = the
    passage's first chunk id, exact offsets, flat citation metadata, its citation line in what an
    LLM reads) with the ranker's score. ``similarity_top_k`` (``k`` is the same) and ``filters``
    (doc_ids, source_prefix, file_types, updated_after, updated_before) are read at each retrieval,
    so setting the attribute applies; the groups are fixed at construction.
    """

    def __init__(self, db, groups, *, similarity_top_k: int | None = None, k: int | None = None, mode: str = "auto",
                 expand: str = "none", budget: int | None = None, bm25: str = "fts5", embedder: str = "auto",
                 filters: dict | None = None, **kwargs: Any) -> None:
        if similarity_top_k is not None and k is not None and similarity_top_k != k:
            raise api.ConfigError(f"similarity_top_k={similarity_top_k} and k={k} name the same setting; pass one")
        self.similarity_top_k = similarity_top_k or k or 5
        self.filters = filters
        self._searcher = Searcher(db, groups, k=self.similarity_top_k, mode=mode, expand=expand, budget=budget,
                                  bm25=bm25, embedder=embedder, filters=filters)
        super().__init__(**kwargs)

    def _retrieve(self, query_bundle: QueryBundle) -> List[NodeWithScore]:
        result = self._searcher.search(query_bundle.query_str, k=self.similarity_top_k, filters=self.filters or {})
        out = []
        for rank, p in enumerate(result.passages, start=1):
            meta = passage_metadata(p, rank, result.withheld)  # offsets None: the caller may not read it all
            out.append(NodeWithScore(node=make_node(p.chunk_ids[0], p.text, meta["start_index"], meta["end_index"], meta),
                                     score=p.score))
        return out

    def close(self) -> None:
        self._searcher.close()
