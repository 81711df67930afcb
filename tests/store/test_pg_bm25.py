"""PostgreSQL BM25 over postings with per-tag-set statistics (store/postgres/pg_bm25.py, migration 9), on the
session's real server: the postings and statistics the triggers keep are those of the rows (after
inserts, updates and deletes, and after the migration from schema 8 fills them); MaxScore's pruned
top k gives the SQLite ranker's ids and scores (random corpora with common and rare words, random
callers, budgets that force pruning and re-runs); an RLS reader gets the owner's answers."""
from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from chunkwise.lexical import FIELDS
from chunkwise.retrieve import Retriever
from chunkwise.store import DocumentDiff, DocumentRow, open_store
from chunkwise.store.writing import write_decided
from chunkwise.store.postgres import pg_bm25
from conftest import PgDatabases

VOCAB = [f"w{i}" for i in range(40)]
TAGS = ["red", "green", "blue", "grey"]


def skewed(x: int) -> str:
    """Word ``w0`` in most chunks, ``w39`` in few: the common and rare terms MaxScore tells apart."""
    return VOCAB[int(x ** 0.5)]


texts = st.lists(st.integers(0, len(VOCAB) ** 2 - 1).map(skewed), min_size=1, max_size=14).map(" ".join)
corpora = st.lists(st.tuples(st.lists(st.sampled_from(TAGS), min_size=1, max_size=2, unique=True),
                             st.lists(st.tuples(texts, st.booleans()), min_size=1, max_size=8)),
                   min_size=2, max_size=12)


def _record(doc, i, text, acl, ready=True):
    return {"chunk_id": f"{doc}-{i}", "doc_id": doc, "source_uri": doc, "chunk_index": i, "heading_path": [f"h{i % 3}"],
            "start_char": i, "end_char": i + 1, "page": None, "acl": list(acl), "embed_model": "none",
            "embed_key": f"{doc}-{i}", "text": text, "embed_text": text, "size": 1, "title": doc,
            "quality": "ready" if ready else "review", "reasons": [] if ready else ["x"]}


def _write(store, docs) -> None:
    store.add_root("/r")
    for d, (acl, chunks) in enumerate(docs):
        recs = [_record(f"d{d}", i, text, acl, ready) for i, (text, ready) in enumerate(chunks)]

        def decide(state, old, recs=recs):
            new = {r["chunk_id"] for r in recs}
            return DocumentDiff([r for r in recs if r["chunk_id"] not in old], [r for r in recs if r["chunk_id"] in old],
                                [c for c in old if c not in new], {}, "none")

        write_decided(store, DocumentRow(f"d{d}", "/r", f"d{d}", f"d{d}", "v", "i", f"d{d}", "", "",
                                         "2026-01-01T00:00:00Z", len(recs)), decide)


def _model(url: str) -> tuple[set, dict]:
    """(postings, term_df) as the rows say they must be: every term of every servable row, and per
    (term, tag set) its rows, largest counts and shortest body (independent of the triggers)."""
    import psycopg

    with psycopg.connect(url) as con:
        sets = {tuple(a): i for i, a in con.execute("SELECT id, acl FROM acl_sets")}
        postings, df = set(), {}
        for key, acl, tf, length in con.execute("SELECT key, acl, lex_tf, lex_len FROM chunks WHERE servable"):
            for lx, counts in tf.items():
                counts = tuple(counts) + (0,) * (len(FIELDS) - len(counts))
                postings.add((lx, sets[tuple(acl)], key, length, *counts))
                n, m, short = df.get((lx, sets[tuple(acl)]), (0, (0,) * len(FIELDS), length))
                df[(lx, sets[tuple(acl)])] = (n + 1, tuple(map(max, m, counts)), min(short, length))
        got_postings = set(con.execute("SELECT lexeme, set_id, key, len, f0, f1, f2 FROM postings").fetchall())
        got_df = {(lx, s): (n, (a, b, c), short) for lx, s, n, a, b, c, short in con.execute(
            "SELECT lexeme, set_id, sum(df), max(m0), max(m1), max(m2), min(min_len) FROM term_df GROUP BY 1, 2"
            " HAVING sum(df) > 0")}  # a row per writer slot (pg_slots): their sums and bounds
    return (postings, df), (got_postings, got_df)


