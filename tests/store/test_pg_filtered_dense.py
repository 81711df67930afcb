"""PostgreSQL dense search under the permission filter (issue 25 item 10): a caller's nearest
neighbours are those of exactly the rows it may see, so they do not change when other groups'
documents are added — even hidden rows packed around the query, which fill the HNSW walk ahead of
every permitted row. Checked as the owner and as a row-level-security reader, on the store's own
path (exact for so few permitted rows) and with the index path forced (``EXACT_ROWS`` lowered)."""
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from chunkwise.cli.main import main
from chunkwise.retrieve.server import dense_rank
from chunkwise.store import DocumentDiff, DocumentRow, open_store
from chunkwise.store.writing import write_decided
from conftest import PgDatabases
from rls import drop_role, new_role, role_url

DIM = 16
MINE = ["sre"]
K = 10


def _unit(v: np.ndarray) -> np.ndarray:
    return (v / np.linalg.norm(v, axis=-1, keepdims=True)).astype(np.float32)


def _write(db: str, prefix: str, vectors: np.ndarray, tags: list[str], per_doc: int = 20) -> None:
    """Documents of ``per_doc`` chunks, one chunk per row of ``vectors``, tagged ``tags``."""
    with open_store(db) as store:
        store.add_root("/r")
        with store.run("2026-01-01T00:00:00Z") as finish:
            for start in range(0, len(vectors), per_doc):
                doc = f"{prefix}{start // per_doc}"
                recs, vecs = [], {}
                for i, v in enumerate(vectors[start:start + per_doc]):
                    key = f"{doc}-{i}"
                    recs.append({"chunk_id": key, "doc_id": doc, "source_uri": doc, "chunk_index": i, "heading_path": [],
                                 "start_char": i, "end_char": i + 1, "page": None, "acl": tags, "embed_model": "test",
                                 "embed_key": key, "text": f"chunk {key}", "embed_text": f"chunk {key}", "size": 1,
                                 "title": doc, "quality": "ready", "reasons": []})
                    vecs[key] = [float(x) for x in v]
                write_decided(store, DocumentRow(doc, "/r", doc, doc, "v", "i", doc, "", "", "2026-01-01T00:00:00Z", len(recs)),
                                     lambda state, old, recs=recs, vecs=vecs: DocumentDiff(recs, (), (), vecs, "test"))
            finish("2026-01-01T00:01:00Z", {}, {"embedder": "test"})


def _ranked(url: str, query: np.ndarray, groups, owner: str) -> list[str]:
    """The chunk ids of ``dense_rank``'s top K through ``url`` (named through the owner's connection)."""
    with open_store(url, readonly=True) as store:
        ranked = dense_rank(store, query, groups, K)
    with open_store(owner, readonly=True) as store:
        names = store.chunk_ids([k for k, _ in ranked])
    return [names[k] for k, _ in ranked]


def _exact(mine: dict[str, np.ndarray], query: np.ndarray) -> list[str]:
    """The caller's top K by cosine over exactly its rows (ties: ascending chunk id)."""
    q = _unit(query)
    scored = sorted(mine, key=lambda name: (-float(mine[name] @ q), name))
    return scored[:K]




@pytest.fixture
def stores(pg_server):
    """(owner URL, reader URL) of one secured store; dropped with its reader role afterwards."""
    dbs = PgDatabases(pg_server)
    owner = dbs.new()
    role = new_role(pg_server.get_uri())
    try:
        yield owner, role_url(owner, role), role
    finally:
        dbs.drop()
        drop_role(pg_server.get_uri(), role)


@pytest.mark.parametrize("path", ["store's choice", "index forced"])
def test_a_callers_dense_results_ignore_hidden_rows(stores, monkeypatch, path):
    from chunkwise.store.postgres import postgres_read

    owner, reader, role = stores
    if path == "index forced":
        monkeypatch.setattr(postgres_read, "EXACT_ROWS", 0)
    rng = np.random.default_rng(25)
    own = _unit(rng.standard_normal((80, DIM)))
    _write(owner, "mine", own, MINE)
    _write(owner, "theirs", _unit(rng.standard_normal((40, DIM))), ["finance"])
    assert main(["pg-secure", "--db", owner, "--reader", role]) == 0
    mine = {f"mine{i // 20}-{i % 20}": v for i, v in enumerate(own)}
    queries = [_unit(rng.standard_normal(DIM)) for _ in range(6)] + [own[3] + 0.01, own[41] - 0.01]
    before = {}
    for qi, q in enumerate(queries):
        want = _exact(mine, q)
        for who, url in (("owner", owner), ("reader", reader)):
            before[qi, who] = _ranked(url, q, MINE, owner)
            assert before[qi, who] == want, (qi, who)
    # 50x as many hidden rows, most of them packed around the queries: an index walk (at most
    # MAX_EF_SEARCH rows) would hold no permitted row for the first three queries, few for the others
    crowd = np.concatenate([_unit(q + 0.03 * rng.standard_normal((1100 if qi < 3 else 150, DIM)))
                            for qi, q in enumerate(queries)] + [_unit(rng.standard_normal((350, DIM)))])
    _write(owner, "crowd", crowd, ["finance", "legal"], per_doc=50)
    for qi, q in enumerate(queries):
        for who, url in (("owner", owner), ("reader", reader)):
            assert _ranked(url, q, MINE, owner) == before[qi, who], (qi, who)
    # a caller of both groups sees the crowd: its results did change (the hidden rows were in reach)
    assert any(_ranked(owner, q, ["sre", "finance"], owner)[0].startswith("crowd") for q in queries)


