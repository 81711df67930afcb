"""The ``dense`` table of the PostgreSQL store (store/postgres/pg_dense.py, migration 10): one row per
servable chunk with a vector, holding the chunk's tags and vector, kept by triggers whatever writes
(added, re-tagged, made unservable, removed chunks; a vector replaced, written after its chunks,
shared by chunks of different tags, dropped). Compared after every step with what the raw
``chunks`` and ``vectors`` rows say, computed here in Python. A store written at schema 9 (before
the table) gets it filled by the migration, secured readers included."""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from chunkwise.cli.main import main
from chunkwise.store import DocumentDiff, DocumentRow, open_store
from chunkwise.store.writing import write_decided
from conftest import PgDatabases
from rls import as_reader, drop_role, groups_json, new_role, role_url

DIM = 8
TAGSETS = (["sre"], ["finance"], ["sre", "finance"], ["legal"])


def _record(doc: str, i: int, tags, quality: str = "ready", embed_key: str | None = None) -> dict:
    key = embed_key or f"{doc}-{i}"
    return {"chunk_id": f"{doc}-{i}", "doc_id": doc, "source_uri": doc, "chunk_index": i, "heading_path": [],
            "start_char": i, "end_char": i + 1, "page": None, "acl": list(tags), "embed_model": "test",
            "embed_key": key, "text": f"chunk {doc} {i}", "embed_text": f"chunk {key}", "size": 1, "title": doc,
            "quality": quality, "reasons": [] if quality == "ready" else ["short"]}


def _put(store, doc: str, records: list[dict], vectors: dict) -> None:
    """Replace document ``doc`` with ``records`` (the store's one write path: write_document)."""
    def diff(state, old):
        old = old or {}
        ids = {r["chunk_id"] for r in records}
        added = [r for r in records if r["chunk_id"] not in old]
        updated = [r for r in records if r["chunk_id"] in old]
        return DocumentDiff(added, updated, tuple(c for c in old if c not in ids), vectors, "test")
    write_decided(store, DocumentRow(doc, "/r", doc, doc, "v", "i", doc, "", "", "2026-01-01T00:00:00Z",
                                     len(records)), diff)


def _truth(url: str) -> set:
    """(key, embed key, tags, vector as text) of every servable chunk with a vector, from the raw rows."""
    import psycopg

    with psycopg.connect(url) as con:
        chunks = con.execute("SELECT key, embed_key, acl, servable FROM chunks").fetchall()
        vectors = dict(con.execute("SELECT embed_key, vector::text FROM vectors").fetchall())
    return {(k, e, tuple(a), vectors[e]) for k, e, a, ok in chunks if ok and e in vectors}


def _dense(url: str) -> set:
    import psycopg

    with psycopg.connect(url) as con:
        return {(k, e, tuple(a), v) for k, e, a, v in con.execute(
            "SELECT d.key, c.embed_key, d.acl, d.vector::text FROM dense d JOIN chunks c ON c.key = d.key")}


def _vec(rng) -> list[float]:
    return [float(x) for x in rng.standard_normal(DIM)]


