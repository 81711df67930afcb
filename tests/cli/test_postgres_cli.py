"""``--db postgresql://...`` through every command that takes --db (ingest, search, check, manifest,
serve's engine), on the session's real PostgreSQL; and the foreseeable failures (server down,
database missing, the pg extra not installed) as one clean line with exit code 2."""
import json
import subprocess
import sys

import pytest

from chunkwise.cli.main import main
from test_store_guards import clean, cli, corpus


def run_json(capsys, *args):
    code = main([*args, "--json"])
    out = capsys.readouterr().out
    assert code == 0, out
    return json.loads(out.splitlines()[0]) if out.strip().startswith("{") else [json.loads(x) for x in out.splitlines()]


def test_ingest_search_check_manifest_on_postgres(tmp_path, pg_url, capsys):
    root = corpus(tmp_path / "kb")
    stats = run_json(capsys, "ingest", str(root), "--db", pg_url, "--acl", "staff", "--embedder", "hashing")
    assert stats["added"] > 0
    again = run_json(capsys, "ingest", str(root), "--db", pg_url, "--acl", "staff", "--embedder", "hashing")
    assert again["added"] == again["removed"] == 0  # idempotent on the server too
    found = run_json(capsys, "search", "topic1 rollback", "--db", pg_url, "--groups", "staff", "--k", "2")
    assert found["results"] and found["results"][0]["doc_id"] == "doc1.md"
    nobody = run_json(capsys, "search", "topic1 rollback", "--db", pg_url, "--groups", "finance")
    assert nobody["results"] == []
    report = run_json(capsys, "check", "--db", pg_url)
    assert report["ok"] and report["chunks"] == stats["added"]
    manifest = run_json(capsys, "manifest", "--db", pg_url)
    assert {d["doc_id"] for d in manifest["documents"]} == {"doc0.md", "doc1.md", "doc2.md"}


def test_serve_engine_opens_a_postgres_store(tmp_path, pg_url):
    from chunkwise.serve.engine import Engine
    from chunkwise.pipeline import ingest

    ingest([corpus(tmp_path / "kb")], pg_url, acl=("staff",), embedder="hashing")
    engine = Engine(pg_url)
    try:
        engine.warm()
        assert engine.retriever.native and engine.retriever.cache.index is None  # nothing loaded into memory
        assert engine.search("topic2 ledger", ["staff"], k=1)["results"][0]["doc_id"] == "doc2.md"
    finally:
        engine.close() if hasattr(engine, "close") else engine.retriever.close()


@pytest.mark.parametrize("command", [["search", "q", "--groups", "a"], ["check"], ["manifest"], ["ingest", "."]])
def test_an_unreachable_server_is_one_clean_line(command, tmp_path):
    url = f"postgresql://nobody@/chunkwise?host={tmp_path}/no-server-here"
    line = clean(cli(*command, "--db", url), 2)
    assert "cannot connect to" in line and "postgresql://" in line


def test_a_missing_database_and_a_password_in_the_url(pg_server, capsys):
    url = pg_server.get_uri("no_such_db").replace("postgres:@", "postgres:s3cret@")
    assert main(["check", "--db", url]) == 2
    err = capsys.readouterr().err
    assert "no_such_db" in err and "s3cret" not in err and err.count("\n") == 1


def test_search_on_an_empty_database_says_how_to_create_the_store(pg_url, capsys):
    assert main(["search", "q", "--db", pg_url, "--groups", "a"]) == 2
    err = capsys.readouterr().err
    assert "no chunkwise store" in err and "chunkwise ingest" in err


def test_without_the_pg_extra_the_hint_says_what_to_install(tmp_path):
    # psycopg made unimportable in a child process: what a user without the extra sees
    code = ("import sys; sys.modules['psycopg'] = None; from chunkwise.cli.main import main; "
            "sys.exit(main(['check', '--db', 'postgresql://x@/db']))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env={**__import__('os').environ, "PYTHONPATH": cli.__globals__["SRC"]})
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert "chunkwise[pg]" in out.stderr and out.stderr.count("\n") == 1
