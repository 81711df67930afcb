"""A PostgreSQL store lives in its own schema (``chunkwise``): a database whose ``public`` already
holds an application's ``documents`` table takes a store without conflict; a store written before
(its tables in ``public``) keeps working where it is; a URL's search path names another schema;
``chunkwise pg init|status|migrate`` show and manage it."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import chunkwise
from chunkwise import api

psycopg = pytest.importorskip("psycopg")
SRC = str(Path(chunkwise.__file__).resolve().parents[1])


def _docs(tmp_path: Path) -> Path:
    folder = tmp_path / "docs"
    folder.mkdir(exist_ok=True)
    (folder / "runbook.md").write_text("# Runbook\n\n## Rollback\n\nRun the rollback job.\n", encoding="utf-8")
    return folder


def _raw(url, sql, params=()):
    with psycopg.connect(url, autocommit=True, options="-c search_path=public") as con:
        cur = con.execute(sql, params)
        return cur.fetchall() if cur.description else None


def _tables(url, schema):
    return {r[0] for r in _raw(url, "SELECT tablename FROM pg_tables WHERE schemaname = %s", (schema,))}


def _cli(*args):
    env = {"PYTHONPATH": SRC, "PATH": "/usr/bin:/bin", "HF_HUB_OFFLINE": "1"}
    return subprocess.run([sys.executable, "-m", "chunkwise.cli.main", *args], capture_output=True, text=True,
                          env=env, timeout=300)


def test_a_new_store_goes_to_its_own_schema_beside_an_applications_documents_table(pg_url, tmp_path):
    _raw(pg_url, "CREATE TABLE public.documents (id serial PRIMARY KEY, body text)")
    _raw(pg_url, "INSERT INTO public.documents (body) VALUES ('the application''s row')")
    stats = api.ingest([_docs(tmp_path)], pg_url, embedder="hashing", acl=["sre"])
    assert stats.added > 0
    assert {"documents", "chunks", "migrations"} <= _tables(pg_url, "chunkwise")
    assert _tables(pg_url, "public") == {"documents"}
    assert _raw(pg_url, "SELECT body FROM public.documents") == [("the application's row",)]
    found = api.search(pg_url, "rollback", ["sre"], embedder="hashing")
    assert found.passages and found.passages[0].doc_id == "runbook.md"


def test_a_store_from_before_stays_in_public_and_keeps_working(pg_server, pg_databases, tmp_path):
    url = pg_databases.new()
    name = _raw(url, "SELECT current_database()")[0][0]
    _raw(url, f'ALTER DATABASE "{name}" RESET search_path')  # a database as users have it
    legacy = url + ("&" if "?" in url else "?") + "options=-csearch_path%3Dpublic"  # how stores were made until now
    api.ingest([_docs(tmp_path)], legacy, embedder="hashing", acl=["sre"])
    assert {"documents", "chunks"} <= _tables(url, "public")
    found = api.search(url, "rollback", ["sre"], embedder="hashing")  # the plain URL finds it where it is
    assert found.passages
    assert not _raw(url, "SELECT 1 FROM pg_namespace WHERE nspname = 'chunkwise'")
    again = api.ingest([_docs(tmp_path)], url, embedder="hashing", acl=["sre"])
    assert (again.added, again.removed) == (0, 0) and not _tables(url, "chunkwise")


def test_the_urls_search_path_names_another_schema(pg_url, tmp_path):
    _raw(pg_url, "CREATE SCHEMA kb")
    url = pg_url + ("&" if "?" in pg_url else "?") + "options=-csearch_path%3Dkb,public"
    api.ingest([_docs(tmp_path)], url, embedder="hashing", acl=["sre"])
    assert {"documents", "chunks"} <= _tables(pg_url, "kb") and not _tables(pg_url, "chunkwise")
    assert api.search(url, "rollback", ["sre"], embedder="hashing").passages


def test_pg_init_status_migrate(pg_url):
    before = _cli("pg", "status", "--db", pg_url, "--json")
    assert before.returncode == 0, before.stderr
    state = json.loads(before.stdout)
    assert state["version"] == 0 and state["placed"] == "none" and state["pending"]
    missing = _cli("pg", "migrate", "--db", pg_url)
    assert missing.returncode != 0 and "no chunkwise store" in missing.stderr
    init = _cli("pg", "init", "--db", pg_url, "--json")
    assert init.returncode == 0, init.stderr
    state = json.loads(init.stdout)
    assert (state["schema"], state["placed"], state["pending"]) == ("chunkwise", "own", [])
    assert state["version"] == state["latest"]
    table = _cli("pg", "migrate", "--db", pg_url)
    assert table.returncode == 0 and "schema   chunkwise (own)" in table.stdout
    bad = _cli("pg", "status", "--db", "index.db")
    assert bad.returncode == 2 and "postgresql://" in bad.stderr


def test_documents_times_and_records_have_server_types(pg_url, tmp_path):
    """Schema 7 on a new store: a document's ISO ``updated_at`` is also a ``timestamptz`` (``updated``,
    indexed; NULL when the text is no date), ``ingested_at`` is one, a record is ``jsonb`` that the
    GIN index answers containment for, and no chunk carries a copy of its vector."""
    folder = _docs(tmp_path)
    (folder / "dated.md").write_text("---\nupdated_at: 2024-05-01T10:30:00+02:00\n---\n# Dated\n\nA rollback note.\n")
    (folder / "vague.md").write_text("---\nupdated_at: last spring\n---\n# Vague\n\nAnother rollback note.\n")
    api.ingest([folder], pg_url, embedder="hashing", acl=["sre"])
    rows = dict(_raw(pg_url, "SELECT path, updated FROM chunkwise.documents"))
    from datetime import datetime, timezone

    assert rows["dated.md"] == datetime(2024, 5, 1, 8, 30, tzinfo=timezone.utc)  # the same instant
    assert rows["vague.md"] is None and rows["runbook.md"] is None
    assert _raw(pg_url, "SELECT updated_at FROM chunkwise.documents WHERE path = 'vague.md'") == [("last spring",)]
    assert _raw(pg_url, "SELECT pg_typeof(ingested_at)::text FROM chunkwise.documents LIMIT 1") == [("timestamp with time zone",)]
    assert _raw(pg_url, "SELECT count(*) FROM chunkwise.chunks WHERE record @> '{\"heading_path\": [\"Runbook\"]}'")[0][0] >= 1
    assert not _raw(pg_url, "SELECT 1 FROM information_schema.columns WHERE table_schema = 'chunkwise'"
                            " AND table_name = 'chunks' AND column_name = 'vector'")
