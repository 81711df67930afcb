"""Exact score ties rank by ascending chunk id (retrieve/ties.py), never by the order rows were
written: two stores holding the same documents written in opposite orders (so every row key is
different) rank alike in every mode and engine, on SQLite and PostgreSQL, and alike across the two
backends; the corpora are full of exact ties (the same texts in several documents: equal BM25
scores, identical vectors, fused ties)."""
import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from chunkwise.config import ChunkConfig
from chunkwise.embed import make_embedder
from chunkwise.pipeline import ingest
from chunkwise.retrieve import Retriever
from chunkwise.retrieve.fusion import rrf
from chunkwise.retrieve.ties import best_first, settle
from chunkwise.store import DocumentDiff, DocumentRow, open_store
from chunkwise.store.writing import write_decided
from backends import key_to_chunk
from conftest import BACKENDS, PgDatabases, module_location
from test_engines_agree import TAGS, WORDS, _record, corpora

CONFIG = ChunkConfig(strategy="structure", size=64, header="path")
RUNBOOK = ("# Runbook\n\n## Rollback\n\nRollback the deploy, then page the on-call engineer.\n\n"
           "## Freeze\n\nNo deploy during a freeze; rollback is always allowed.\n")
NOTES = "# Notes\n\nRollback twice when the canary fails.\n\n## Pager\n\nPage the owner.\n"
FILES = {**{f"runbook-{i}.md": RUNBOOK for i in range(4)}, **{f"notes-{i}.md": NOTES for i in range(3)},
         "pager.md": "# Pager\n\nPage the owner of the failing service; rollback if asked.\n",
         "freeze.md": "# Freeze\n\nThe freeze starts on Friday. No deploy, no rollback without the owner.\n",
         # BM25 prefers the long one, the vectors the short one (for "rollback deploy"): fused ties.
         **{f"steps-{i}.md": "# Steps\n\nRollback rollback, rollback the deploy and the database and the cache.\n"
            for i in range(2)},
         **{f"short-{i}.md": "# Rollback\n\nRollback.\n" for i in range(2)}}
ACL = {"runbook-*": ["sre"], "notes-*": ["sre", "eng"], "pager.md": ["eng"], "freeze.md": ["sre"],
       "steps-*": ["sre", "eng"], "short-*": ["sre", "eng"]}
QUERIES = ["rollback", "rollback deploy", "freeze", "page owner", "canary engineer", "deploy freeze owner"]
CALLERS = [["sre"], ["eng"], ["sre", "eng"]]
CUTS = (1, 2, 3, 5, 7, 10, 40)
MODES = ("bm25", "dense", "hybrid")


def write_in_order(db, root: Path, names) -> None:
    """Ingest the corpus one file at a time in ``names``' order: each row gets its key in that order."""
    root.mkdir(parents=True)
    emb = make_embedder("hashing")
    for name in names:
        (root / name).write_text(FILES[name], encoding="utf-8")
        ingest([root], db, CONFIG, embedder=emb, acl_map=ACL)


EQUAL = "bm25=1,dense=1"  # plain RRF: symmetric ranks (1, 2) and (2, 1) tie, so hybrid cuts fall in ties


def observe(db, bm25: str = "fts5"):
    """Every ranking of the test, named by chunk id: (query, groups, n, mode) -> ([ids], [scores])."""
    out = {}
    names = key_to_chunk(db)
    with Retriever(db, bm25=bm25, fusion=EQUAL) as r:
        for q in QUERIES:
            for groups in CALLERS:
                for mode in MODES:
                    for n in CUTS:
                        ranked = r.rank(q, groups, n, mode)
                        out[q, tuple(groups), n, mode] = ([names[k] for k, _ in ranked], [s for _, s in ranked])
    return out


@pytest.fixture(scope="module", params=BACKENDS)
def opposite(request, tmp_path_factory):
    """The corpus written forwards into one store and backwards into another, on one backend."""
    base = tmp_path_factory.mktemp("ties")
    forward, backward = (module_location(request, tmp_path_factory, request.param) for _ in range(2))
    write_in_order(forward, base / "f", sorted(FILES))
    write_in_order(backward, base / "b", sorted(FILES, reverse=True))
    return forward, backward


def assert_ties_decide(observed) -> None:
    """The comparison means something: many cuts fall inside a run of equal scores, in every mode."""
    for mode in MODES:
        tied = [v for (_, _, n, m), v in observed.items() if m == mode and len(set(v[1])) < len(v[1])]
        assert len(tied) >= (3 if mode == "hybrid" else 10), mode


