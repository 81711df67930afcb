"""Who ``chunkwise pg-secure`` counts as a reader, what it grants and revokes, and how the store
treats roles an administrator set up by hand (review of the row-level security change): a plain
SELECT role searches an unsecured store exactly as the owner does; on a secured store it is told
in one line to become a reader, is listed apart from the readers and keeps ``--off`` refused;
pg-secure changes privileges on the store's own tables only; a member of a superuser or
BYPASSRLS role is refused; a reader's tie order is read as the caller."""
import psycopg
import pytest
from psycopg import sql

from chunkwise import api
from chunkwise.cli.main import main
from chunkwise.errors import StoreError
from chunkwise.retrieve import Retriever
from rls import build, drop_role, new_role, role_url

QUERIES = [("salary budget", ["hr"]), ("rollback deploy", ["hr managers", "staff"]), ("leave policy", ["財務"])]
MODES = ("bm25", "dense", "hybrid", "auto")


def _grant_select_by_hand(url: str, role: str) -> None:
    """What a DBA does without pg-secure: SELECT on every table of the store's schema."""
    with psycopg.connect(url, autocommit=True) as con:
        who = sql.Identifier(role)
        con.execute(sql.SQL("GRANT USAGE ON SCHEMA chunkwise TO {}").format(who))
        con.execute(sql.SQL("GRANT SELECT ON ALL TABLES IN SCHEMA chunkwise TO {}").format(who))


def _results(url: str) -> list:
    with Retriever(url) as r:
        return [r.search(q, g, k=4, mode=mode).to_dict()["results"] for mode in MODES for q, g in QUERIES]


def _privileges(url: str, role: str, table: str) -> tuple[bool, bool]:
    with psycopg.connect(url, autocommit=True) as con:
        return tuple(con.execute("SELECT has_table_privilege(%s, %s, 'SELECT'), has_table_privilege(%s, %s, 'INSERT')",
                                 (role, table, role, table)).fetchone())


def test_a_select_only_role_searches_an_unsecured_store_as_the_owner_does(pg_server, pg_url, tmp_path):
    role = new_role(pg_server.get_uri(), "plain")
    try:
        build(tmp_path / "kb", pg_url)
        _grant_select_by_hand(pg_url, role)
        want = _results(pg_url)
        assert any(want)
        assert _results(role_url(pg_url, role)) == want
    finally:
        drop_role(pg_server.get_uri(), role, pg_url)


def test_a_role_granted_by_hand_on_a_secured_store_is_told_to_become_a_reader(pg_server, pg_url, tmp_path, capsys):
    reader, plain = new_role(pg_server.get_uri(), "reader"), new_role(pg_server.get_uri(), "plain")
    try:
        build(tmp_path / "kb", pg_url)
        _grant_select_by_hand(pg_url, plain)
        assert main(["pg-secure", "--db", pg_url, "--reader", reader]) == 0
        state = api.row_security(pg_url)
        assert state.readers == (reader,) and state.others == (plain,)
        assert state.to_dict()["other_grantees"] == [plain]
        with pytest.raises(StoreError, match="not one of its readers.*pg-secure --db OWNER_URL --reader"):
            Retriever(role_url(pg_url, plain))
        capsys.readouterr()
        assert main(["search", "salary", "--db", role_url(pg_url, plain), "--groups", "hr"]) == 2
        err = capsys.readouterr().err
        assert "not one of its readers" in err and "Traceback" not in err and len(err.strip().splitlines()) == 1
        with pytest.raises(StoreError, match="may still read"):  # RLS off would show it every row
            api.row_security(pg_url, revoke=None, off=True)
        assert api.row_security(pg_url).enabled
        # made a reader, it searches as the first one does
        assert main(["pg-secure", "--db", pg_url, "--reader", plain]) == 0
        assert set(api.row_security(pg_url).readers) == {reader, plain} and not api.row_security(pg_url).others
        assert _results(role_url(pg_url, plain)) == _results(role_url(pg_url, reader)) == _results(pg_url)
    finally:
        drop_role(pg_server.get_uri(), reader, pg_url)
        drop_role(pg_server.get_uri(), plain, pg_url)


