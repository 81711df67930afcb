"""LangChain integration against the real langchain-core / langchain-text-splitters."""
import asyncio
import importlib
import sys

import pytest

pytest.importorskip("langchain_core")
pytest.importorskip("langchain_text_splitters")

from langchain_core.documents import Document  # noqa: E402
from langchain_core.retrievers import BaseRetriever  # noqa: E402
from langchain_text_splitters import TextSplitter  # noqa: E402

from chunkwise import api  # noqa: E402
from chunkwise.integrations.langchain import ChunkwiseRetriever, ChunkwiseSplitter  # noqa: E402

from integration_fixtures import CHUNK_OPTIONS, ROOT, RUNBOOK, docs, store  # noqa: E402,F401 (fixtures)

P, Q = "Restart the pool.", "Check the queue."
REPEATED = f"# Intro\n\n{P}\n\n{Q}\n\n{P}\n\n## Again\n\n{Q}\n\n{P}\n\n{P}\n"


def test_is_a_text_splitter_with_the_chunk_options():
    s = ChunkwiseSplitter(strategy="recursive", size=32, overlap=4, unit="tokens", header="path")
    assert isinstance(s, TextSplitter)
    assert (s.config.strategy, s.config.size, s.config.overlap, s.config.header) == ("recursive", 32, 4, "path")
    assert s.split_text(RUNBOOK) == [c.text for c in api.chunk_text(RUNBOOK, s.config)]
    with pytest.raises(api.ConfigError):
        ChunkwiseSplitter(strategy="nope")


def test_documents_carry_exact_offsets_even_for_repeated_text():
    s = ChunkwiseSplitter(size=6)
    docs = s.create_documents([REPEATED], [{"source": "faq.md"}])
    assert sum(d.page_content == P for d in docs) >= 2  # the same text at two places
    for d in docs:
        m = d.metadata
        assert REPEATED[m["start_index"]:m["end_index"]] == d.page_content
        assert d.id == m["chunk_id"] and m["doc_id"] == "faq.md" and m["source"] == "faq.md"
    starts = [d.metadata["start_index"] for d in docs]
    assert starts == sorted(starts) and len(set(starts)) == len(starts)  # each repeat at its own place
    assert len({d.id for d in docs}) == len(docs)
    assert docs[-1].metadata["heading_path"] == ["Intro", "Again"]
    assert [d.id for d in ChunkwiseSplitter(size=6).create_documents(
        [REPEATED], [{"source": "faq.md"}])] == [d.id for d in docs]  # stable across instances and runs


def test_split_documents_keeps_metadata_and_ids_follow_the_document():
    s = ChunkwiseSplitter(size=32)
    page = Document(page_content="Torque the bolts to 40 Nm.\n\nCheck them again after 100 hours.",
                    metadata={"source": "manual.pdf", "page": 7})
    out = s.split_documents([page])
    assert all(d.metadata["page"] == 7 and d.metadata["source"] == "manual.pdf" for d in out)
    named = s.split_documents([Document(page_content=page.page_content, id="doc-7")])
    assert named[0].metadata["doc_id"] == "doc-7" and named[0].id != out[0].id
    anonymous = s.split_documents([Document(page_content=page.page_content)])
    assert anonymous[0].metadata["doc_id"].startswith("sha256:")
    assert s.split_documents([Document(page_content=page.page_content)])[0].id == anonymous[0].id


def test_split_file_sets_pages_from_the_pdf():
    docs = ChunkwiseSplitter(size=128).split_file(ROOT / "examples" / "maintenance-manual.pdf")
    assert docs and {d.metadata["page"] for d in docs} >= {1, 2}
    assert all(d.metadata["source"].endswith("maintenance-manual.pdf") for d in docs)


def test_splitter_ids_are_the_store_ids(store, docs):
    hits = ChunkwiseRetriever(db=store, groups=["sre"], k=3, mode="bm25").invoke("roll back a bad deploy")
    assert hits
    doc_id = hits[0].metadata["doc_id"]
    split = ChunkwiseSplitter(**CHUNK_OPTIONS).create_documents([RUNBOOK], [{"doc_id": doc_id}])
    assert set(hits[0].metadata["chunk_ids"]) <= {d.id for d in split}