def test_dense_follows_every_kind_of_write(pg_url):
    rng = np.random.default_rng(3)
    with open_store(pg_url) as store:
        store.add_root("/r")
        _put(store, "a", [_record("a", i, ["sre"]) for i in range(4)], {f"a-{i}": _vec(rng) for i in range(4)})
        assert len(_dense(pg_url)) == 4 and _dense(pg_url) == _truth(pg_url)
        # re-tagged, one made unservable, one removed, one sharing another document's vector
        records = [_record("a", 0, ["finance"]), _record("a", 1, ["sre"], quality="review"), _record("a", 2, ["sre"])]
        _put(store, "a", records, {})
        _put(store, "b", [_record("b", 0, ["legal"], embed_key="a-2"), _record("b", 1, ["sre"])], {})
        assert _dense(pg_url) == _truth(pg_url)
        assert {r[1] for r in _dense(pg_url)} == {"a-0", "a-2"}  # b-1's vector is not written yet
        store.put_vectors("test", [("b-1", _vec(rng)), ("a-2", _vec(rng))])  # a new one, and one replaced
        assert _dense(pg_url) == _truth(pg_url) and len(_dense(pg_url)) == 4
        shared = [r for r in _dense(pg_url) if r[1] == "a-2"]
        assert len(shared) == 2 and {r[2] for r in shared} == {("sre",), ("legal",)}  # each chunk's own tags
        _put(store, "a", [_record("a", 1, ["sre"])], {})  # review -> ready again; a-0, a-2 removed
        assert _dense(pg_url) == _truth(pg_url)
        with store.atomic():
            store.db.execute("DELETE FROM vectors WHERE embed_key = 'a-1'")
        assert _dense(pg_url) == _truth(pg_url) and "a-1" not in {r[1] for r in _dense(pg_url)}
        with store.atomic():
            store._delete_document("b")
        assert _dense(pg_url) == _truth(pg_url) == set()
        from chunkwise.store.postgres.pg_dense import DRIFT_SQL
        assert store.db.execute(DRIFT_SQL).fetchone()[0] == 0


_step = st.tuples(st.sampled_from("abc"), st.lists(st.tuples(st.integers(0, 5), st.integers(0, 3),
                                                             st.booleans(), st.integers(0, 6)), max_size=6))


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                  HealthCheck.too_slow])
@given(steps=st.lists(_step, min_size=1, max_size=6), seed=st.integers(0, 2**16))
def test_property_dense_equals_the_servable_chunks_with_vectors(pg_server, steps, seed):
    """Any sequence of document writes (chunks added, re-tagged, made review or ready, removed;
    embed keys shared across documents; vectors written with the chunks, later, or replaced):
    ``dense`` holds exactly each servable chunk with a vector, with the chunk's tags."""
    rng = np.random.default_rng(seed)
    dbs = PgDatabases(pg_server)
    url = dbs.new()
    try:
        with open_store(url) as store:
            store.add_root("/r")
            for doc, chunks in steps:
                records = {}
                for i, tagset, ready, key in chunks:
                    records[i] = _record(doc, i, TAGSETS[tagset], "ready" if ready else "review", embed_key=f"k{key}")
                keys = sorted({r["embed_key"] for r in records.values()})
                vectors = {k: _vec(rng) for k in keys if rng.random() < 0.6}
                _put(store, doc, list(records.values()), vectors)
                if rng.random() < 0.3:
                    store.put_vectors("test", [(f"k{int(rng.integers(0, 7))}", _vec(rng))])
                assert _dense(url) == _truth(url)
    finally:
        dbs.drop()


