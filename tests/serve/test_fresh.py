"""A server that stays fresh (issue 24): after an ingest commits while ``chunkwise serve`` runs, the
next search finds the new document in every mode, dense included, without a restart; /health
reports the store's generation and each index's state."""
from __future__ import annotations

import pytest

from chunkwise.config import ChunkConfig
from chunkwise.embed import make_embedder
from chunkwise.pipeline import ingest

from .serving import Server, make_store


@pytest.fixture(scope="module")
def running(tmp_path_factory):
    root = tmp_path_factory.mktemp("fresh")
    db = make_store(root)
    server = Server(db, "--trust-groups-header", log=root / "serve.log")
    yield root, db, server
    server.stop()


def test_an_ingest_is_seen_in_every_mode_without_restart(running):
    root, db, server = running
    client = server.client(**{"X-Chunkwise-Groups": "sre"})
    before = client.get("/health").json()
    assert before["indexes"] == {"bm25": "in the store (always current)", "dense": "current"}
    query = "the okapi migration plan for the quokka cluster"
    for mode in ("bm25", "dense", "hybrid"):
        found = client.post("/search", json={"query": query, "mode": mode, "k": 10}).json()["results"]
        assert "quokka.md" not in {r["doc_id"] for r in found}

    new = root / "more"
    new.mkdir()
    (new / "quokka.md").write_text("# Quokka\n\n## Plan\n\nThe okapi migration plan moves the quokka cluster "
                                   "to the new region in two steps.\n", encoding="utf-8")
    ingest([new], db, ChunkConfig(strategy="structure", size=64), embedder=make_embedder("hashing"), acl=("sre",))

    after = client.get("/health").json()
    assert after["generation"] > before["generation"]
    assert after["indexes"]["dense"] == "stale"  # rebuilt by the next search that needs it
    for mode in ("hybrid", "dense", "bm25"):
        found = client.post("/search", json={"query": query, "mode": mode, "k": 3}).json()["results"]
        assert found and found[0]["doc_id"] == "quokka.md", (mode, found[:1])
    assert client.get("/health").json()["indexes"]["dense"] == "current"
    assert client.get("/documents/quokka.md").status_code == 200
    other = server.client(**{"X-Chunkwise-Groups": "finance"})
    assert "quokka.md" not in {r["doc_id"] for r in other.post("/search", json={"query": query, "mode": "hybrid"})
                                .json()["results"]}