def test_opposite_write_orders_rank_alike(opposite):
    forward, backward = opposite
    keys_f, keys_b = key_to_chunk(forward), key_to_chunk(backward)
    assert sorted(keys_f.values()) == sorted(keys_b.values())  # the same chunks
    assert [keys_f[k] for k in sorted(keys_f)] != [keys_b[k] for k in sorted(keys_b)]  # under other keys
    engines = ("fts5", "sparse") if not str(forward).startswith("postgresql") else ("fts5",)
    for bm25 in engines:
        a, b = observe(forward, bm25), observe(backward, bm25)
        assert a == b, bm25  # the same chunk ids, the same score bits
        assert_ties_decide(a)
        for (_, _, _, mode), (ids, scores) in a.items():
            if mode != "hybrid":  # equal scores: ascending chunk id (fusion also looks at the best rank)
                assert [(-s, c) for c, s in zip(ids, scores)] == sorted((-s, c) for c, s in zip(ids, scores))


def test_opposite_write_orders_search_alike(opposite):
    """The whole search (passages, identical texts collapsed, expansion, budget) gives the same result."""
    forward, backward = opposite
    with Retriever(forward) as a, Retriever(backward) as b:
        for q in QUERIES[:4]:
            for groups in CALLERS:
                for mode in MODES:
                    for expand in ("none", "neighbours", "parent"):
                        ra = a.search(q, groups, k=3, mode=mode, expand=expand, budget=300).to_dict()
                        rb = b.search(q, groups, k=3, mode=mode, expand=expand, budget=300).to_dict()
                        assert ra == rb, (q, groups, mode, expand)


def test_sqlite_and_postgres_written_in_opposite_orders_rank_alike(tmp_path, pg_server):
    """Across backends: SQLite written forwards ranks as PostgreSQL written backwards (both SQLite
    BM25 engines against the server's own BM25 and dense primitives)."""
    dbs = PgDatabases(pg_server)
    try:
        pg = dbs.new()
        write_in_order(tmp_path / "s.db", tmp_path / "f", sorted(FILES))
        write_in_order(pg, tmp_path / "b", sorted(FILES, reverse=True))
        want = observe(pg)
        assert_ties_decide(want)
        for bm25 in ("fts5", "sparse"):
            got = observe(tmp_path / "s.db", bm25)
            assert got.keys() == want.keys()
            for key, (ids, scores) in got.items():
                assert ids == want[key][0], (bm25, key)
                assert scores == pytest.approx(want[key][1], rel=1e-6, abs=1e-7), (bm25, key)
    finally:
        dbs.drop()


# -- the rule itself, on plain values ------------------------------------------------------------
def test_best_first_cuts_a_tie_by_chunk_id_and_asks_only_for_ties():
    keys = np.array([10, 11, 12, 13, 14, 15])
    scores = np.array([1.0, 5.0, 3.0, 5.0, 5.0, 0.5], np.float32)
    names = {10: "e", 11: "c", 12: "a", 13: "b", 14: "d", 15: "f"}
    asked = []

    def lookup(ks):
        asked.append(sorted(ks))
        return {k: names[k] for k in ks}

    assert [k for k, _ in best_first(keys, scores, 2, lookup)] == [13, 11]  # the tie at 5 cut by id: b, c (not d)
    assert asked == [[11, 13, 14]]
    asked.clear()
    assert [k for k, _ in best_first(keys[[0, 2, 5]], scores[[0, 2, 5]], 2, lookup)] == [12, 10]
    assert asked == []  # no tie: no lookup
    # a row the store no longer has goes last in its tie
    assert [k for k, _ in best_first(keys, scores, 3, lambda ks: {k: names[k] for k in ks if k != 13})] == [11, 14, 13]


def test_settle_orders_only_the_runs_that_reach_the_cut():
    assert settle(["z", "y", "x", "w"], [0, 0, 1, 1], 1) == ["y"]
    assert settle(["z", "y", "x", "w"], [0, 0, 1, 1], 3) == ["y", "z", "w"]
    assert settle(["z", "y", "x"], [0, 1, 2], None) == ["z", "y", "x"]
    asked = []
    assert settle([3, 2, 1, 0], [0, 0, 1, 2], 2, lambda xs: asked.append(xs) or {x: str(x) for x in xs}) == [2, 3]
    assert asked == [[3, 2]]


def test_rrf_ties_by_best_rank_then_chunk_id_not_by_row_key():
    # 7 is first in one list, 9 first in the other: the same fused score and best rank; "a" < "b"
    fused = rrf([[9, 7], [7, 9]], chunk_ids=lambda keys: {7: "b", 9: "a"})
    assert [k for k, _ in fused] == [9, 7]
    fused = rrf([[9, 7], [7, 9]], chunk_ids=lambda keys: {7: "a", 9: "b"})
    assert [k for k, _ in fused] == [7, 9]