def test_a_schema_9_store_gets_dense_filled_and_the_reader_sees_only_its_rows(pg_server, monkeypatch):
    """Written and secured at schema 9 (this chunkwise with migration 10 withheld), then opened by
    this chunkwise: migration 10 fills ``dense`` from the stored rows; the reader's SELECT of it
    shows only its permitted chunks' rows, and a search gives the owner's results."""
    from chunkwise.retrieve.server import dense_rank
    from chunkwise.store.postgres import pg_schema, pg_security, postgres

    dbs = PgDatabases(pg_server)
    owner = dbs.new()
    role = new_role(pg_server.get_uri())
    rng = np.random.default_rng(9)
    try:
        with monkeypatch.context() as m:
            m.setattr(postgres, "MIGRATIONS", pg_schema.MIGRATIONS[:9])
            m.setattr(postgres, "LATEST", 9)
            m.setattr(pg_security, "POLICIES", {t: p for t, p in pg_security.POLICIES.items() if t != "dense"})
            m.setattr(pg_security, "SECURED", tuple(t for t in pg_security.SECURED if t != "dense"))
            m.setattr(pg_security, "STORE_TABLES", tuple(t for t in pg_security.STORE_TABLES if t != "dense"))
            with open_store(owner) as store:
                store.add_root("/r")
                for d, tags in enumerate(TAGSETS):
                    _put(store, f"d{d}", [_record(f"d{d}", i, tags) for i in range(5)] + [_record(f"d{d}", 5, tags, "review")],
                         {f"d{d}-{i}": _vec(rng) for i in range(6)})
                assert "dense" not in store._tables()
            assert main(["pg-secure", "--db", owner, "--reader", role]) == 0
        reader = role_url(owner, role)
        with open_store(owner) as store:  # the owner's open migrates
            assert store.db.execute("SELECT max(number) FROM migrations").fetchone()[0] == pg_schema.LATEST
        truth = _truth(owner)
        assert _dense(owner) == truth and len(truth) == 20
        keys = {r[0]: set(r[2]) for r in truth}
        for groups in (["sre"], ["legal"], ["finance", "legal"], ["nobody"]):
            seen = {k for (k,) in as_reader(reader, "SELECT key FROM dense", groups_json(groups))}
            assert seen == {k for k, tags in keys.items() if tags & set(groups)}, groups
        assert as_reader(reader, "SELECT key FROM dense") == []  # no groups set: nothing
        query = np.asarray(_vec(rng), np.float32)
        with open_store(owner, readonly=True) as a, open_store(reader, readonly=True) as b:
            assert dense_rank(a, query, ["sre"], 4) == dense_rank(b, query, ["sre"], 4)
            assert len(dense_rank(a, query, ["sre"], 4)) == 4
    finally:
        dbs.drop()
        drop_role(pg_server.get_uri(), role)


@pytest.mark.parametrize("who", ["owner", "reader"])
def test_the_exact_scan_reads_dense_and_never_chunks_per_permitted_row(pg_server, who):
    """The exact path's plan: the caller's rows come from ``dense`` (its tag index) and ``chunks`` is
    read only for the rows inside the cut — never scanned or joined per permitted row."""
    from chunkwise.store.postgres import pg_dense, postgres_read

    dbs = PgDatabases(pg_server)
    owner = dbs.new()
    role = new_role(pg_server.get_uri())
    rng = np.random.default_rng(4)
    try:
        with open_store(owner) as store:
            store.add_root("/r")
            for d in range(40):
                _put(store, f"d{d}", [_record(f"d{d}", i, TAGSETS[d % 4]) for i in range(10)],
                     {f"d{d}-{i}": _vec(rng) for i in range(10)})
        assert main(["pg-secure", "--db", owner, "--reader", role]) == 0
        url = owner if who == "owner" else role_url(owner, role)
        query = np.asarray(_vec(rng), np.float32)
        with open_store(url, readonly=True) as store:
            with store.as_caller(["sre"]):
                plan = "\n".join(r[0] for r in store.db.execute(
                    "EXPLAIN (ANALYZE, COSTS OFF) " + pg_dense.EXACT.format(
                        dense=postgres_read._DENSE_PERMITTED, permitted=postgres_read._PERMITTED),
                    {"groups": ["sre"], "q": query, "n": 5, "last": 4, "slack": 1e-5}).fetchall())
        scans = [line for line in plan.splitlines() if " on chunks" in line]
        assert scans and all("Index Scan using chunks_pkey" in line for line in scans), plan
        read = sum(int(line.split("rows=")[-1].split()[0]) * int(line.split("loops=")[-1].rstrip(")").split()[0])
                   for line in scans if "actual" in line)
        assert read <= 10, plan  # the few rows inside the cut (5 and their ties), not the ~100 permitted
    finally:
        dbs.drop()
        drop_role(pg_server.get_uri(), role)


