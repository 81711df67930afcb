"""Row-level security on a PostgreSQL store (``chunkwise pg-secure``, store/postgres/pg_security.py), on the
session's real server: a reader role sees, in every table holding or revealing row content,
exactly the rows its caller's groups permit — through raw SQL, through a query whose own filter is
broken, with no groups set (nothing) — while the retriever through it gives the owner's results,
ingest as the owner keeps working and a migration that rebuilds a table keeps the policies."""
import json

import pytest

from chunkwise.access import AccessTags, caller_groups
from chunkwise.cli.main import main
from chunkwise.embed import make_embedder
from chunkwise.errors import AccessTagError, ConfigError, StoreError
from chunkwise.retrieve import Retriever
from chunkwise.retrieve.bm25 import query_terms
from backends import consistent
from conftest import PgDatabases
from rls import TABLES, TAGS, as_reader, build, drop_role, expected, groups_json, new_role, role_url, seen

CALLERS = [["hr"], ["hr managers"], ["managers", "財務"], ["a:b/c@d+e#f"], ["café"], ["x-y_z.w", "staff"],
           ["nobody"], list(TAGS)]


@pytest.fixture(scope="module")
def secured(request, tmp_path_factory):
    """(owner URL, reader URL, reader role) of a store secured with ``chunkwise pg-secure``."""
    srv = request.getfixturevalue("pg_server")
    dbs = PgDatabases(srv)
    owner = dbs.new()
    role = new_role(srv.get_uri())
    try:
        build(tmp_path_factory.mktemp("rls"), owner)
        assert main(["pg-secure", "--db", owner, "--reader", role]) == 0
        yield owner, role_url(owner, role), role
    finally:
        dbs.drop()
        drop_role(srv.get_uri(), role)


@pytest.mark.parametrize("groups", CALLERS, ids=lambda g: ",".join(g))
def test_the_reader_sees_exactly_the_permitted_rows_of_every_table(secured, groups):
    owner, reader, _ = secured
    want = expected(owner, groups)
    assert seen(reader, groups_json(groups)) == want
    if groups == list(TAGS):  # the store really holds what is hidden from the others
        everything = expected(owner, TAGS)
        assert want["version_links"] and all(everything[t] for t in TABLES)
    # and the owner, not subject to the policies, sees every row whatever the setting says
    assert len(as_reader(owner, "SELECT chunk_id FROM chunks", groups_json(["nobody"]))) == len(
        as_reader(owner, "SELECT chunk_id FROM chunks"))


def test_a_caller_of_some_groups_sees_less_than_one_of_all(secured):
    owner, reader, _ = secured
    some, every = seen(reader, groups_json(["hr"])), seen(reader, groups_json(TAGS))
    for table in TABLES:
        assert some[table] < every[table], table  # strictly: each table hides something from ["hr"]


@pytest.mark.parametrize("setting", [None, "", "[]", "{}", '{"hr": true}', '"hr"', "null", "[1, null, [\"hr\"]]"])
def test_no_setting_or_one_naming_no_group_shows_nothing(secured, setting):
    _, reader, _ = secured
    assert all(not rows for rows in seen(reader, setting).values())


def test_a_malformed_setting_is_an_error_never_a_guess(secured):
    import psycopg

    _, reader, _ = secured
    with pytest.raises(psycopg.errors.InvalidTextRepresentation):
        as_reader(reader, "SELECT count(*) FROM chunks", "hr")


def test_a_setting_outlives_nothing_but_its_transaction(secured):
    """Transaction-local: the next transaction on the same connection, without it, sees nothing."""
    import psycopg

    _, reader, _ = secured
    with psycopg.connect(reader) as con:
        with con.transaction():
            con.execute("SELECT set_config('chunkwise.groups', %s, true)", (groups_json(["hr"]),))
            assert con.execute("SELECT count(*) FROM chunks").fetchone()[0] > 0
        assert con.execute("SELECT count(*) FROM chunks").fetchone()[0] == 0


