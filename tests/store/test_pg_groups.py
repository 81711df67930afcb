"""A caller holding 1,000+ groups on PostgreSQL (issue 25 item 13): the filters use only the
caller's groups that tag some servable row (store/postgres/pg_groups.py), and the answers are exactly
those of a caller holding just those groups — as the owner and as an RLS reader."""
from __future__ import annotations

from chunkwise.retrieve import Retriever
from chunkwise.store import open_store
from chunkwise.store.postgres import pg_groups
from conftest import PgDatabases
from test_pg_bm25 import _write

MANY = [f"team{i:04d}" for i in range(1_200)]


def test_many_groups_are_narrowed_to_the_used_ones_and_answer_alike(pg_server):
    from chunkwise.cli.main import main
    from rls import drop_role, new_role, role_url

    dbs = PgDatabases(pg_server)
    owner = dbs.new()
    role = new_role(pg_server.get_uri())
    try:
        with open_store(owner) as store:
            _write(store, [(["team0007"], [("w1 w2", True), ("w2 w3", True)]),
                           (["team0500", "other"], [("w1 w9", True)]),
                           (["team0900"], [("w1", False)]),  # review only: its tag matches nothing
                           (["hidden"], [("w1 w2 w3", True)])])
        assert main(["pg-secure", "--db", owner, "--reader", role]) == 0
        for url in (owner, role_url(owner, role)):
            with open_store(url, readonly=True) as store:
                with store.as_caller(MANY):
                    assert store._narrow == ("team0007", "team0500")
                    assert pg_groups.narrowed(store.db, MANY[:3]) == MANY[:3]  # few groups: as given
                few = ["team0007", "team0500"]
                assert store.lexical_stats(MANY) == store.lexical_stats(few)
                assert store.lexical_df(["w1", "w2", "w3"], MANY) == {"w1": 2, "w2": 2, "w3": 1}
            with Retriever(url, embedder=None) as r:
                for q in ("w1", "w2 w3", "w9 w1"):
                    assert r.rank(q, MANY, 5, "bm25") == r.rank(q, few, 5, "bm25")
                    assert r.rank(q, MANY + ["hidden"], 5, "bm25") != r.rank(q, MANY, 5, "bm25") or q == "w9 w1"
    finally:
        dbs.drop()
        drop_role(pg_server.get_uri(), role)
