"""LlamaIndex integration against the real llama-index-core."""
import importlib
import sys
import uuid

import pytest

pytest.importorskip("llama_index.core")

from llama_index.core.ingestion import IngestionPipeline  # noqa: E402
from llama_index.core.base.embeddings.base import BaseEmbedding  # noqa: E402
from llama_index.core.node_parser import NodeParser  # noqa: E402
from llama_index.core.retrievers import BaseRetriever  # noqa: E402
from llama_index.core.schema import Document, MetadataMode, NodeRelationship, TextNode  # noqa: E402

from chunkwise import api  # noqa: E402
from chunkwise.integrations.llamaindex import ChunkwiseNodeParser, ChunkwiseRetriever  # noqa: E402

from integration_fixtures import CHUNK_OPTIONS, ROOT, RUNBOOK, docs, store  # noqa: E402,F401 (fixtures)

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


def test_embedded_text_is_chunkwises_and_the_llm_reads_the_citation():
    node = ChunkwiseNodeParser.from_options(size=32)([Document(text=RUNBOOK, metadata={"file_path": "r.md"})])[0]
    embedded = node.get_content(metadata_mode=MetadataMode.EMBED)
    assert embedded == node.text.strip()  # no header configured: the text alone, no citation fields
    llm = node.get_content(metadata_mode=MetadataMode.LLM)
    assert llm.startswith("r.md > ") and llm.endswith(node.text.strip()) and "chunk_id" not in llm


@pytest.mark.parametrize("header", ["title", "path"])
def test_the_configured_header_is_what_llamaindex_embeds(header):
    text = open(ROOT / "examples" / "incident-runbook.md", encoding="utf-8").read()
    parser = ChunkwiseNodeParser(chunk_size=64, header=header)
    nodes = parser([Document(text=text, metadata={"file_path": "incident-runbook.md"})])
    chunks = api.chunk_text(text, parser.config)
    assert [n.text for n in nodes] == [c.text for c in chunks]
    assert [n.get_content(metadata_mode=MetadataMode.EMBED) for n in nodes] == [c.embed_text.strip() for c in chunks]
    assert any(c.embed_text != c.text for c in chunks)  # the header is really there

    class Recording(BaseEmbedding):
        seen: list = []

        def _get_text_embedding(self, t):
            self.seen.append(t)
            return [1.0, float(len(t))]

        _get_query_embedding = _get_text_embedding

        async def _aget_query_embedding(self, t):
            return self._get_text_embedding(t)

    model = Recording()  # LlamaIndex's own ingestion: the parser, then the embedder, as a pipeline
    out = IngestionPipeline(transformations=[parser, model]).run(
        documents=[Document(text=text, metadata={"file_path": "incident-runbook.md"})])
    assert sorted(model.seen) == sorted(c.embed_text.strip() for c in chunks)
    assert [n.node_id for n in out] == [n.node_id for n in nodes] and out[0].embedding is not None


def test_metadata_is_flat_with_page_number_and_a_heading_string():
    node = ChunkwiseNodeParser(chunk_size=32)([Document(text=RUNBOOK, metadata={"file_path": "r.md", "tags": ["a", "b"]})])[1]
    assert all(v is None or isinstance(v, (str, int, float, bool)) for v in node.metadata.values())
    assert node.metadata["heading_path"] == "Deploys > Rolling back" and node.metadata["tags"] == "a,b"
    assert "page_number" in node.metadata


def test_llamaindex_keywords_map_and_what_cannot_map_is_refused():
    parser = ChunkwiseNodeParser(chunk_size=100, chunk_overlap=10, include_prev_next_rel=False)
    assert (parser.config.size, parser.config.overlap, parser.include_prev_next_rel) == (100, 10, False)
    assert ChunkwiseNodeParser.from_options(chunk_size=80).config.size == 80
    for bad, words in [({"paragraph_separator": "\n\n"}, "strategy"), ({"chunk_size": 10, "size": 10}, "twice"),
                       ({"chunk_sise": 10}, "not an option")]:
        with pytest.raises(api.ConfigError, match=words):
            ChunkwiseNodeParser(**bad)


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
    assert set(hits[0].node.metadata["chunk_ids"].split(",")) <= {n.node_id for n in nodes}


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


def test_retriever_honours_similarity_top_k_and_filters(store):
    r = ChunkwiseRetriever(store, groups=["sre", "finance"], similarity_top_k=1, mode="bm25")
    assert len(r.retrieve("rollback roll back")) == 1
    r.similarity_top_k = 5
    both = r.retrieve("rollback roll back")
    assert {h.node.metadata["doc_id"] for h in both} == {"runbook.md", "payroll.md"}
    r.filters = {"doc_ids": ["payroll.md"]}
    assert {h.node.metadata["doc_id"] for h in r.retrieve("rollback roll back")} == {"payroll.md"}
    top = both[0].node
    assert all(v is None or isinstance(v, (str, int, float, bool)) for v in top.metadata.values())
    assert top.get_content(metadata_mode=MetadataMode.LLM).startswith(top.metadata["source"] + " > ")
    with pytest.raises(api.ConfigError, match="same setting"):
        ChunkwiseRetriever(store, groups=["sre"], similarity_top_k=2, k=3)


def test_missing_llamaindex_gives_the_install_hint(monkeypatch):
    for name in [m for m in sys.modules if m.split(".")[0] == "llama_index"]:
        monkeypatch.setitem(sys.modules, name, None)
    monkeypatch.delitem(sys.modules, "chunkwise.integrations.llamaindex")
    with pytest.raises(ImportError, match=r"pip install 'chunkwise\[llamaindex\]'"):
        importlib.import_module("chunkwise.integrations.llamaindex")


def test_from_options_takes_access_tags_as_the_constructor_and_the_other_splitters_do():
    text = "# Pay\n\nPayroll runs on the 25th.\n"
    doc = Document(text=text, metadata={"file_path": "pay.md"})
    built = ChunkwiseNodeParser.from_options(size=64, acl="staff", acl_map={"ops/**": ["sre"]})
    direct = ChunkwiseNodeParser(size=64, acl="staff", acl_map={"ops/**": ["sre"]})
    records = api.chunk_text(text, doc_id="pay.md", size=64, acl="staff")
    nodes = built.get_nodes_from_documents([doc])
    assert [n.node_id for n in nodes] == [n.node_id for n in direct.get_nodes_from_documents([doc])]
    assert [n.node_id for n in nodes] == [r.chunk_id for r in records]
    assert all(n.metadata["acl"] == "staff" and not n.metadata["reasons"] for n in nodes)
