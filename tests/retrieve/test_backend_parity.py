"""The same store content gives the same results on SQLite and on PostgreSQL: the same chunks in
the same order with the same scores, for BM25, dense and hybrid (fusion ties broken the same way),
for callers holding different groups — the PostgreSQL retriever ranking with the server's own
primitives (no rows loaded into the process)."""
import random

import pytest
from hypothesis import given, settings, strategies as st

from chunkwise.embed import make_embedder
from chunkwise.pipeline import ingest
from chunkwise.retrieve import Retriever
from test_engines_agree import TAGS, WORDS, _record, corpora
from test_store_search import CONFIG, GROUPS, TOPICS, FILLER, make_corpus

QUERIES = ["rollback freeze", "refund audit billing", "pager incident", "w3 w7 team", "the step", "restore backup w11",
           "nothing matches zzz", "deploy"]
CALLERS = [["sre"], ["finance", "legal"], GROUPS, ["nobody"], ["eng", "support"]]


@pytest.fixture(scope="module")
def pair(tmp_path_factory, pg_server):
    from conftest import PgDatabases

    root = tmp_path_factory.mktemp("corpus")
    acl_map = make_corpus(root, n_docs=30, seed=11)
    sqlite_db = tmp_path_factory.mktemp("db") / "s.db"
    dbs = PgDatabases(pg_server)
    pg = dbs.new()
    for db in (sqlite_db, pg):
        ingest([root], db, CONFIG, embedder=make_embedder("hashing"), acl_map=acl_map)
    with Retriever(sqlite_db) as a, Retriever(pg) as b:
        assert b.native and not a.native
        yield a, b
    dbs.drop()


def named(r, ranked):
    rows = {c.key: c for c in r.store.chunks(keys=[k for k, _ in ranked])}
    return [rows[k].record["chunk_id"] for k, _ in ranked], [s for _, s in ranked]


@pytest.mark.parametrize("mode", ["bm25", "dense", "hybrid"])
def test_rankings_are_identical_on_both_backends(pair, mode):
    a, b = pair
    rng = random.Random(mode)
    queries = QUERIES + [" ".join(rng.sample(TOPICS + FILLER, 3)) for _ in range(8)]
    compared = 0
    for q in queries:
        for groups in CALLERS:
            for n in (1, 7, 60):
                ids_a, scores_a = named(a, a.rank(q, groups, n, mode))
                ids_b, scores_b = named(b, b.rank(q, groups, n, mode))
                assert ids_a == ids_b, (q, groups, n)
                assert scores_b == pytest.approx(scores_a, rel=1e-6, abs=1e-7), (q, groups, n)
                compared += bool(ids_a)
    assert compared > len(queries) * 3  # most comparisons had results to compare


def test_searches_are_identical_on_both_backends(pair):
    a, b = pair
    for q in QUERIES[:4]:
        for groups in CALLERS[:3]:
            for expand in ("none", "neighbours", "parent"):
                ra = a.search(q, groups, k=5, mode="hybrid", expand=expand, budget=400).to_dict()
                rb = b.search(q, groups, k=5, mode="hybrid", expand=expand, budget=400).to_dict()
                assert ra == rb


def test_postgres_ranks_without_loading_rows(pair):
    _, b = pair
    b.rank("rollback freeze", ["sre"], 10, "hybrid")
    assert b.cache.index is None  # no in-memory index was built: the server ranked


def test_ties_cut_by_n_are_broken_the_same_way(tmp_path, pg_server):
    """Rows with the same score straddling the n-th place (terms at the idf floor, the informative
    term matching fewer than n rows): the server returns every candidate tied with the cut, and both
    backends keep the smaller chunk ids (the same chunks)."""
    from conftest import PgDatabases

    root = tmp_path / "ties"
    root.mkdir()
    for i in range(14):
        extra = "\n\nRollback twice when the canary fails." if i % 4 == 0 else ""
        (root / f"t{i:02d}.md").write_text(f"# Runbook {i}\n\nRollback the deploy, then page the on-call engineer."
                                           f"{extra}\n", encoding="utf-8")
    dbs = PgDatabases(pg_server)
    try:
        pg = dbs.new()
        for db in (tmp_path / "s.db", pg):
            ingest([root], db, CONFIG, embedder=make_embedder("hashing"), acl="sre")
        with Retriever(tmp_path / "s.db") as a, Retriever(pg) as b:
            for q in ("rollback", "rollback engineer", "canary deploy"):
                for n in (1, 2, 3, 4, 5, 9, 14, 20):
                    ids_a, scores_a = named(a, a.rank(q, ["sre"], n, "bm25"))
                    ids_b, scores_b = named(b, b.rank(q, ["sre"], n, "bm25"))
                    assert ids_a == ids_b and len(ids_a) == min(n, 14), (q, n)
                    assert scores_b == pytest.approx(scores_a, rel=1e-6, abs=1e-7), (q, n)
                    assert len(set(scores_a)) < len(scores_a) or n < 3, (q, n)  # the cut falls inside a tie
    finally:
        dbs.drop()


@settings(max_examples=25, deadline=None)
@given(st.data())
def test_postgres_ranks_like_fts5_for_random_corpora_weights_and_callers(pg_server, data):
    """The server's BM25F (lexical_top, re-scored here) against the FTS5 engine, on the engines-agree
    property's random corpora, queries, field weights (non-integer ones included) and callers."""
    import tempfile
    from pathlib import Path

    from conftest import PgDatabases
    from chunkwise.store import DocumentDiff, DocumentRow, open_store
    from chunkwise.store.writing import write_decided

    docs = data.draw(corpora)
    query = data.draw(st.lists(st.sampled_from(WORDS), min_size=1, max_size=4).map(" ".join))
    groups = data.draw(st.lists(st.sampled_from(TAGS + ["nobody"]), min_size=1, max_size=2))
    weights = data.draw(st.sampled_from([None, "title=0,heading=0", "title=3,heading=0.5", "title=0.7,heading=1.3"]))
    k = data.draw(st.integers(1, 12))
    dbs = PgDatabases(pg_server)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            got = []
            for db in (Path(tmp) / "s.db", dbs.new()):
                with open_store(db) as store:
                    store.add_root("/r")
                    for d, (title, chunks) in enumerate(docs):
                        recs = [_record(f"d{d}", i, text, title, heading, acl)
                                for i, (text, heading, acl) in enumerate(chunks)]
                        write_decided(store, DocumentRow(f"d{d}", "/r", f"d{d}", f"d{d}", "v", "i", title, "", "", "2026-01-01T00:00:00Z",
                                                         len(recs)),
                                             lambda state, old, recs=recs: DocumentDiff(recs, (), (), {}, "none"))
                with Retriever(db, embedder=None, field_weights=weights) as r:
                    got.append([(key, round(score, 5)) for key, score in r.rank(query, groups, k, "bm25")])
            assert got[0] == got[1]
    finally:
        dbs.drop()