def test_hostile_group_names_are_carried_exactly(secured):
    """Anything a JSON string can hold reaches the policy as itself (commas, quotes, braces,
    backslashes, a stored tag's spaces and marks), and such names never become another tag: the
    canonical tags the retriever sends cannot hold them at all."""
    owner, reader, _ = secured
    hostile = ['a,b', 'x"y', "{z}", "back\\slash", "it's", "hr managers", "hr, managers", "{hr}", '"hr"', "財務"]
    got = as_reader(owner, "SELECT chunkwise_caller_groups()", json.dumps(hostile, ensure_ascii=False))[0][0]
    assert got == hostile
    # None of the hostile near-misses of "hr" opens hr's rows; the real tags among them do.
    near = ["hr, managers", "{hr}", '"hr"', " hr", "HR", "hr\\"]
    assert seen(reader, json.dumps(near)) == {t: set() for t in TABLES}
    assert seen(reader, json.dumps(["hr managers", "財務"], ensure_ascii=False)) == expected(owner, ["hr managers", "財務"])
    for bad in ['x"y', "{z}", "back\\slash", "a\x00b", "a\x07b", "a\x1b[2Jb"]:
        with pytest.raises(AccessTagError):
            caller_groups([bad])
    assert caller_groups(["HR Managers", "ｈｒ", "a\x1fb"]).tags == ("a b", "hr", "hr managers")  # canonical, as stored


def _results(retriever, query, groups, **options):
    return retriever.search(query, groups, **options).to_dict()


@pytest.mark.parametrize("mode", ["bm25", "dense", "hybrid"])
def test_the_retriever_through_the_reader_gives_the_owners_results(secured, mode):
    owner, reader, _ = secured
    queries = ["salary budget", "rollback deploy pager", "annual leave requested days", "policy team audit zzz"]
    with Retriever(owner) as mine, Retriever(reader) as theirs:
        assert theirs.store.capabilities.filtered_reads and not mine.store.capabilities.filtered_reads
        compared = 0
        for query in queries:
            for groups in CALLERS:
                for expand in ("none", "neighbours", "parent"):
                    for versions in ("latest", "all"):
                        a = _results(mine, query, groups, mode=mode, expand=expand, k=4, versions=versions)
                        b = _results(theirs, query, groups, mode=mode, expand=expand, k=4, versions=versions)
                        assert a == b, (query, groups, expand, versions)
                        compared += bool(a["results"])
        assert compared > 20  # most comparisons had results to compare


def test_the_readers_hnsw_path_gives_the_owners_results(secured, monkeypatch):
    """This store is far below ``EXACT_ROWS``: with the threshold lowered, both connections take the
    HNSW path under the filter (the reader's through the policies) and agree."""
    from chunkwise.store.postgres import postgres_read

    owner, reader, _ = secured
    monkeypatch.setattr(postgres_read, "EXACT_ROWS", 3)
    asked = []
    real = postgres_read.PostgresReads._hnsw
    monkeypatch.setattr(postgres_read.PostgresReads, "_hnsw",
                        lambda self, *a: asked.append(self.filtered_reads) or real(self, *a))
    with Retriever(owner) as mine, Retriever(reader) as theirs:
        for query in ["salary budget", "rollback deploy pager", "annual leave requested days"]:
            for groups in CALLERS:
                for mode in ("dense", "hybrid"):
                    assert _results(mine, query, groups, mode=mode, k=4) == _results(theirs, query, groups, mode=mode, k=4)
    assert True in asked and False in asked  # both connections walked the index


def test_the_server_side_primitives_agree_through_the_reader(secured):
    """The BM25 statistics (per-tag-set rows and lengths, document frequencies, the server-scored
    top) and the dense candidates are those of the caller's permitted rows on both connections."""
    from chunkwise.store import open_store

    owner, reader, _ = secured
    with open_store(owner, readonly=True) as a, open_store(reader, readonly=True) as b:
        for groups in CALLERS:
            tags = caller_groups(groups).tags
            assert a.lexical_stats(tags) == b.lexical_stats(tags)
            terms = query_terms("salary budget leave rollback zzz")
            assert a.lexical_df(terms, tags) == b.lexical_df(terms, tags)
            n, avgdl = a.lexical_stats(tags)
            top = (terms, [1.0] * len(terms), tags, avgdl, 5, 1.2, 0.75)
            assert a.lexical_top(*top) == b.lexical_top(*top)
            assert a.has_vectors() == b.has_vectors()
            vec = make_embedder("hashing").embed(["salary budget"])[0]
            ka, ma = a.dense_candidates(vec, tags, 5)
            kb, mb = b.dense_candidates(vec, tags, 5)
            assert ka == kb and (ma == mb).all()
            assert a.version_links(None, tags) == b.version_links(None, tags)


