"""LangChain's own standard suites, as LangChain runs them on its partner packages:
``RetrieversIntegrationTests`` for ChunkwiseRetriever (``k`` as a constructor attribute and as an
invocation keyword) and ``EmbeddingsIntegrationTests`` for ChunkwiseEmbeddings."""
from __future__ import annotations

import atexit
import pickle
import shutil
import tempfile
from functools import lru_cache
from pathlib import Path

import pytest

pytest.importorskip("langchain_tests")

from langchain_tests.integration_tests import EmbeddingsIntegrationTests, RetrieversIntegrationTests  # noqa: E402

from chunkwise import api  # noqa: E402
from chunkwise.integrations.langchain import ChunkwiseEmbeddings, ChunkwiseRetriever  # noqa: E402

TOPICS = ["deploys", "databases", "queues", "caches", "dns", "certificates"]


@lru_cache(maxsize=None)
def standard_store() -> Path:
    """Six one-section documents that all answer the example query (so k=3 finds 3 passages)."""
    root = Path(tempfile.mkdtemp(prefix="chunkwise-lc-standard-"))
    atexit.register(shutil.rmtree, root, True)
    docs = root / "docs"
    docs.mkdir()
    for topic in TOPICS:
        (docs / f"{topic}.md").write_text(f"# Rollback of {topic}\n\nTo roll back {topic}, revert the last change "
                                          f"and watch the {topic} dashboard.\n", encoding="utf-8")
    db = root / "index.db"
    api.ingest([docs], db, api.ChunkConfig(strategy="structure", size=64), embedder="hashing", acl=["sre"])
    return db


@pytest.fixture
def anyio_backend():
    return "asyncio"


class TestChunkwiseRetrieverStandard(RetrieversIntegrationTests):
    pytestmark = pytest.mark.anyio  # the suites' async tests, run as LangChain runs them

    @property
    def retriever_constructor(self) -> type[ChunkwiseRetriever]:
        return ChunkwiseRetriever

    @property
    def retriever_constructor_params(self) -> dict:
        return {"db": str(standard_store()), "groups": ["sre"], "mode": "hybrid"}

    @property
    def retriever_query_example(self) -> str:
        return "how do I roll back?"


class TestChunkwiseEmbeddingsStandard(EmbeddingsIntegrationTests):
    pytestmark = pytest.mark.anyio

    @property
    def embeddings_class(self) -> type[ChunkwiseEmbeddings]:
        return ChunkwiseEmbeddings

    @property
    def embedding_model_params(self) -> dict:
        return {"embedder": "minilm"}


def _retriever(**options) -> ChunkwiseRetriever:
    return ChunkwiseRetriever(db=standard_store(), groups=["sre"], mode="hybrid", **options)


def test_k_set_as_an_attribute_after_construction_applies():
    r = _retriever(k=1)
    assert len(r.invoke("roll back")) == 1
    r.k = 4
    assert len(r.invoke("roll back")) == 4


def test_filters_as_attribute_and_invocation_keyword():
    assert {d.metadata["doc_id"] for d in _retriever(k=6, filters={"doc_ids": ["dns.md"]}).invoke("roll back")} == {"dns.md"}
    r = _retriever(k=6)
    got = r.invoke("roll back", filters={"doc_ids": ["dns.md", "queues.md"]})
    assert {d.metadata["doc_id"] for d in got} == {"dns.md", "queues.md"}
    assert len(r.invoke("roll back")) == 6  # the keyword applied to that call only
    with pytest.raises(api.ConfigError, match="access groups are never a filter"):
        r.invoke("roll back", filters={"groups": ["finance"]})
    with pytest.raises(api.ConfigError, match="unknown search option"):
        r.invoke("roll back", groups=["finance"])


def test_retriever_pickles_and_the_copy_searches():
    r = _retriever(k=2, filters={"file_types": ["md"]})
    r.invoke("roll back")  # an open connection in this thread must not stop the pickling
    copy = pickle.loads(pickle.dumps(r))
    assert (copy.k, copy.groups, copy.filters) == (2, ["sre"], {"file_types": ["md"]})
    assert [d.id for d in copy.invoke("roll back")] == [d.id for d in r.invoke("roll back")]


def test_embeddings_are_chunkwises_vectors():
    emb = ChunkwiseEmbeddings("hashing")
    assert emb.embed_query("roll back") == api.make_embedder("hashing").embed(["roll back"])[0]
    assert emb.embed_documents([]) == [] and emb.name.startswith("hashing")
    with pytest.raises(api.ConfigError):
        ChunkwiseEmbeddings("none")


def test_embeddings_default_is_the_model_a_new_store_is_built_with():
    # a default ChunkwiseEmbeddings must query a default-built store with its own vectors' backend
    assert ChunkwiseEmbeddings().name == api.make_embedder(api.DEFAULT_EMBEDDER).name
