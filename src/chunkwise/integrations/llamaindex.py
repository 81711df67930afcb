"""LlamaIndex: ``ChunkwiseNodeParser`` (a ``NodeParser``) and ``ChunkwiseRetriever`` (a ``BaseRetriever``).

Why override LlamaIndex's post-processing: it re-finds every node in its document with
``text.find`` (a repeated passage can land on another occurrence) and ids nodes with uuid4. Here
``start_char_idx``/``end_char_idx`` are chunkwise's own offsets (``document.text[start:end] ==
node.text``), node ids are the chunk ids ``chunkwise ingest`` gives (stable across runs), and
SOURCE / PREVIOUS / NEXT relationships are set. Needs ``pip install 'chunkwise[llamaindex]'``.
"""
from __future__ import annotations

import uuid
from typing import Any, Dict, List, Sequence

from chunkwise import api
from chunkwise.integrations._common import Engine, Searcher, chunk_config, declared_id, install_hint, passage_metadata

try:
    from llama_index.core.node_parser.interface import NodeParser
    from llama_index.core.retrievers import BaseRetriever
    from llama_index.core.schema import (BaseNode, Document, MetadataMode, NodeRelationship, NodeWithScore,
                                         QueryBundle, TextNode)
    from pydantic import PrivateAttr
except ImportError as exc:  # pragma: no cover - exercised by the install-hint test
    raise install_hint("llamaindex", "llama-index-core", exc) from exc

__all__ = ["ChunkwiseNodeParser", "ChunkwiseRetriever"]

# Citation fields: kept on the node, but not prepended to the text an embedder or an LLM reads.
_OWN_KEYS = ["chunk_id", "chunk_ids", "doc_id", "chunk_index", "start_index", "end_index", "heading_path", "page",
             "page_end", "size", "needs_review", "score", "rank", "expanded_from", "source"]


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

    A document's chunk ids come from its ``id_`` (when set by the caller, not a random uuid4), else
    its metadata's ``file_path``/``source``, else a hash of its text.
    """

    chunk_options: Dict[str, Any] = {}
    _engine: Engine = PrivateAttr()

    def __init__(self, config: api.ChunkConfig | None = None, **data: Any) -> None:
        super().__init__(**data)
        cfg = chunk_config(config, self.chunk_options)
        self.chunk_options = {k: v for k, v in vars(cfg).items() if k != "extra"}
        self._engine = Engine(cfg)

    @classmethod
    def from_options(cls, config: api.ChunkConfig | None = None, **options: Any) -> "ChunkwiseNodeParser":
        return cls(config, chunk_options=options)

    @classmethod
    def class_name(cls) -> str:
        return "ChunkwiseNodeParser"

    @property
    def config(self) -> api.ChunkConfig:
        return self._engine.config

    def _parse_nodes(self, nodes: Sequence[BaseNode], show_progress: bool = False, **kwargs: Any) -> List[BaseNode]:
        out: List[BaseNode] = []
        for parent in nodes:
            text = parent.get_content(metadata_mode=MetadataMode.NONE)
            pieces = self._engine.split_text(text, _stable_doc_id(parent))
            made = []
            for p in pieces:
                meta = {**(parent.metadata if self.include_metadata else {}), **p.metadata()}
                node = TextNode(id_=p.chunk_id, text=p.text, start_char_idx=p.start, end_char_idx=p.end,
                                metadata=meta, excluded_embed_metadata_keys=list(_OWN_KEYS),
                                excluded_llm_metadata_keys=list(_OWN_KEYS))
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

        ChunkwiseRetriever("index.db", groups=["sre"], k=5, mode="hybrid")

    The permission filter runs inside the query, before ranking. Each result is a TextNode (id = the
    passage's first chunk id, exact offsets, citation metadata) with the ranker's score.
    """

    def __init__(self, db, groups, *, k: int = 5, mode: str = "auto", expand: str = "none", budget: int | None = None,
                 bm25: str = "fts5", embedder: str = "auto", **kwargs: Any) -> None:
        self._searcher = Searcher(db, groups, k=k, mode=mode, expand=expand, budget=budget, bm25=bm25,
                                  embedder=embedder)
        super().__init__(**kwargs)

    def _retrieve(self, query_bundle: QueryBundle) -> List[NodeWithScore]:
        result = self._searcher.search(query_bundle.query_str)
        out = []
        for rank, p in enumerate(result.passages, start=1):
            node = TextNode(id_=p.chunk_ids[0], text=p.text, start_char_idx=p.start_char, end_char_idx=p.end_char,
                            metadata=passage_metadata(p, rank), excluded_embed_metadata_keys=list(_OWN_KEYS),
                            excluded_llm_metadata_keys=list(_OWN_KEYS))
            out.append(NodeWithScore(node=node, score=p.score))
        return out

    def close(self) -> None:
        self._searcher.close()