def test_a_short_walk_is_widened_before_the_exact_scan(stores, monkeypatch):
    """A caller of 3/7 of the rows (``ef_search`` 8 x 40 x 7/3 = 747) whose query sits in 800 hidden
    rows: the first walk holds none of its rows, so the index is walked again wider (up to
    ``MAX_EF_SEARCH``) rather than every permitted row being scanned; the results are still exactly
    the caller's own nearest, as owner and as reader."""
    from chunkwise.store.postgres import postgres_read

    owner, reader, role = stores
    monkeypatch.setattr(postgres_read, "EXACT_ROWS", 0)
    rng = np.random.default_rng(10)
    own = _unit(rng.standard_normal((600, DIM)))
    query = _unit(rng.standard_normal(DIM))
    _write(owner, "mine", own, MINE, per_doc=50)
    _write(owner, "crowd", _unit(query + 0.02 * rng.standard_normal((800, DIM))), ["finance"], per_doc=50)
    assert main(["pg-secure", "--db", owner, "--reader", role]) == 0
    mine = {f"mine{i // 50}-{i % 50}": v for i, v in enumerate(own)}
    asked = max(K + postgres_read.HNSW_MARGIN, postgres_read.WALK_FILL * K)
    first = math.ceil(postgres_read.EF_PER_NEIGHBOUR * asked * 1400 / 600)
    assert first < postgres_read.MAX_EF_SEARCH
    walks, served = [], []
    real_walk, real_ties = postgres_read.PostgresReads._hnsw, postgres_read.PostgresReads._hnsw_whole_ties
    monkeypatch.setattr(postgres_read.PostgresReads, "_hnsw",
                        lambda self, args, dim, n, ef: walks.append(ef) or real_walk(self, args, dim, n, ef))
    monkeypatch.setattr(postgres_read.PostgresReads, "_hnsw_whole_ties",
                        lambda self, *a: (lambda rows: served.append(rows is not None) or rows)(real_ties(self, *a)))
    for url in (owner, reader):
        walks.clear()
        assert _ranked(url, query, MINE, owner) == _exact(mine, query)
        assert walks == [first, postgres_read.MAX_EF_SEARCH], walks  # short at first, widened, enough at 1000
    assert served == [True, True]  # the index's rows were served: no exact scan


def test_a_walk_holding_only_a_few_permitted_rows_is_not_served(stores, monkeypatch):
    """The widest walk (1,000 rows) holds 30 of the caller's rows: more than the 10 it wants and
    the 26 of n + HNSW_MARGIN, but fewer than the 40 asked for (WALK_FILL x n), so its 10th
    lies past the walk's first quarter, where the index's order is unreliable: the exact scan
    answers instead, as owner and as reader."""
    from chunkwise.store.postgres import postgres_read

    owner, reader, role = stores
    monkeypatch.setattr(postgres_read, "EXACT_ROWS", 0)
    rng = np.random.default_rng(11)
    query = _unit(rng.standard_normal(DIM))
    near = _unit(query + 0.05 * rng.standard_normal((30, DIM)))
    far = _unit(-query + 0.1 * rng.standard_normal((200, DIM)))
    _write(owner, "mine", np.concatenate([near, far]), MINE, per_doc=46)
    _write(owner, "crowd", _unit(query + 0.15 * rng.standard_normal((1200, DIM))), ["finance"], per_doc=50)
    assert main(["pg-secure", "--db", owner, "--reader", role]) == 0
    mine = {f"mine{i // 46}-{i % 46}": v for i, v in enumerate(np.concatenate([near, far]))}
    walks, served = [], []
    real_walk, real_ties = postgres_read.PostgresReads._hnsw, postgres_read.PostgresReads._hnsw_whole_ties
    monkeypatch.setattr(postgres_read.PostgresReads, "_hnsw", lambda self, args, dim, n, ef: (
        lambda rows: walks.append((ef, len(rows))) or rows)(real_walk(self, args, dim, n, ef)))
    monkeypatch.setattr(postgres_read.PostgresReads, "_hnsw_whole_ties",
                        lambda self, *a: (lambda rows: served.append(rows is not None) or rows)(real_ties(self, *a)))
    for url in (owner, reader):
        walks.clear()
        assert _ranked(url, query, MINE, owner) == _exact(mine, query)
        assert walks == [(postgres_read.MAX_EF_SEARCH, 30)], walks
    assert served == [False, False]


