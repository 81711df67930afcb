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