def _df_holds(expected: dict, got: dict) -> bool:
    """Counts exact; bounds at least the rows' (a delete leaves a stale, larger bound: still a bound)."""
    return expected.keys() == got.keys() and all(
        got[k][0] == n and all(g >= w for g, w in zip(got[k][1], m)) and got[k][2] <= s for k, (n, m, s) in expected.items())


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_pruned_postgres_bm25_ranks_like_sqlite(pg_server, data):
    """The same top k (ids in order, scores) as SQLite's ranker on the same random data and callers,
    whatever the budget (1 forces MaxScore to prune and re-run, a large one scores exhaustively) and
    however the other terms are added to the candidates (index probes, joins over their postings)."""
    docs = data.draw(corpora)
    queries = data.draw(st.lists(st.lists(st.sampled_from(VOCAB), min_size=1, max_size=6).map(" ".join),
                                 min_size=3, max_size=3))
    callers = data.draw(st.lists(st.lists(st.sampled_from(TAGS + ["nobody"]), min_size=1, max_size=3, unique=True),
                                 min_size=2, max_size=2))
    budget = data.draw(st.sampled_from([1, 4, 30, 10_000]))
    probe_cost = data.draw(st.sampled_from([0, 4, 1_000_000]))  # completion by probes only, either, joins only
    k = data.draw(st.integers(1, 8))
    dbs, saved, saved_cost = PgDatabases(pg_server), pg_bm25.BUDGET, pg_bm25.PROBE_COST
    try:
        with tempfile.TemporaryDirectory() as tmp:
            urls = (Path(tmp) / "s.db", dbs.new())
            for url in urls:
                with open_store(url) as store:
                    _write(store, docs)
            pg_bm25.BUDGET, pg_bm25.PROBE_COST = budget, probe_cost
            with Retriever(urls[0], embedder=None) as a, Retriever(urls[1], embedder=None) as b:
                assert b.native
                for q in queries:
                    for groups in callers:
                        got = []
                        for r in (a, b):
                            ranked = r.rank(q, groups, k, "bm25")
                            rows = {c.key: c for c in r.store.chunks(keys=[key for key, _ in ranked])}
                            got.append(([rows[key].record["chunk_id"] for key, _ in ranked], [s for _, s in ranked]))
                        assert got[0][0] == got[1][0], (q, groups, k, budget, probe_cost)
                        assert got[1][1] == pytest.approx(got[0][1], rel=1e-6, abs=1e-9)
            expected, stored = _model(str(urls[1]))
            assert expected[0] == stored[0] and _df_holds(expected[1], stored[1])
    finally:
        pg_bm25.BUDGET, pg_bm25.PROBE_COST = saved, saved_cost
        dbs.drop()


def test_maxscore_reads_fewer_rows_and_finds_the_exhaustive_top(pg_url):
    """One rare term and one in every row: with a small budget only the rare term's rows are
    scored (matched counts them, not every row), and the candidates are the exhaustive top's."""
    docs = [(["red"], [(f"w0 w0 filler{i}" + (" w39" if i % 10 == 0 else ""), True) for i in range(40)])]
    with open_store(pg_url) as store:
        _write(store, docs)
        rows, avgdl = store.lexical_stats(["red"])
        from chunkwise.lexical import idf

        df = store.lexical_df(["w0", "w39"], ["red"])
        assert df == {"w0": 40, "w39": 4}
        args = (["w39", "w0"], [float(idf(rows, df["w39"])), float(idf(rows, df["w0"]))], ["red"], avgdl, 2, 1.2, 0.75)
        saved = pg_bm25.BUDGET
        try:
            pg_bm25.BUDGET = 4
            pruned = store.lexical_top(*args)
            pg_bm25.BUDGET = 10_000
            full = store.lexical_top(*args)
        finally:
            pg_bm25.BUDGET = saved
    assert pruned[0] == 4 and full[0] == 40  # only the rare term's rows were scored
    assert pruned[1] == {k: v for k, v in full[1].items() if k in pruned[1]} and set(pruned[1]) <= set(full[1])
    assert len(pruned[1]) == 4  # the four tied best rows, each with both terms' counts