def test_no_walk_when_the_widest_cannot_hold_enough_permitted_rows(stores, monkeypatch):
    """A caller of 80 of 2,080 rows: the widest walk (1,000) would hold about 38 of them, fewer than
    the 40 a walk must hold to be served, so the index is not walked at all: the exact scan
    answers at once (before, a wasted walk came first)."""
    from chunkwise.store.postgres import postgres_read

    owner, reader, role = stores
    monkeypatch.setattr(postgres_read, "EXACT_ROWS", 0)
    rng = np.random.default_rng(12)
    own = _unit(rng.standard_normal((80, DIM)))
    _write(owner, "mine", own, MINE)
    _write(owner, "theirs", _unit(rng.standard_normal((2000, DIM))), ["finance"], per_doc=50)
    assert main(["pg-secure", "--db", owner, "--reader", role]) == 0
    mine = {f"mine{i // 20}-{i % 20}": v for i, v in enumerate(own)}
    walks = []
    real_walk = postgres_read.PostgresReads._hnsw
    monkeypatch.setattr(postgres_read.PostgresReads, "_hnsw",
                        lambda self, args, dim, n, ef: walks.append(ef) or real_walk(self, args, dim, n, ef))
    query = _unit(rng.standard_normal(DIM))
    for url in (owner, reader):
        assert _ranked(url, query, MINE, owner) == _exact(mine, query)
    assert walks == []
    assert _ranked(owner, query, ["sre", "finance"], owner) and walks  # a caller of every row walks the index



@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                  HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1), own=st.integers(40, 160), crowd=st.integers(0, 24),
       spread=st.sampled_from([0.005, 0.05, 0.3, 2.0]), k=st.integers(1, 15), forced=st.booleans())
def test_property_hidden_rows_never_change_a_callers_nearest(pg_server, monkeypatch, seed, own, crowd, spread, k,
                                                             forced):
    """Whatever the caller's rows and however many hidden rows are added (up to 24x its own, so
    the index is still walked for it: the widest walk may hold 40 of its rows), packed around its
    query (``spread`` small: the walk's head is all hidden rows) or anywhere: its top k, as owner
    and as reader, on the store's own path and with the index forced, is exactly the top k of its
    own rows, before and after."""
    from chunkwise.store.postgres import postgres_read

    monkeypatch.setattr(postgres_read, "EXACT_ROWS", 0 if forced else postgres_read.EXACT_ROWS)
    dbs = PgDatabases(pg_server)
    owner = dbs.new()
    role = new_role(pg_server.get_uri())
    try:
        rng = np.random.default_rng(seed)
        mine_v = _unit(rng.standard_normal((own, DIM)))
        _write(owner, "mine", mine_v, MINE)
        assert main(["pg-secure", "--db", owner, "--reader", role]) == 0
        mine = {f"mine{i // 20}-{i % 20}": v for i, v in enumerate(mine_v)}
        queries = [_unit(rng.standard_normal(DIM)), mine_v[0]]
        want = [sorted(mine, key=lambda name: (-float(mine[name] @ _unit(q)), name))[:k] for q in queries]

        def ranked(url):
            with open_store(url, readonly=True) as store:
                got = [[key for key, _ in dense_rank(store, q, MINE, k)] for q in queries]
            with open_store(owner, readonly=True) as store:
                return [[store.chunk_ids([key])[key] for key in keys] for keys in got]

        assert ranked(owner) == want and ranked(role_url(owner, role)) == want
        if crowd:
            hidden = _unit(np.repeat(queries[:1], crowd * own, axis=0)
                           + spread * rng.standard_normal((crowd * own, DIM)))
            _write(owner, "crowd", hidden, ["finance"], per_doc=100)
        assert ranked(owner) == want and ranked(role_url(owner, role)) == want
    finally:
        dbs.drop()
        drop_role(pg_server.get_uri(), role)