def test_retriever_serves_only_the_callers_groups(store):
    r = ChunkwiseRetriever(db=str(store), groups=["sre"], k=5, mode="hybrid")
    assert isinstance(r, BaseRetriever)
    docs = r.invoke("payroll rollback finance controller approval")
    assert docs and all("payroll" not in d.metadata["source"] for d in docs)
    top = r.invoke("roll back a bad deploy")[0]
    m = top.metadata
    assert "deployctl revert" in top.page_content and m["heading_path"][-1] == "Rolling back"
    assert m["rank"] == 1 and m["source"].endswith("runbook.md") and m["end_index"] > m["start_index"]
    assert m["versions"][0] == m["doc_id"] and m["superseded_by"] == [] and m["version"] == ""
    finance = ChunkwiseRetriever(db=str(store), groups="finance", mode="bm25").invoke("payroll rollback")
    assert finance and all(d.metadata["source"].endswith("payroll.md") for d in finance)
    assert ChunkwiseRetriever(db=str(store), groups=["nobody"], mode="bm25").invoke("rollback") == []


def test_retriever_works_from_other_threads(store):
    r = ChunkwiseRetriever(db=str(store), groups=["sre"], mode="bm25")
    one = asyncio.run(r.ainvoke("deploy freeze"))  # LangChain runs sync retrievers in a worker thread
    assert one and one[0].page_content == r.invoke("deploy freeze")[0].page_content
    assert [len(x) > 0 for x in r.batch(["deploy freeze", "release manager"])] == [True, True]


def test_retriever_needs_groups(store):
    with pytest.raises(api.ConfigError, match="groups"):
        ChunkwiseRetriever(db=str(store), groups=[])


def test_missing_langchain_gives_the_install_hint(monkeypatch):
    for name in [m for m in sys.modules if m.split(".")[0] in ("langchain_core", "langchain_text_splitters")]:
        monkeypatch.setitem(sys.modules, name, None)  # as if not installed
    monkeypatch.delitem(sys.modules, "chunkwise.integrations.langchain")
    with pytest.raises(ImportError, match=r"pip install 'chunkwise\[langchain\]'"):
        importlib.import_module("chunkwise.integrations.langchain")


def test_langchain_keywords_map_and_what_cannot_map_is_refused():
    s = ChunkwiseSplitter(chunk_size=100, chunk_overlap=10)
    assert (s.config.size, s.config.overlap, s._chunk_size, s._chunk_overlap) == (100, 10, 100, 10)
    r = ChunkwiseSplitter(chunk_size=50, separators=["\n\n", "\n", " ", ""])
    assert r.config.strategy == "recursive" and r.config.separators == ("\n\n", "\n", " ", "")
    assert ChunkwiseSplitter(chunk_size=50, add_start_index=True).config.size == 50
    for bad, words in [({"length_function": len}, "unit="), ({"chunk_size": 10, "size": 10}, "twice"),
                       ({"add_start_index": False}, "always"), ({"strip_whitespace": True}, "always"),
                       ({"separators": ["\n"], "strategy": "structure"}, "recursive"), ({"chunk_sise": 5}, "not an option")]:
        with pytest.raises(api.ConfigError, match=words):
            ChunkwiseSplitter(**bad)


@pytest.mark.parametrize("header", ["title", "path"])
def test_the_configured_header_is_in_page_content_and_offsets_stay_exact(header):
    text = open(ROOT / "examples" / "incident-runbook.md", encoding="utf-8").read()
    s = ChunkwiseSplitter(chunk_size=64, header=header)
    docs = s.create_documents([text], [{"source": "incident-runbook.md"}])
    chunks = api.chunk_text(text, s.config)
    assert [d.page_content for d in docs] == [c.embed_text for c in chunks] == s.split_text(text)
    for d in docs:
        assert d.page_content == d.metadata.get("header", "") + text[d.metadata["start_index"]:d.metadata["end_index"]]
    assert any("header" in d.metadata for d in docs)
