"""LlamaIndex integration against the real llama-index-core."""
import importlib
import sys
import uuid

import pytest

pytest.importorskip("llama_index.core")

from llama_index.core.node_parser import NodeParser  # noqa: E402
from llama_index.core.retrievers import BaseRetriever  # noqa: E402
from llama_index.core.schema import Document, MetadataMode, NodeRelationship, TextNode  # noqa: E402

from chunkwise import api  # noqa: E402
from chunkwise.integrations.llamaindex import ChunkwiseNodeParser, ChunkwiseRetriever  # noqa: E402

from integration_fixtures import CHUNK_OPTIONS, RUNBOOK, docs, store  # noqa: E402,F401 (fixtures)

P, Q = "Restart the pool.", "Check the queue."
REPEATED = f"# Intro\n\n{P}\n\n{Q}\n\n{P}\n\n## Again\n\n{Q}\n\n{P}\n\n{P}\n"


def test_nodes_have_exact_offsets_relationships_and_stable_ids():
    parser = ChunkwiseNodeParser.from_options(size=6)
    assert isinstance(parser, NodeParser) and parser.config.size == 6 and parser.config.strategy == "auto"
    doc = Document(text=REPEATED, metadata={"file_path": "faq.md"})
    nodes = parser.get_nodes_from_documents([doc])
    assert len(nodes) > 3 and all(isinstance(n, TextNode) for n in nodes)
    assert sum(n.text == P for n in nodes) >= 2
    for n in nodes:
        assert REPEATED[n.start_char_idx:n.end_char_idx] == n.text
        assert n.relationships[NodeRelationship.SOURCE].node_id == doc.id_ and n.ref_doc_id == doc.id_
        assert n.metadata["file_path"] == "faq.md" and n.metadata["doc_id"] == "faq.md"
        assert n.node_id == n.metadata["chunk_id"] and len(n.node_id) == 32 and "-" not in n.node_id
    for a, b in zip(nodes, nodes[1:]):
        assert a.relationships[NodeRelationship.NEXT].node_id == b.node_id
        assert b.relationships[NodeRelationship.PREVIOUS].node_id == a.node_id
    assert NodeRelationship.PREVIOUS not in nodes[0].relationships and NodeRelationship.NEXT not in nodes[-1].relationships
    assert uuid.UUID(doc.id_).version == 4  # LlamaIndex's random default, not used for identity
    # A fresh Document (new random id_) of the same file gives the same node ids.
    again = ChunkwiseNodeParser.from_options(size=6)([Document(text=REPEATED, metadata={"file_path": "faq.md"})])
    assert [n.node_id for n in again] == [n.node_id for n in nodes]


def test_citation_fields_stay_out_of_the_embedded_text():
    node = ChunkwiseNodeParser.from_options(size=32)([Document(text=RUNBOOK, metadata={"file_path": "r.md"})])[0]
    embedded = node.get_content(metadata_mode=MetadataMode.EMBED)
    assert "chunk_id" not in embedded and "start_index" not in embedded and "file_path: r.md" in embedded


def test_an_explicit_document_id_names_the_chunks():
    parser = ChunkwiseNodeParser.from_options(size=32)
    a = parser([Document(text=RUNBOOK, id_="runbook-v1")])
    assert a[0].metadata["doc_id"] == "runbook-v1"
    anonymous = parser([Document(text=RUNBOOK)])
    assert anonymous[0].metadata["doc_id"].startswith("sha256:")


def test_bad_options_fail_at_construction():
    with pytest.raises(api.ConfigError):
        ChunkwiseNodeParser.from_options(size=10, overlap=20)


def test_node_ids_are_the_store_ids(store):
    hits = ChunkwiseRetriever(store, groups=["sre"], mode="bm25").retrieve("roll back a bad deploy")
    doc_id = hits[0].node.metadata["doc_id"]
    nodes = ChunkwiseNodeParser.from_options(**CHUNK_OPTIONS)([Document(text=RUNBOOK, id_=doc_id)])
    assert set(hits[0].node.metadata["chunk_ids"]) <= {n.node_id for n in nodes}


def test_retriever_serves_only_the_callers_groups(store):
    r = ChunkwiseRetriever(store, groups=["sre"], k=5, mode="hybrid")
    assert isinstance(r, BaseRetriever)
    hits = r.retrieve("payroll rollback finance controller approval")
    assert hits and all("payroll" not in h.node.metadata["source"] for h in hits)
    top = r.retrieve("roll back a bad deploy")[0]
    assert "deployctl revert" in top.node.text and top.score is not None
    assert top.node.start_char_idx == top.node.metadata["start_index"] < top.node.end_char_idx
    with pytest.raises(api.ConfigError, match="groups"):
        ChunkwiseRetriever(store, groups=[])


def test_missing_llamaindex_gives_the_install_hint(monkeypatch):
    for name in [m for m in sys.modules if m.split(".")[0] == "llama_index"]:
        monkeypatch.setitem(sys.modules, name, None)
    monkeypatch.delitem(sys.modules, "chunkwise.integrations.llamaindex")
    with pytest.raises(ImportError, match=r"pip install 'chunkwise\[llamaindex\]'"):
        importlib.import_module("chunkwise.integrations.llamaindex")