def test_pg_secure_changes_privileges_on_the_stores_tables_only(pg_server, pg_url, tmp_path):
    """Another application's tables in the same schema (one needing quotes) keep their grants
    through --reader and --revoke, and do not break either."""
    role = new_role(pg_server.get_uri(), "reader")
    try:
        build(tmp_path / "kb", pg_url)
        with psycopg.connect(pg_url, autocommit=True) as con:
            con.execute('CREATE TABLE "MixedCase" (x int)')
            con.execute("CREATE TABLE app_orders (x int)")
            con.execute(sql.SQL("GRANT SELECT, INSERT ON app_orders, {} TO {}").format(
                sql.Identifier("MixedCase"), sql.Identifier(role)))
        assert main(["pg-secure", "--db", pg_url, "--reader", role]) == 0
        assert _privileges(pg_url, role, "app_orders") == (True, True)
        assert _privileges(pg_url, role, '"MixedCase"') == (True, True)
        assert _privileges(pg_url, role, "chunks") == (True, False)
        assert main(["pg-secure", "--db", pg_url, "--revoke", role]) == 0
        assert _privileges(pg_url, role, "app_orders") == (True, True)
        assert _privileges(pg_url, role, "chunks") == (False, False)
        assert api.row_security(pg_url).readers == ()
    finally:
        drop_role(pg_server.get_uri(), role, pg_url)


@pytest.mark.parametrize("attribute", ["SUPERUSER", "BYPASSRLS"])
def test_a_member_of_a_role_that_bypasses_row_security_is_refused(pg_server, pg_url, tmp_path, capsys, attribute):
    role, strong = new_role(pg_server.get_uri(), "reader"), new_role(pg_server.get_uri(), "strong")
    try:
        build(tmp_path / "kb", pg_url)
        with psycopg.connect(pg_server.get_uri(), autocommit=True) as con:
            con.execute(sql.SQL("ALTER ROLE {} " + attribute).format(sql.Identifier(strong)))
            con.execute(sql.SQL("GRANT {} TO {}").format(sql.Identifier(strong), sql.Identifier(role)))
        capsys.readouterr()
        assert main(["pg-secure", "--db", pg_url, "--reader", role]) == 2
        err = capsys.readouterr().err
        assert "member of a superuser or BYPASSRLS role" in err and "Traceback" not in err
        assert not api.row_security(pg_url).enabled
    finally:
        drop_role(pg_server.get_uri(), role, pg_url)
        drop_role(pg_server.get_uri(), strong, pg_url)


def test_a_readers_tie_order_is_read_as_the_caller(pg_server, pg_url, tmp_path, monkeypatch):
    """Identical documents tie exactly in BM25 and dense; the rankers called directly on a reader's
    store (not through ``Retriever.rank``'s transaction) look the chunk ids up as the caller, so
    the ties come back in chunk id order, as on the owner's store."""
    from chunkwise.config import ChunkConfig
    from chunkwise.embed import make_embedder
    from chunkwise.pipeline import ingest
    from chunkwise.retrieve.server import ServerBM25, dense_rank
    from chunkwise.store import open_store

    role = new_role(pg_server.get_uri(), "reader")
    try:
        (tmp_path / "kb").mkdir()
        for i in range(6):
            (tmp_path / "kb" / f"same{i}.md").write_text("# Rollback\n\nRollback the deploy, then page the team.\n")
        embedder = make_embedder("hashing")
        ingest([tmp_path / "kb"], pg_url, ChunkConfig(size=64), embedder=embedder,
               acl_map={f"same{i}.md": ["hr"] for i in range(6)})
        assert main(["pg-secure", "--db", pg_url, "--reader", role]) == 0
        vector = embedder.embed(["Rollback the deploy"])[0]
        ranked = {}
        for who, url in (("owner", pg_url), ("reader", role_url(pg_url, role))):
            with open_store(url, readonly=True) as store:
                asked = []
                real = store.chunk_ids
                monkeypatch.setattr(store, "chunk_ids", lambda keys: asked.append(store._caller) or real(keys))
                bm25 = ServerBM25(store).rank("rollback deploy", ["hr"], 3)
                dense = dense_rank(store, vector, ["hr"], 3)
                ranked[who] = ([k for k, _ in bm25], [k for k, _ in dense])
                assert asked and all(caller == ("hr",) for caller in asked), who
        with open_store(pg_url, readonly=True) as owner:  # the same rows: keys name them on every connection
            ids = owner.chunk_ids([k for keys in ranked["reader"] for k in keys])
        for order in ([ids[k] for k in keys] for keys in ranked["reader"]):
            assert len(order) == 3 and order == sorted(order)
        assert ranked["reader"] == ranked["owner"]
    finally:
        drop_role(pg_server.get_uri(), role, pg_url)
