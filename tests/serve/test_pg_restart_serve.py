"""``chunkwise serve`` on a PostgreSQL store across a restart of that PostgreSQL (issue 26, "Bad
input and faults"): a real server of the test's own (pgserver), restarted with ``pg_ctl restart -m
fast`` (every connection cut) or stopped and started again, under the real ``chunkwise serve``.
Before the fix each worker kept its dead connection and answered every later search with an error.
Now: the request after the restart succeeds or gets a 503 with a one-line message, and the server
recovers by itself (searches and /health answer 200 again) without being restarted."""
from __future__ import annotations

import pytest
from pg_servers import OWN_DB, restart, stopped

from .serving import Server

pytest.importorskip("pgserver", reason="PostgreSQL tests need the pg extra: pip install -e '.[test]'")
HEADERS = {"X-Chunkwise-Groups": "team"}


@pytest.fixture
def served(own_pg, tmp_path):
    from chunkwise.config import ChunkConfig
    from chunkwise.embed import make_embedder
    from chunkwise.pipeline import ingest

    url = own_pg.get_uri(OWN_DB)
    docs = tmp_path / "docs"
    docs.mkdir()
    for i in range(6):
        (docs / f"d{i}.md").write_text(f"# Harbour {i}\n\n## Tides\n\nTide tables for berth {i} and the harbour pilots.\n")
    ingest([docs], url, ChunkConfig(strategy="structure", size=64), embedder=make_embedder("hashing"), acl=("team",))
    server = Server(url, "--trust-groups-header", "--search-workers", "2", log=tmp_path / "serve.log")
    try:
        yield server
    finally:
        server.stop()


def _search(client, mode: str = "bm25"):
    return client.post("/search", json={"query": "harbour tide", "k": 3, "mode": mode})


def _ok(response) -> None:
    assert response.status_code == 200, response.text
    hits = response.json()["results"]
    assert hits and all("harbour" in h["text"].lower() for h in hits)


def _clean_503(response) -> None:
    assert response.status_code == 503, response.text
    error = response.json()["error"]
    assert error["code"] == "store_unreachable" and error["type"] == "server_error"
    assert "\n" not in error["message"] and "Traceback" not in error["message"]
    assert error["message"].startswith("cannot reach the PostgreSQL store") and "retry" in error["message"]


def test_the_next_requests_after_a_restart_succeed(own_pg, served):
    with served.client(**HEADERS) as client:
        for mode in ("bm25", "dense", "hybrid"):
            _ok(_search(client, mode))
        assert client.get("/health").status_code == 200
        restart(own_pg)
        # Both workers' connections are dead: each request lands on one of them and must be answered
        # on a new connection (a read is run again there), never with the dead one's error.
        for mode in ("bm25", "dense", "hybrid", "bm25", "dense", "hybrid"):
            _ok(_search(client, mode))
        health = client.get("/health")
        assert health.status_code == 200 and health.json()["generation"] is not None
        assert client.get("/documents/d1.md").status_code == 200


def test_a_stopped_store_gives_a_clean_503_then_recovers(own_pg, served):
    with served.client(**HEADERS) as client:
        _ok(_search(client))
        with stopped(own_pg):
            for _ in range(3):  # every worker: its dead connection, then a failed reconnect
                _clean_503(_search(client))
            health = client.get("/health")
            assert health.status_code == 503 and "\n" not in health.json()["error"]["message"]
        for _ in range(6):
            _ok(_search(client))
        assert client.get("/health").status_code == 200
    assert "Traceback" not in served.log.read_text(encoding="utf-8")