def _break_the_filters(monkeypatch):
    """What a buggy query would do: the app-side filter of every read gone (SQL and Python)."""
    import chunkwise.retrieve.store as retriever_module
    import chunkwise.store.postgres.postgres_read as reads

    monkeypatch.setattr(reads, "_PERMITTED", "TRUE")
    monkeypatch.setattr(reads, "_DENSE_PERMITTED", "TRUE")
    monkeypatch.setattr(reads, "visible_document", lambda doc, groups: "TRUE")
    monkeypatch.setattr(retriever_module, "permitted", lambda *args, **kwargs: True)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # the broken owner path takes logs of negative numbers
def test_a_broken_query_leaks_nothing_under_row_security(secured, monkeypatch):
    """With every app-side filter removed, the owner's connection (no RLS) leaks rows outside the
    caller's groups — so the check can fail — and the reader's returns only permitted ones: the
    database is doing the work."""
    from chunkwise.store import open_store

    owner, reader, _ = secured
    groups = ["hr"]
    allowed = expected(owner, groups)["chunks"]
    with Retriever(reader) as theirs:
        honest = [_results(theirs, q, groups, mode="hybrid", k=8) for q in ("salary budget", "leave days")]
    _break_the_filters(monkeypatch)
    with Retriever(owner) as mine, Retriever(reader) as theirs:
        leaked = {h["chunk_id"] for q in ("salary budget", "leave days")
                  for h in _results(mine, q, groups, mode="hybrid", k=8)["results"]}
        assert leaked - allowed, "the broken filter should have leaked through the owner's connection"
        got = [_results(theirs, q, groups, mode="hybrid", k=8) for q in ("salary budget", "leave days")]
        assert {h["chunk_id"] for r in got for h in r["results"]} <= allowed
        assert got == honest  # the policy alone gives the caller's own results
    with open_store(owner, readonly=True) as a, open_store(reader, readonly=True) as b:
        term = query_terms("salary")[0]
        keys = {int(k) for k in a.lexical_postings([term], ["hr"])[term].keys}
        mine_ok = {c.record["chunk_id"] for c in a.chunks(keys=list(keys))}
        assert mine_ok - allowed  # leaked on the owner's connection
        theirs_keys = [int(k) for k in b.lexical_postings([term], ["hr"])[term].keys]
        with b.as_caller(["hr"]):
            assert {c.record["chunk_id"] for c in b.chunks(keys=theirs_keys)} <= allowed
        assert {(l.newer, l.older) for l in b.version_links(None, ["hr"])} == expected(owner, groups)["version_links"]


def test_every_read_of_a_search_carries_the_groups(secured, monkeypatch):
    """Rows, version links and expansion are read inside the caller's transaction: a search through
    the reader that expands into neighbours and parents finds them (outside it, it would see none)."""
    owner, reader, _ = secured
    with Retriever(reader) as r:
        assert r.doc_chunks("d00.md") == []  # outside a caller's transaction: nothing (fail closed)
        with r.as_caller(list(TAGS)):
            assert r.doc_chunks("d00.md")
        with pytest.raises(ValueError):
            with r.as_caller(["hr"]), r.as_caller(["staff"]):
                pass
        result = r.search("salary budget", list(TAGS), expand="parent", k=3, mode="bm25").to_dict()
        assert result["results"] and any(p["expanded_from"] for p in result["results"])