def test_triggers_follow_updates_deletes_and_review(pg_url):
    """Postings and statistics after re-writes, removals and a chunk going to review."""
    with open_store(pg_url) as store:
        _write(store, [(["red"], [("w1 w2", True), ("w2 w3 w3", True)]), (["red", "blue"], [("w1", True)])])
        recs = [_record("d0", 0, "w5 w2", ["blue"]), _record("d0", 1, "w3", ["red"], ready=False)]
        write_decided(store, DocumentRow("d0", "/r", "d0", "d0", "v2", "i", "d0", "", "", "2026-01-01T00:00:00Z", 2),
                             lambda state, old: DocumentDiff((), recs, (), {}, "none"))
        write_decided(store, DocumentRow("d1", "/r", "d1", "d1", "v2", "i", "d1", "", "", "2026-01-01T00:00:00Z", 0),
                             lambda state, old: DocumentDiff((), (), list(old), {}, "none"))
        assert store.lexical_df(["w1", "w2", "w3", "w5"], ["red"]) == {"w1": 0, "w2": 0, "w3": 0, "w5": 0}
        assert store.lexical_df(["w1", "w2", "w3", "w5"], ["blue"]) == {"w1": 0, "w2": 1, "w3": 0, "w5": 1}
    expected, stored = _model(pg_url)
    assert expected[0] == stored[0] and _df_holds(expected[1], stored[1])


def test_a_schema_8_store_gets_postings_from_its_rows(pg_url, monkeypatch):
    """Migration 9 on a store written at schema 8 (no postings, no triggers): the postings and
    statistics of every servable row, and then searches and writes use them."""
    from chunkwise.store.postgres import pg_schema, postgres

    docs = [(["red"], [("w1 w2 w2", True), ("w3", False)]), (["blue", "red"], [("w2 w4", True)]), (["grey"], [("w1", True)])]
    monkeypatch.setattr(postgres, "MIGRATIONS", pg_schema.MIGRATIONS[:8])
    monkeypatch.setattr(postgres, "LATEST", 8)
    with open_store(pg_url) as store:
        _write(store, docs)
        assert store.db.execute("SELECT to_regclass('postings')").fetchone()[0] is None
    monkeypatch.undo()
    with open_store(pg_url) as store:
        assert max(n for (n,) in store.db.execute("SELECT number FROM migrations")) == pg_schema.LATEST
        assert store.lexical_df(["w1", "w2", "w3", "w4"], ["red"]) == {"w1": 1, "w2": 2, "w3": 0, "w4": 1}
        assert store.lexical_df(["w1"], ["grey", "blue"]) == {"w1": 1}
        _write(store, [(["grey"], [("w4 w4", True)])] * 2)  # d0, d1 rewritten by the triggers' path
    expected, stored = _model(pg_url)
    assert expected[0] == stored[0] and _df_holds(expected[1], stored[1]) and stored[0]


def test_a_reader_under_row_level_security_gets_the_owners_top(pg_server, tmp_path):
    """The pruned top k, the document frequencies and the tag sets, read through the policies by a
    ``pg-secure`` reader, are the owner's; the reader's raw SELECT shows only its tag sets."""
    from chunkwise.cli.main import main
    from chunkwise.lexical import idf
    from rls import as_reader, drop_role, groups_json, new_role, role_url

    dbs = PgDatabases(pg_server)
    owner = dbs.new()
    role = new_role(pg_server.get_uri())
    saved = pg_bm25.BUDGET
    try:
        with open_store(owner) as store:
            _write(store, [(["red"], [(f"w0 w{i % 7} w{i % 13}", True) for i in range(30)]),
                           (["blue"], [(f"w0 w{i % 5} w39", True) for i in range(30)]),
                           (["red", "grey"], [(f"w1 w{i % 11}", True) for i in range(20)])])
        assert main(["pg-secure", "--db", owner, "--reader", role]) == 0
        pg_bm25.BUDGET = 3
        with open_store(owner, readonly=True) as a, open_store(role_url(owner, role), readonly=True) as b:
            assert b.filtered_reads
            for groups in (["red"], ["blue"], ["grey"], ["red", "blue"], ["nobody"]):
                terms = ["w0", "w1", "w3", "w39", "w6"]
                assert a.lexical_df(terms, groups) == b.lexical_df(terms, groups)
                rows, avgdl = a.lexical_stats(groups)
                df = a.lexical_df(terms, groups)
                top = (terms, [float(idf(max(rows, 1), df[t])) for t in terms], groups, avgdl, 3, 1.2, 0.75)
                assert a.lexical_top(*top) == b.lexical_top(*top)
        seen = {tuple(r[0]) for r in as_reader(role_url(owner, role), "SELECT acl FROM acl_sets", groups_json(["grey"]))}
        assert seen == {("grey", "red")}
    finally:
        pg_bm25.BUDGET = saved
        dbs.drop()
        drop_role(pg_server.get_uri(), role)
