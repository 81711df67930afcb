"""Property: under row-level security (``chunkwise pg-secure``), for random tag assignments of a
store's chunks and random callers, a reader role's raw reads of every secured table (chunks,
vectors, documents, version links, per-tag-set statistics) show exactly what the access rule,
computed in Python from the owner's raw rows, permits; and the retriever through the reader gives
the owner's results, scores included. On the session's real PostgreSQL; fresh examples every run,
CI included (tests/conftest.py's profiles)."""
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chunkwise.access import AccessTags
from chunkwise.cli.main import main
from chunkwise.errors import ConfigError
from chunkwise.retrieve import Retriever
from backends import consistent
from conftest import PgDatabases
from rls import TAGS, build, drop_role, expected, groups_json, new_role, retag, role_url, seen

CALLER_POOL = [*TAGS, "nobody", "HR", "hr managers x", "財"]
QUERIES = ["salary budget", "rollback deploy", "annual leave days", "policy audit refund", "team pager zzz"]


@pytest.fixture(scope="module")
def secured(request, tmp_path_factory):
    srv = request.getfixturevalue("pg_server")
    dbs = PgDatabases(srv)
    owner = dbs.new()
    role = new_role(srv.get_uri(), "prop")
    try:
        build(tmp_path_factory.mktemp("rls-prop"), owner)
        assert main(["pg-secure", "--db", owner, "--reader", role]) == 0
        reader = role_url(owner, role)
        import psycopg

        with psycopg.connect(owner) as con:
            keys = [k for (k,) in con.execute("SELECT key FROM chunks ORDER BY key")]
        with Retriever(owner) as mine, Retriever(reader) as theirs:
            yield owner, reader, keys, mine, theirs
    finally:
        dbs.drop()
        drop_role(srv.get_uri(), role)


tag_sets = st.lists(st.sampled_from(TAGS), max_size=3).map(lambda t: AccessTags.parse(t).tags)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data(), caller=st.lists(st.sampled_from(CALLER_POOL), min_size=1, max_size=3),
       query=st.sampled_from(QUERIES), mode=st.sampled_from(["bm25", "dense", "hybrid"]),
       expand=st.sampled_from(["none", "neighbours", "parent"]), k=st.integers(1, 8))
def test_the_reader_sees_what_the_rule_permits_and_searches_like_the_owner(secured, data, caller, query, mode, expand, k):
    owner, reader, keys, mine, theirs = secured
    assignment = {key: data.draw(tag_sets, label=f"tags of chunk {key}") for key in keys}
    retag(owner, assignment)
    consistent(owner)
    assert seen(reader, groups_json(caller)) == expected(owner, caller)
    try:
        a = mine.search(query, caller, mode=mode, expand=expand, k=k).to_dict()
    except ConfigError:  # dense ranking of a store with no servable vector: the reader is refused too
        with pytest.raises(ConfigError, match="no chunk this store can serve has a vector"):
            theirs.search(query, caller, mode=mode, expand=expand, k=k)
        return
    b = theirs.search(query, caller, mode=mode, expand=expand, k=k).to_dict()
    assert a == b
    allowed = expected(owner, caller)["chunks"]
    assert {c for r in b["results"] for c in r["chunk_ids"]} <= allowed