def test_the_reader_cannot_write_and_is_told_in_one_line(secured, tmp_path, capsys):
    import psycopg

    owner, reader, _ = secured
    for statement in ("INSERT INTO settings VALUES ('x', 'y')", "UPDATE chunks SET servable = true",
                      "DELETE FROM acl_stats", "DELETE FROM documents", "INSERT INTO roots VALUES ('/x')"):
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            as_reader(reader, statement, groups_json(TAGS))
    (tmp_path / "a.md").write_text("# A\n\nsome words\n", encoding="utf-8")
    assert main(["ingest", str(tmp_path), "--db", reader, "--acl", "hr"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "may only read this store" in err and "Traceback" not in err
    for command in (["check"], ["manifest"], ["pg-secure", "--reader", "postgres"], ["pg-secure", "--off"]):
        assert main([*command, "--db", reader]) == 2
        err = capsys.readouterr().err.strip()
        assert err.startswith("chunkwise: error:") and err.count("\n") == 0
    with pytest.raises(ConfigError, match="row-level security"):
        Retriever(reader, bm25="sparse")


def test_pg_secure_is_idempotent_refuses_bypassing_roles_and_reverses(pg_server, pg_url, tmp_path, capsys):
    """Run twice: the same state. A superuser, the owner or a missing role as reader: refused. --off
    while a reader remains: refused; after --revoke it goes, and the revoked role is told it may not
    read. Ingest as the owner into a secured store keeps working (new rows visible to the reader)."""
    admin = pg_server.get_uri()
    role = new_role(admin, "idem")
    try:
        build(tmp_path / "kb", pg_url)
        reader = role_url(pg_url, role)
        states = []
        for _ in range(2):
            assert main(["pg-secure", "--db", pg_url, "--reader", role, "--json"]) == 0
            states.append(json.loads(capsys.readouterr().out))
        assert states[0] == states[1] and states[0]["row_security"] and states[0]["readers"] == [role]
        assert states[0]["tables"] == list(TABLES) and not states[0]["unsecured_tables"]
        for bad, why in (("postgres", "superuser"), ("no such role", "does not exist")):
            assert main(["pg-secure", "--db", pg_url, "--reader", bad]) == 2
            assert why in capsys.readouterr().err
        # ingest as the owner into the secured store: works, stays consistent, new rows reach the reader
        (tmp_path / "kb" / "new.md").write_text("# New\n\nzebra crossing rules for the yard\n", encoding="utf-8")
        from chunkwise.pipeline import ingest

        from rls import CONFIG, corpus
        acl_map = {**corpus(tmp_path / "kb"), "new.md": ["staff"]}
        stats = ingest([tmp_path / "kb"], pg_url, CONFIG, embedder="hashing", acl_map=acl_map)
        assert stats.added == 1 and [e["path"] for e in stats.errors] == ["d04.md"]  # d04: review, as before
        consistent(pg_url)
        assert seen(reader, groups_json(["staff"])) == expected(pg_url, ["staff"])
        with Retriever(reader) as r:
            assert r.search("zebra crossing", ["staff"], k=1).to_dict()["results"][0]["doc_id"] == "new.md"
        assert main(["pg-secure", "--db", pg_url, "--off"]) == 2
        assert "revoke them first" in capsys.readouterr().err
        assert main(["pg-secure", "--db", pg_url, "--revoke", role]) == 0
        assert main(["pg-secure", "--db", pg_url, "--off", "--json"]) == 0
        off = json.loads(capsys.readouterr().out.splitlines()[-1])
        assert not off["row_security"] and off["readers"] == []
        assert main(["search", "zebra", "--db", reader, "--groups", "staff"]) == 2
        err = capsys.readouterr().err.strip()
        assert "may not read this store" in err and err.count("\n") == 0
    finally:
        drop_role(admin, role, pg_url)


def test_a_sqlite_store_is_told_it_has_no_roles(tmp_path, capsys):
    assert main(["pg-secure", "--db", str(tmp_path / "x.db"), "--reader", "r"]) == 2
    assert "postgresql://" in capsys.readouterr().err


def test_policies_survive_a_migration_that_rebuilds_a_table(pg_server, pg_url, tmp_path, monkeypatch):
    """A later migration that rebuilds ``acl_stats`` and adds a column to ``chunks``: opening the
    store as the owner migrates it and re-applies RLS, the policies and the readers' grants."""
    import chunkwise.store.postgres.postgres as pg

    admin = pg_server.get_uri()
    role = new_role(admin, "mig")
    try:
        build(tmp_path / "kb", pg_url)
        assert main(["pg-secure", "--db", pg_url, "--reader", role]) == 0
        reader = role_url(pg_url, role)
        before = {g: seen(reader, groups_json(g)) for g in ("hr", "staff, 財務")}
        rebuild = ("CREATE TABLE acl_stats_new (LIKE acl_stats INCLUDING ALL);"
                   " INSERT INTO acl_stats_new SELECT * FROM acl_stats; DROP TABLE acl_stats;"
                   " ALTER TABLE acl_stats_new RENAME TO acl_stats; ALTER TABLE chunks ADD COLUMN later TEXT")
        monkeypatch.setattr(pg, "MIGRATIONS", [*pg.MIGRATIONS, (pg.LATEST + 1, "a later rebuild", rebuild)])
        monkeypatch.setattr(pg, "LATEST", pg.LATEST + 1)
        from chunkwise.store import open_store

        with open_store(pg_url) as store:
            state = store.row_security()
            assert state.enabled and not state.partial and state.readers == (role,)
        from backends import query
        assert query(pg_url, "SELECT count(*) FROM pg_policies WHERE policyname = 'chunkwise_read'")[0][0] == len(TABLES)
        assert {g: seen(reader, groups_json(g)) for g in before} == before
        assert seen(reader, None) == {t: set() for t in TABLES}
    finally:
        drop_role(admin, role, pg_url)


def test_an_unsecured_store_is_unchanged_for_everyone(pg_url, tmp_path):
    """Migration 4's policies are inert until pg-secure: the owner's reads and a store-wide count
    need nothing set."""
    from backends import query

    build(tmp_path / "kb", pg_url)
    assert query(pg_url, "SELECT bool_or(relrowsecurity) FROM pg_class WHERE relname = ANY(%s)", (list(TABLES),))[0][0] is False
    assert query(pg_url, "SELECT count(*) FROM chunks")[0][0] > 0
    with Retriever(pg_url) as r:
        assert r.search("salary budget", ["hr"], k=2).to_dict()["results"]
    assert AccessTags.parse(["hr"]).tags == ("hr",)
    with pytest.raises(StoreError):
        from chunkwise import api

        api.row_security(pg_url, reader="no such role")


def test_expansion_meets_hidden_chunks_as_on_the_owners_connection(pg_server, pg_url, tmp_path):
    """A section whose middle chunk the caller may not see: on the owner's connection parent
    expansion refuses the section (and says so) and neighbours stop at it; the reader, which
    cannot see that chunk, does exactly the same (it is told where hidden chunks are, never what
    they hold) instead of stitching the visible chunks across the gap."""
    import psycopg

    from rls import retag

    admin = pg_server.get_uri()
    role = new_role(admin, "expand")
    try:
        (tmp_path / "kb").mkdir()
        words = " ".join(["rollback"] + ["steps"] * 30)
        (tmp_path / "kb" / "h.md").write_text("# Handbook\n\n## Deploys\n\n" + "\n\n".join(
            f"Paragraph {i} about deploy {words}." for i in range(5)) + "\n", encoding="utf-8")
        from chunkwise.pipeline import ingest
        from rls import CONFIG

        ingest([tmp_path / "kb"], pg_url, CONFIG, embedder="hashing", acl=("staff",))
        assert main(["pg-secure", "--db", pg_url, "--reader", role]) == 0
        with psycopg.connect(pg_url) as con:
            rows = con.execute("SELECT key, record::jsonb ->> 'section_id' FROM chunks ORDER BY chunk_index").fetchall()
        assert len(rows) >= 4 and len({s for _, s in rows}) < len(rows)  # several chunks share a section
        middle = rows[len(rows) // 2][0]
        retag(pg_url, {middle: ("hr",)})
        with Retriever(pg_url) as mine, Retriever(role_url(pg_url, role)) as theirs:
            for expand in ("parent", "neighbours"):
                a = _results(mine, "paragraph deploy rollback", ["staff"], mode="bm25", expand=expand, k=5)
                b = _results(theirs, "paragraph deploy rollback", ["staff"], mode="bm25", expand=expand, k=5)
                assert a == b, expand
                if expand == "parent":
                    assert any(o["reason"] == "parent_not_permitted" for o in a["omitted"])
    finally:
        drop_role(admin, role, pg_url)


def test_dense_search_of_a_store_with_nothing_servable_is_refused_for_the_reader_too(pg_server, pg_url, tmp_path):
    """Found by the property: every chunk untagged, --mode dense refuses on the owner's connection
    (nothing servable has a vector) and on the reader's, whose message cannot count the store."""
    from rls import retag

    admin = pg_server.get_uri()
    role = new_role(admin, "dense")
    try:
        build(tmp_path / "kb", pg_url)
        assert main(["pg-secure", "--db", pg_url, "--reader", role]) == 0
        from backends import query

        retag(pg_url, {k: () for (k,) in query(pg_url, "SELECT key FROM chunks")})
        with Retriever(pg_url) as mine, Retriever(role_url(pg_url, role)) as theirs:
            with pytest.raises(ConfigError, match="nothing in this store can be served"):
                mine.search("salary", ["hr"], mode="dense")
            with pytest.raises(ConfigError, match="no chunk this store can serve has a vector"):
                theirs.search("salary", ["hr"], mode="dense")
            assert _results(mine, "salary", ["hr"], mode="bm25") == _results(theirs, "salary", ["hr"], mode="bm25")
    finally:
        drop_role(admin, role, pg_url)


def test_the_readers_indexed_match_applies_the_rule_itself(secured):
    """``chunkwise_matching`` (a reader's lexical match through both GIN indexes, SECURITY DEFINER)
    returns the rows holding a term that the caller's groups permit, and none without groups."""
    owner, reader, _ = secured
    from backends import query

    term = query_terms("salary")[0]
    for groups in CALLERS:
        want = {k for k, acl, q in query(owner, "SELECT key, acl, quality FROM chunks WHERE lex @@ %s::tsquery",
                                         (f"'{term}'",)) if q == "ready" and set(acl) & set(caller_groups(groups).tags)}
        got = {k for (k,) in as_reader(reader, "SELECT * FROM chunkwise_matching(%s::tsquery)", groups_json(groups),
                                       (f"'{term}'",))}
        assert got == want, groups
    assert as_reader(reader, "SELECT * FROM chunkwise_matching(%s::tsquery)", None, (f"'{term}'",)) == []


def _nearest_as_reader(reader: str, groups_setting: str | None, q, dim: int, n: int, *, index: bool):
    """``chunkwise_nearest`` as the reader: through the HNSW index only (``index``, ef_search 5:
    pgvector's filtered index scan returns at most that many), or never through it (an exact scan)."""
    import psycopg
    from pgvector.psycopg import register_vector

    with psycopg.connect(reader) as con:
        register_vector(con)
        if groups_setting is not None:
            con.execute("SELECT set_config('chunkwise.groups', %s, true)", (groups_setting,))
        settings = (("enable_seqscan", "off"), ("enable_bitmapscan", "off"), ("hnsw.ef_search", "5")) if index else (
            ("enable_indexscan", "off"),)
        for name, value in settings:
            con.execute(f"SET LOCAL {name} = {value}")
        return [(k, float(d)) for k, _, d in con.execute("SELECT * FROM chunkwise_nearest(%s, %s, %s)", (q, dim, n))]


def test_the_readers_nearest_neighbours_apply_the_rule_itself(secured):
    """``chunkwise_nearest`` (a reader's filtered HNSW search, SECURITY DEFINER, planned with the
    groups as a value) returns only rows the caller's groups permit, nearest first, all of them on
    an exact scan, and none without groups; it walks the index when the index is the only way."""
    import numpy as np

    from backends import query
    from chunkwise.store import open_store

    owner, reader, _ = secured
    with open_store(owner, readonly=True) as s:
        dim = s._hnsw_dim()
    assert dim, "the store has no HNSW index: the test tests nothing"
    rows = query(owner, "SELECT c.key, c.acl, c.quality, v.vector::text FROM chunks c JOIN vectors v"
                        " ON v.embed_key = c.embed_key")
    q = np.asarray(json.loads(rows[0][3]), dtype=np.float32)
    compared = 0
    for groups in CALLERS:
        want = {k for k, acl, quality, _ in rows if quality == "ready" and set(acl) & set(caller_groups(groups).tags)}
        exact = _nearest_as_reader(reader, groups_json(groups), q, dim, len(rows) + 1, index=False)
        assert {k for k, _ in exact} == want, groups
        assert [d for _, d in exact] == sorted(d for _, d in exact)
        walked = _nearest_as_reader(reader, groups_json(groups), q, dim, len(rows) + 1, index=True)
        assert {k for k, _ in walked} <= want and len(walked) <= 5, groups
        compared += len(want) > 5 and len(walked) > 0
    assert compared, "no caller had more permitted rows than the index walk returns"
    assert _nearest_as_reader(reader, None, q, dim, 10, index=False) == []
