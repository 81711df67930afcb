"""A store written by chunkwise as of commit 6dedb40 (the schema before issue 28: PostgreSQL tables
in ``public``, records as JSON text, times as text, a copy of every vector on its chunk) is opened
by this chunkwise and upgraded without loss, on SQLite and on PostgreSQL: the same documents,
records, tags and vectors, the same search results, and a re-ingest finds nothing to change.

The old store is made by the old code itself, checked out of the repository with ``git archive``
and run in a subprocess, so the test does not depend on anyone's idea of the old schema."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

import chunkwise

OLD = "6dedb40"
SRC = Path(chunkwise.__file__).resolve().parents[1]
REPO = SRC.parent

# Runs under either chunkwise (PYTHONPATH picks which): ingest (old only) and dump what the store holds.
SCRIPT = r'''
import dataclasses, json, sys
from chunkwise import api
from chunkwise.store import open_store
action, db, folder = sys.argv[1:4]
if action == "ingest":
    stats = api.ingest([folder], db, embedder="hashing", acl=["sre"])
    assert stats.added > 0
with open_store(db, readonly=action == "dump") as store:
    chunks = sorted(({"record": c.record, "acl": list(c.acl), "quality": c.quality, "uri": c.source_uri}
                     for c in (store.iter_chunks() if hasattr(store, "iter_chunks") else store.chunks())),
                    key=lambda c: c["record"]["chunk_id"])  # the old code's name, then this one's (Store.chunks)
    keys = sorted({c["record"]["embed_key"] for c in chunks})
    vectors = {k: [round(x, 6) for x in v] for k, v in store.vectors(keys).items()}
    documents = [dataclasses.asdict(d) for d in store.documents()]
found = api.search(db, "rollback the deploy", ["sre"], embedder="hashing", mode="hybrid")
hits = [(p.doc_id, p.start_char, p.end_char) for p in found.passages]
print(json.dumps({"chunks": chunks, "vectors": vectors, "documents": documents, "hits": hits}))
'''


@pytest.fixture(scope="module")
def old_src(tmp_path_factory) -> Path:
    git = shutil.which("git")
    if git is None or subprocess.run([git, "-C", str(REPO), "cat-file", "-e", f"{OLD}^{{commit}}"],
                                     capture_output=True).returncode != 0:
        pytest.skip(f"needs git and the repository's history (commit {OLD})")
    out = tmp_path_factory.mktemp("old")
    archive = out / "old.tar"
    subprocess.run([git, "-C", str(REPO), "archive", "-o", str(archive), OLD, "src/chunkwise"], check=True)
    with tarfile.open(archive) as tar:
        tar.extractall(out, filter="data")
    return out / "src"


def _run(src: Path, action: str, db: str, folder: Path) -> dict:
    env = {**os.environ, "PYTHONPATH": str(src), "HF_HUB_OFFLINE": "1"}
    done = subprocess.run([sys.executable, "-c", SCRIPT, action, db, str(folder)], capture_output=True, text=True,
                          env=env, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def _docs(tmp_path: Path) -> Path:
    folder = tmp_path / "docs"
    (folder / "ops").mkdir(parents=True)
    (folder / "runbook.md").write_text(
        "---\ntitle: Runbook\nupdated_at: 2024-03-01\nversion: 2\n---\n# Runbook\n\n## Rollback\n\n"
        "To roll back the deploy, run the rollback job and page the owner.\n\n## Paging\n\n"
        "Page the on-call engineer through the pager rota.\n", encoding="utf-8")
    (folder / "ops" / "deploy.md").write_text(
        "# Deploy\n\nDeploys run nightly. A failed deploy is rolled back by the rollback job.\n\n"
        "Same text in two places: the rollback job.\n", encoding="utf-8")
    (folder / "ops" / "copy.md").write_text(
        "# Deploy\n\nDeploys run nightly. A failed deploy is rolled back by the rollback job.\n\n"
        "Same text in two places: the rollback job.\n", encoding="utf-8")
    return folder


def _same(before: dict, after: dict) -> None:
    assert after["chunks"] == before["chunks"]
    assert after["vectors"] == before["vectors"] and before["vectors"]
    assert after["documents"] == before["documents"]
    assert after["hits"] == before["hits"] and before["hits"]


def test_a_sqlite_store_from_6dedb40_opens_without_loss(old_src, tmp_path):
    folder = _docs(tmp_path)
    db = str(tmp_path / "old.db")
    before = _run(old_src, "ingest", db, folder)
    after = _run(SRC, "open", db, folder)  # opened for writing: any migration runs
    _same(before, after)
    from chunkwise import api

    stats = api.ingest([folder], db, embedder="hashing", acl=["sre"])
    assert (stats.added, stats.metadata_updated, stats.removed, stats.embedded) == (0, 0, 0, 0)


def test_a_postgresql_store_from_6dedb40_is_migrated_without_loss(old_src, pg_databases, tmp_path):
    psycopg = pytest.importorskip("psycopg")
    url = pg_databases.new()
    with psycopg.connect(url, autocommit=True) as con:
        name = con.execute("SELECT current_database()").fetchone()[0]
        con.execute(f'ALTER DATABASE "{name}" RESET search_path')  # a database as users have it
    folder = _docs(tmp_path)
    before = _run(old_src, "ingest", url, folder)
    with psycopg.connect(url, autocommit=True) as con:
        assert con.execute("SELECT max(number) FROM public.migrations").fetchone()[0] == 6
        assert con.execute("SELECT data_type FROM information_schema.columns WHERE table_schema = 'public'"
                           " AND table_name = 'chunks' AND column_name = 'record'").fetchone()[0] == "text"
    after = _run(SRC, "open", url, folder)
    _same(before, after)

    from chunkwise import api
    from chunkwise.store.postgres.pg_schema import LATEST
    from chunkwise.store.postgres.pg_status import status

    state = status(url)
    assert (state["schema"], state["placed"], state["version"], state["pending"]) == ("public", "legacy", LATEST, [])
    with psycopg.connect(url, autocommit=True) as con:
        types = dict(con.execute("SELECT table_name || '.' || column_name, data_type FROM information_schema.columns"
                                 " WHERE table_schema = 'public'").fetchall())
        assert types["chunks.record"] == "jsonb" and "chunks.vector" not in types
        assert types["documents.ingested_at"] == types["runs.started_at"] == "timestamp with time zone"
        assert types["documents.updated"] == "timestamp with time zone" and types["runs.stats"] == "jsonb"
        # each vector once: as many vector rows as distinct embedded texts (the copy shares one)
        distinct, vectors = con.execute("SELECT (SELECT count(DISTINCT embed_key) FROM public.chunks),"
                                        " (SELECT count(*) FROM public.vectors)").fetchone()
        assert distinct == vectors and vectors < len(after["chunks"])
        assert con.execute("SELECT updated FROM public.documents WHERE path = 'runbook.md'").fetchone()[0].year == 2024
        assert con.execute("SELECT 1 FROM pg_indexes WHERE indexname = 'vectors_hnsw'").fetchone()  # built by 7
        gin = con.execute("SELECT indexdef FROM pg_indexes WHERE indexname = 'chunks_record'").fetchone()[0]
        assert "gin" in gin and "jsonb_path_ops" in gin
        heading = con.execute("SELECT count(*) FROM public.chunks WHERE record @> '{\"heading_path\": [\"Runbook\"]}'"
                              ).fetchone()[0]
        assert heading >= 1
    stats = api.ingest([folder], url, embedder="hashing", acl=["sre"])
    assert (stats.added, stats.metadata_updated, stats.removed, stats.embedded) == (0, 0, 0, 0)
    assert _run(SRC, "dump", url, folder) == after