def test_check_reports_dense_rows_out_of_step(pg_url):
    """``chunkwise check`` fails a store whose ``dense`` rows disagree with its chunks and vectors
    (a row missing, one with other tags, one of no chunk), and passes it once they agree again."""
    import psycopg

    from chunkwise.quality import check

    rng = np.random.default_rng(3)
    with open_store(pg_url) as store:
        _put(store, "a", [_record("a", i, TAGSETS[i % 2]) for i in range(3)],
             {f"a-{i}": _vec(rng) for i in range(3)})
    assert check(pg_url).stale_search_rows == 0
    with psycopg.connect(pg_url, autocommit=True) as con:
        con.execute("ALTER TABLE dense DISABLE TRIGGER USER")  # tamper as a stray hand would, no trigger in the way
        key = con.execute("SELECT min(key) FROM dense").fetchone()[0]
        con.execute("DELETE FROM dense WHERE key = %s", (key,))
        con.execute("UPDATE dense SET acl = ARRAY['legal'] WHERE key = (SELECT max(key) FROM dense)")
    report = check(pg_url)
    assert report.stale_search_rows == 2 and not report.ok
    assert any("search rows out of step" in f for f in report.failures)
    with psycopg.connect(pg_url, autocommit=True) as con:
        con.execute("DELETE FROM dense")
        con.execute("INSERT INTO dense SELECT c.key, c.acl, v.vector FROM chunks c JOIN vectors v"
                    " ON v.embed_key = c.embed_key WHERE c.servable")
    assert check(pg_url).stale_search_rows == 0


# Each breaks one chunk's ``dense`` row as a stray hand with the triggers off would (``%(k)s``: its key).
TAMPERING = {
    "row missing": "DELETE FROM dense WHERE key = %(k)s",
    "row with other tags": "UPDATE dense SET acl = ARRAY['legal'] WHERE key = %(k)s",
    "row with another vector": "UPDATE dense SET vector = vector + vector WHERE key = %(k)s",
    "chunk no longer servable": "UPDATE chunks SET servable = false WHERE key = %(k)s",
    "vector dropped": "DELETE FROM vectors WHERE embed_key = (SELECT embed_key FROM chunks WHERE key = %(k)s)",
    "vector replaced": "UPDATE vectors SET vector = vector + vector"
                       " WHERE embed_key = (SELECT embed_key FROM chunks WHERE key = %(k)s)",
}


def _stale(url: str) -> int:
    """What ``STALE_SQL`` must count, from the raw rows: each servable chunk with a vector whose row
    is missing or differs, and each row of no such chunk."""
    import psycopg

    with psycopg.connect(url) as con:
        rows = {k: (tuple(a), v) for k, a, v in con.execute("SELECT key, acl, vector::text FROM dense")}
    truth = {k: (a, v) for k, _, a, v in _truth(url)}
    return sum(rows.get(k) != row for k, row in truth.items()) + sum(k not in truth for k in rows)


@pytest.mark.parametrize("kinds", [[kind] for kind in TAMPERING] + [list(TAMPERING)], ids=lambda k: "+".join(k))
def test_the_stale_count_is_one_per_chunk_out_of_step(pg_url, kinds):
    """``chunkwise check``'s count (``STALE_SQL``) against the raw rows, for each way a row can fall
    out of step and for all of them at once (each on its own chunk)."""
    import psycopg

    from chunkwise.quality import check
    from chunkwise.store.postgres.pg_dense import STALE_SQL

    rng = np.random.default_rng(5)
    with open_store(pg_url) as store:
        for doc in ("a", "b"):
            _put(store, doc, [_record(doc, i, TAGSETS[i % 3]) for i in range(4)],
                 {f"{doc}-{i}": _vec(rng) for i in range(4)})
    with psycopg.connect(pg_url, autocommit=True) as con:
        keys = [k for (k,) in con.execute("SELECT key FROM dense ORDER BY key")]
        for table in ("dense", "chunks", "vectors"):
            con.execute(f"ALTER TABLE {table} DISABLE TRIGGER USER")
        for kind, key in zip(kinds, keys):
            con.execute(TAMPERING[kind], {"k": key})
        assert _stale(pg_url) == len(kinds)
        assert con.execute(STALE_SQL).fetchone()[0] == len(kinds)
    assert check(pg_url).stale_search_rows == len(kinds)