def test_an_in_memory_index_names_the_tie_ranks_of_the_keys_it_holds():
    from chunkwise.retrieve.index import SearchIndex

    idx = SearchIndex([30, 10, 20], [("a",), ("b",), ("a",)], [2, 0, 1])
    assert idx.tie_ranks([10, 20, 30, 99]) == {10: 0, 20: 1, 30: 2}  # 99: not held (the store is asked)
    assert SearchIndex([], [], []).tie_ranks([1]) == {}


# -- property: random corpora, forced ties, random write orders ------------------------------------
def _store(db, docs, order, emb):
    """``docs`` (title, [(text, heading, tags)]) written in ``order``, vectors of the hashing embedder."""
    with open_store(db) as store:
        store.add_root("/r")
        with store.run("2026-01-01T00:00:00Z") as finish:
            for d in order:
                title, chunks = docs[d]
                recs = [_record(f"d{d}", i, text, title, heading, acl) for i, (text, heading, acl) in enumerate(chunks)]
                for r in recs:
                    r["embed_model"], r["embed_key"] = emb.name, "k-" + r["embed_text"]
                vectors = {r["embed_key"]: [float(x) for x in emb.embed([r["embed_text"]])[0]] for r in recs}
                write_decided(store, DocumentRow(f"d{d}", "/r", f"d{d}", f"d{d}", "v", "i", title, "", "", "2026-01-01T00:00:00Z", len(recs)),
                                     lambda state, old, recs=recs, vectors=vectors: DocumentDiff(recs, (), (), vectors, emb.name))
            finish("2026-01-01T00:01:00Z", {}, {"embedder": emb.name})


@settings(max_examples=15, deadline=None)
@given(st.data())
def test_random_corpora_with_ties_rank_alike_in_any_write_order(pg_server, data):
    docs = data.draw(corpora)
    copies = data.draw(st.lists(st.integers(0, len(docs) - 1), min_size=1, max_size=4))
    docs = docs + [docs[i] for i in copies]  # the same title and chunks in another document: exact ties
    orders = [list(range(len(docs))), data.draw(st.permutations(range(len(docs)))),
              data.draw(st.permutations(range(len(docs))))]
    query = data.draw(st.lists(st.sampled_from(WORDS), min_size=1, max_size=3).map(" ".join))
    groups = data.draw(st.lists(st.sampled_from(TAGS + ["nobody"]), min_size=1, max_size=2))
    n = data.draw(st.integers(1, 12))
    emb = make_embedder("hashing")
    dbs = PgDatabases(pg_server)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            stores = [(Path(tmp) / "a.db", "fts5"), (Path(tmp) / "b.db", "sparse"), (dbs.new(), "fts5")]
            for (db, _), order in zip(stores, orders):
                _store(db, docs, order, emb)
            for mode in MODES:
                got = []
                for db, bm25 in stores:
                    names = key_to_chunk(db)
                    with Retriever(db, bm25=bm25) as r:
                        got.append([(names[k], round(s, 5)) for k, s in r.rank(query, groups, n, mode)])
                assert got[0] == got[1] == got[2], mode
    finally:
        dbs.drop()



def test_hnsw_candidates_hold_the_whole_tie_at_the_cut(pg_url, monkeypatch):
    """PostgreSQL through its HNSW index: 60 rows with one vector tie at the 3rd place, far past the
    over-fetch (n + 16): the store widens its request until the tie is whole, and the three smallest
    chunk ids win, whatever order the index returned them in."""
    from chunkwise.retrieve.server import dense_rank
    from chunkwise.store.postgres import postgres_read

    emb = make_embedder("hashing")
    docs = [("", [("rollback the deploy", [], ["runs"])]) for _ in range(60)]
    docs += [("", [(f"freeze window {i} owner pager", [], ["runs"])]) for i in range(20)]
    order = list(range(len(docs)))[::-1]
    _store(pg_url, docs, order, emb)
    calls = []
    real = postgres_read.PostgresReads._hnsw
    monkeypatch.setattr(postgres_read, "EXACT_ROWS", 0)  # the index path even for a small store
    monkeypatch.setattr(postgres_read.PostgresReads, "_hnsw",
                        lambda self, args, *rest: calls.append(args["n"]) or real(self, args, *rest))
    with open_store(pg_url, readonly=True) as store:
        assert store._hnsw_dim() == len(emb.embed(["x"])[0])
        ranked = dense_rank(store, emb.embed(["rollback deploy"])[0], ["runs"], 3)
        names = store.chunk_ids([k for k, _ in ranked])
    assert [names[k] for k, _ in ranked] == ["d0-0", "d1-0", "d10-0"] and len({s for _, s in ranked}) == 1
    assert len(calls) > 1 and calls[0] == 3 + postgres_read.HNSW_MARGIN  # widened past the first over-fetch
