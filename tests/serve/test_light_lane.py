"""The light lane (issue 25 item 8): heavy searches take at most ``workers - 1`` workers, so a light
one is admitted while heavy ones run, through the real server and a real HTTP client. No timing
assertions: the checks are about order (which answers arrive before which) and admission."""
from __future__ import annotations

import random
import threading

import pytest
from hypothesis import given, settings, strategies as st

from chunkwise.serve.cost import HEAVY, heavy_embedding, heavy_search, search_cost
from chunkwise.serve.engine import Engine

from .serving import Server, httpx

VOCAB = ["w" + "".join(random.Random(i).choice("abcdefghijklmnop") for _ in range(6)) for i in range(3000)]
HEAVY_BODY = {"query": " ".join(VOCAB[:400]), "k": 100, "overfetch": 20, "expand": "parent",
              "passage_budget": None, "mode": "hybrid"}
LIGHT_BODY = {"query": " ".join(VOCAB[5:12]), "k": 5, "mode": "hybrid"}
HEADERS = {"X-Chunkwise-Groups": "sre"}


def wide_store(root):
    """Documents of random vocabulary words, so a 400-word query matches most chunks (seconds of work)."""
    from chunkwise.config import ChunkConfig
    from chunkwise.embed import make_embedder
    from chunkwise.pipeline import ingest

    rng = random.Random(7)
    docs = root / "docs"
    docs.mkdir()
    for d in range(16):
        parts = [f"# Doc {d}"]
        for s in range(6):
            parts.append(f"## Section {s}")
            parts += [" ".join(rng.choice(VOCAB[:600]) for _ in range(60)) + "." for _ in range(4)]
        (docs / f"d{d}.md").write_text("\n\n".join(parts) + "\n", encoding="utf-8")
    ingest([docs], root / "store.db", ChunkConfig(strategy="structure", size=64), embedder=make_embedder("hashing"),
           acl=("sre",))
    return root / "store.db"


@pytest.fixture(scope="module")
def wide_db(tmp_path_factory):
    return wide_store(tmp_path_factory.mktemp("lane"))


@pytest.fixture(scope="module")
def lane_server(wide_db):
    server = Server(wide_db, "--trust-groups-header", "--search-workers", "2", "--query-timeout", "300",
                    log=wide_db.parent / "serve.log")
    yield server
    server.stop()


def test_the_benchmark_queries_are_classified():
    assert heavy_search(**HEAVY_BODY)
    assert not heavy_search(**LIGHT_BODY)
    assert not heavy_search("how do I roll back a deploy?")  # a default question
    assert heavy_search("how do I roll back a deploy?", k=100)
    assert heavy_embedding(2048) and not heavy_embedding(1)


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=300), st.integers(1, 100), st.integers(1, 20),
       st.sampled_from(["none", "neighbours", "parent", "page", "pages"]), st.none() | st.integers(1, 10_000))
def test_cost_grows_with_every_dimension(query, k, overfetch, expand, budget):
    cost = search_cost(query, k=k, overfetch=overfetch, expand=expand, passage_budget=budget)
    assert cost >= 1
    assert search_cost(query, k=min(100, k + 1), overfetch=overfetch, expand=expand, passage_budget=budget) >= cost
    assert search_cost(query + " zzqx", k=k, overfetch=overfetch, expand=expand, passage_budget=budget) >= cost
    assert search_cost(query, k=k, overfetch=overfetch, expand=expand, passage_budget=None) >= cost
    assert (cost >= HEAVY) == heavy_search(query, k=k, overfetch=overfetch, expand=expand, passage_budget=budget)


def test_a_light_search_is_answered_while_heavy_ones_run(lane_server):
    finished: list[int] = []

    def heavy() -> None:
        r = httpx.post(lane_server.url + "/search", json=HEAVY_BODY, headers=HEADERS, timeout=600)
        finished.append(r.status_code)

    threads = [threading.Thread(target=heavy) for _ in range(3)]
    for t in threads:
        t.start()
    threading.Event().wait(0.5)  # let the heavy requests reach the server (not a timing assertion)
    light = httpx.post(lane_server.url + "/search", json=LIGHT_BODY, headers=HEADERS, timeout=600)
    heavy_done_before_light = len(finished)
    for t in threads:
        t.join(timeout=600)
    assert light.status_code == 200 and light.json()["results"]
    assert finished == [200, 200, 200]  # the heavy ones are answered too, in turn on their one slot
    # One queue for all (before the lanes): the light one waited for two of the three heavy ones.
    assert heavy_done_before_light <= 1, heavy_done_before_light


def test_heavy_jobs_leave_one_worker_free(tmp_path):
    from .serving import make_store

    e = Engine(str(make_store(tmp_path)), workers=3)
    gates = [threading.Event() for _ in range(3)]
    started = [threading.Event() for _ in range(3)]

    def hold(i: int) -> int:
        started[i].set()
        gates[i].wait(60)
        return i

    try:
        heavy = [e.submit_in(True, hold, i) for i in range(3)]
        assert started[0].wait(30) and started[1].wait(30)
        assert not started[2].wait(0.3)  # two heavy slots of three workers: the third waits ...
        found = e.submit(e.search, "rollback deploy", ["sre"], k=2).result(timeout=60)
        assert found["results"]  # ... and a light job is answered on the free worker meanwhile
        gates[0].set()
        assert heavy[0].result(timeout=30) == 0 and started[2].wait(30)  # a slot freed: the third starts
    finally:
        for g in gates:
            g.set()
        e.close()
    assert [f.result() for f in heavy] == [0, 1, 2]


def test_warming_up_is_not_a_query_under_the_time_limit(wide_db):
    """Loading the model and building the index at start may take longer than one query may (100k
    chunks on a loaded machine did): the server must start anyway; queries keep their limit."""
    from chunkwise.serve.engine import QueryTimeout

    e = Engine(str(wide_db), workers=2, query_seconds=1e-6)
    try:
        e.warm()  # before: QueryTimeout, and `chunkwise serve` exited
        assert e.cache.index is not None
        with pytest.raises(QueryTimeout):
            e.submit(lambda: e.retriever.store.db.execute(
                "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 10000000) "
                "SELECT count(*) FROM n").fetchone()).result(timeout=60)
    finally:
        e.close()


def test_an_index_made_stale_by_an_ingest_is_rebuilt_outside_the_time_limit(tmp_path):
    """After an ingest the in-memory index is rebuilt by the next job; on a large store that takes
    longer than one query may, so it is done before the job's limit starts (else every search after
    an ingest would time out while rebuilding). The job itself runs pure Python under a 1 µs limit."""
    from chunkwise.config import ChunkConfig
    from chunkwise.embed import make_embedder
    from chunkwise.pipeline import ingest

    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("# A\n\nalpha beta gamma\n", encoding="utf-8")
    run = lambda: ingest([docs], tmp_path / "s.db", ChunkConfig(), embedder=make_embedder("hashing"), acl=("sre",))
    run()
    e = Engine(str(tmp_path / "s.db"), workers=1, query_seconds=1e-6)
    try:
        e.warm()
        built = e.cache.generation
        (docs / "b.md").write_text("# B\n\ndelta epsilon\n", encoding="utf-8")
        run()
        seen = e.submit(lambda: e.cache.generation).result(timeout=60)  # before: the old generation
        assert built is not None and seen is not None and seen > built
    finally:
        e.close()
