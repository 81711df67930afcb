"""Haystack 2 integration against the real haystack-ai: components in a real Pipeline."""
import importlib
import sys

import pytest

pytest.importorskip("haystack")

from haystack import Document, Pipeline  # noqa: E402

from chunkwise import api  # noqa: E402
from chunkwise.integrations.haystack import ChunkwiseRetriever, ChunkwiseSplitter  # noqa: E402

from integration_fixtures import CHUNK_OPTIONS, RUNBOOK, docs, store  # noqa: E402,F401 (fixtures)

P, Q = "Restart the pool.", "Check the queue."
REPEATED = f"# Intro\n\n{P}\n\n{Q}\n\n{P}\n\n## Again\n\n{Q}\n\n{P}\n\n{P}\n"


def test_splitter_in_a_pipeline_sets_ids_and_offsets():
    pipe = Pipeline()
    pipe.add_component("split", ChunkwiseSplitter(size=6))
    source = Document(content=REPEATED, meta={"file_path": "faq.md"})
    out = pipe.run({"split": {"documents": [source, Document(content=None, meta={"file_path": "x.bin"})]}})
    docs = out["split"]["documents"]
    assert len(docs) > 3 and sum(d.content == P for d in docs) >= 2
    for i, d in enumerate(docs):
        m = d.meta
        assert REPEATED[m["start_index"]:m["end_index"]] == d.content
        assert d.id == m["chunk_id"] and m["source_id"] == source.id and m["split_id"] == i
        assert m["split_idx_start"] == m["start_index"] and m["file_path"] == "faq.md"
    assert len({d.id for d in docs}) == len(docs)
    again = ChunkwiseSplitter(size=6).run([Document(content=REPEATED, meta={"file_path": "faq.md"})])["documents"]
    assert [d.id for d in again] == [d.id for d in docs]


def test_components_serialise_with_their_options(store):
    pipe = Pipeline()
    pipe.add_component("split", ChunkwiseSplitter(strategy="recursive", size=32))
    pipe.add_component("search", ChunkwiseRetriever(db=str(store), groups=["sre"], k=2, mode="bm25"))
    clone = Pipeline.loads(pipe.dumps(), allowed_modules=["chunkwise.integrations.haystack"])
    split = clone.get_component("split")
    assert split._engine.config.strategy == "recursive" and split._engine.config.size == 32
    assert clone.get_component("search").run(query="deploy freeze")["documents"]
    with pytest.raises(api.ConfigError):
        ChunkwiseSplitter(strategy="nope")


def test_retriever_serves_only_the_callers_groups(store, docs):
    r = ChunkwiseRetriever(db=str(store), groups=["sre"], k=5, mode="hybrid")
    found = r.run(query="payroll rollback finance controller approval")["documents"]
    assert found and all("payroll" not in d.meta["source"] for d in found)
    top = r.run(query="roll back a bad deploy", top_k=1)["documents"]
    assert len(top) == 1 and "deployctl revert" in top[0].content and top[0].score is not None
    assert top[0].meta["heading_path"][-1] == "Rolling back"
    split = ChunkwiseSplitter(**CHUNK_OPTIONS).run([Document(content=RUNBOOK, meta={"doc_id": top[0].meta["doc_id"]})])
    assert set(top[0].meta["chunk_ids"]) <= {d.id for d in split["documents"]}  # the store's own ids
    with pytest.raises(api.ConfigError, match="groups"):
        ChunkwiseRetriever(db=str(store), groups=[])


def test_missing_haystack_gives_the_install_hint(monkeypatch):
    for name in [m for m in sys.modules if m.split(".")[0] == "haystack"]:
        monkeypatch.setitem(sys.modules, name, None)
    monkeypatch.delitem(sys.modules, "chunkwise.integrations.haystack")
    with pytest.raises(ImportError, match=r"pip install 'chunkwise\[haystack\]'"):
        importlib.import_module("chunkwise.integrations.haystack")


def test_retriever_top_k_filters_and_page_number_survive_serialisation(store):
    r = ChunkwiseRetriever(db=str(store), groups=["sre", "finance"], top_k=1, mode="bm25",
                           filters={"doc_ids": ["payroll.md"]})
    data = r.to_dict()
    assert data["init_parameters"]["top_k"] == 1 and data["init_parameters"]["filters"] == {"doc_ids": ["payroll.md"]}
    clone = ChunkwiseRetriever.from_dict(data)
    found = clone.run(query="rollback roll back")["documents"]
    assert len(found) == 1 and found[0].meta["doc_id"] == "payroll.md" and "page_number" in found[0].meta
    both = clone.run(query="rollback roll back", top_k=5, filters={})["documents"]  # run-time filters replace
    assert {d.meta["doc_id"] for d in both} == {"runbook.md", "payroll.md"}
    assert {d.meta["doc_id"] for d in clone.run(query="rollback roll back", top_k=5,
                                                filters={"doc_ids": ["runbook.md"]})["documents"]} == {"runbook.md"}
    with pytest.raises(api.ConfigError, match="unknown key"):
        ChunkwiseRetriever(db=str(store), groups=["sre"], filters={"field": "meta.acl", "operator": "==", "value": "x"})
    with pytest.raises(api.ConfigError, match="same setting"):
        ChunkwiseRetriever(db=str(store), groups=["sre"], top_k=2, k=3)


def test_splitter_maps_documentsplitter_keywords_and_round_trips():
    s = ChunkwiseSplitter(split_by="word", split_length=40, split_overlap=5)
    assert (s._engine.config.unit, s._engine.config.size, s._engine.config.overlap) == ("words", 40, 5)
    again = ChunkwiseSplitter.from_dict(s.to_dict())
    assert again.to_dict() == s.to_dict() and again._engine.config == s._engine.config
    for bad, words in [({"split_by": "sentence"}, "split_by='word'"), ({"split_length": 9, "size": 9}, "twice"),
                       ({"split_threshold": 3}, "split_threshold")]:
        with pytest.raises(api.ConfigError, match=words):
            ChunkwiseSplitter(**bad)


def test_pages_from_form_feeds_and_the_header_in_the_embedded_content():
    text = "# Manual\n\nPage one text about pumps.\f## Valves\n\nPage two text about valves.\fPage three."
    docs = ChunkwiseSplitter(size=12, header="path").run([Document(content=text, meta={"file_path": "m.pdf"})])["documents"]
    assert [d.meta["page_number"] for d in docs] == sorted(d.meta["page_number"] for d in docs)
    assert docs[0].meta["page_number"] == 1 and docs[-1].meta["page_end"] == 3
    for d in docs:
        body = text[d.meta["start_index"]:d.meta["end_index"]]
        assert d.meta["page_number"] == text.count("\f", 0, d.meta["start_index"]) + 1 <= d.meta["page_end"]
        assert d.content == d.meta.get("header", "") + body
    assert any(d.meta.get("header") for d in docs)
