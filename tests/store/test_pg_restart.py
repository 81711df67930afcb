"""A PostgreSQL restart under a running command (issue 26, "Bad input and faults"): a real server of
its own (pgserver), restarted with ``pg_ctl restart -m fast`` (every connection cut) at a chosen
point of the command, run in process through the CLI's entry point. The command stops with one
line on stderr (no traceback) and exit code 1; what the store holds is whole (each stored document
has all its chunks and postings); running the command again finishes the job."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from pg_servers import OWN_DB, restart

from chunkwise.cli.main import main

pytest.importorskip("pgserver", reason="PostgreSQL tests need the pg extra: pip install -e '.[test]'")
DOCS = 12


def _docs(folder: Path) -> Path:
    folder.mkdir()
    for i in range(DOCS):
        (folder / f"d{i:02d}.md").write_text(f"# Report {i}\n\n" + "\n\n".join(
            f"Paragraph {j} of report {i} on harbour logistics and tide tables, item {j}." for j in range(20)))
    return folder


def _holdings(url: str) -> tuple[int, list]:
    """(documents stored, the documents whose chunks or postings are not all there)."""
    import psycopg

    with psycopg.connect(url) as con:
        con.execute("SET search_path = chunkwise, public")
        docs = con.execute("SELECT count(*) FROM documents").fetchone()[0]
        broken = con.execute(
            "SELECT d.doc_id FROM documents d LEFT JOIN chunks c ON c.doc_id = d.doc_id GROUP BY d.doc_id, d.chunk_count"
            " HAVING count(c.key) <> d.chunk_count OR d.chunk_count = 0").fetchall()
        broken += con.execute(
            "SELECT c.key FROM chunks c WHERE c.servable AND NOT EXISTS (SELECT 1 FROM postings p WHERE p.key = c.key)"
        ).fetchall()
    return docs, broken


def _one_line_error(capsys) -> str:
    err = capsys.readouterr().err.strip()
    assert "Traceback" not in err and len(err.splitlines()) == 1, err
    assert err.startswith("chunkwise: error: lost the connection to the PostgreSQL store") and "run the command again" in err
    return err


def test_a_restart_during_ingest_stops_cleanly_and_a_rerun_completes(own_pg, tmp_path, monkeypatch, capsys):
    from chunkwise.store.writing import DocumentWrites

    url = own_pg.get_uri(OWN_DB)
    docs = _docs(tmp_path / "docs")
    write, calls = DocumentWrites.write_document, []

    def restarting(self, *a, **k):  # the fifth document's write finds the server restarted
        calls.append(1)
        if len(calls) == 5:
            restart(own_pg)
        return write(self, *a, **k)

    monkeypatch.setattr(DocumentWrites, "write_document", restarting)
    args = ["ingest", str(docs), "--db", url, "--embedder", "none", "--workers", "1", "--acl", "team"]
    assert main(args) == 1
    _one_line_error(capsys)
    stored, broken = _holdings(url)
    assert stored == 4 and broken == []  # the four committed documents, whole; nothing of the fifth

    monkeypatch.setattr(DocumentWrites, "write_document", write)
    assert main(args) == 0
    stored, broken = _holdings(url)
    assert stored == DOCS and broken == []
    assert main(["search", "harbour tide", "--db", url, "--groups", "team", "--mode", "bm25", "--json"]) == 0
    assert '"chunk_id"' in capsys.readouterr().out


def test_a_restart_during_search_gives_one_line_and_the_next_search_works(own_pg, tmp_path, monkeypatch, capsys):
    from chunkwise.store.postgres.postgres_read import PostgresReads

    url = own_pg.get_uri(OWN_DB)
    assert main(["ingest", str(_docs(tmp_path / "docs")), "--db", url, "--embedder", "none", "--acl", "team"]) == 0
    capsys.readouterr()
    stats = PostgresReads.lexical_stats

    def restarting(self, *a, **k):  # the ranking's first statement finds the server restarted
        restart(own_pg)
        return stats(self, *a, **k)

    monkeypatch.setattr(PostgresReads, "lexical_stats", restarting)
    search = ["search", "harbour tide", "--db", url, "--groups", "team", "--mode", "bm25"]
    assert main(search) == 1
    _one_line_error(capsys)
    monkeypatch.setattr(PostgresReads, "lexical_stats", stats)
    assert main(search + ["--json"]) == 0
    assert '"chunk_id"' in capsys.readouterr().out


def _state(url: str) -> dict:
    """What a store holds, by content (row keys, timestamps and run ids differ between two stores):
    documents, chunks, vectors, postings, the dense rows, the summed statistics and version links."""
    import psycopg

    with psycopg.connect(url) as con:
        con.execute("SET search_path = chunkwise, public")

        def rows(sql: str) -> list:
            return sorted(tuple(r) for r in con.execute(sql).fetchall())

        return {
            "documents": rows("SELECT doc_id, path, source_version, inputs, chunk_count, title FROM documents"),
            "chunks": rows("SELECT chunk_id, doc_id, embed_key, acl, quality, servable, lex_len, text FROM chunks"),
            "vectors": rows("SELECT embed_key, model, dim FROM vectors"),
            "postings": rows("SELECT p.lexeme, c.chunk_id, p.len, p.f0, p.f1, p.f2 FROM postings p"
                             " JOIN chunks c ON c.key = p.key"),
            "term_df": rows("SELECT t.lexeme, a.acl, sum(t.df) FROM term_df t JOIN acl_sets a ON a.id = t.set_id"
                            " GROUP BY t.lexeme, a.acl HAVING sum(t.df) <> 0"),
            "dense": rows("SELECT c.chunk_id, d.acl FROM dense d JOIN chunks c ON c.key = d.key"),
            "acl_stats": rows("SELECT acl, sum(rows), sum(total_len) FROM acl_stats GROUP BY acl"
                              " HAVING sum(rows) <> 0 OR sum(total_len) <> 0"),
            "links": rows("SELECT newer, older, how FROM version_links"),
            "settings": rows("SELECT key, value FROM settings"),
        }


def _children() -> list:
    """This process's live children, but multiprocessing's resource tracker (one per process, for its
    lifetime: not a run's)."""
    import psutil

    return [p for p in psutil.Process().children(recursive=True) if p.is_running() and p.status() != "zombie"
            and "resource_tracker" not in " ".join(p.cmdline())]


@pytest.mark.parametrize("where", ["write", "walk"])
def test_a_restart_during_a_two_worker_ingest_leaves_whole_documents_and_a_rerun_converges(
        own_pg, tmp_path, monkeypatch, capsys, where):
    """``--workers 2`` (documents prepared and embedded, with ``hashing``, in two worker processes; the
    main process walks the folder and writes): the restart cuts the main process's connection as it
    starts the fifth document's write, or as the walk asks whether the eighth file's id is free
    (files in flight in the workers). The run stops with one line, its workers are gone, a search
    right then serves only whole documents, and the re-run ends in the state a clean run on another
    database reaches."""
    import importlib

    import psycopg

    from chunkwise.store.postgres.postgres import PostgresStore
    from chunkwise.store.writing import DocumentWrites

    url = own_pg.get_uri(OWN_DB)
    with psycopg.connect(own_pg.get_uri(), autocommit=True) as admin:
        admin.execute("CREATE DATABASE own_clean")
    clean = own_pg.get_uri("own_clean")
    docs = _docs(tmp_path / "docs")
    before = {p.pid for p in _children()}
    owner, method, nth = (DocumentWrites, "write_document", 5) if where == "write" else (PostgresStore, "doc_id_owner", 8)
    real, calls = getattr(owner, method), []

    def restarting(self, *a, **k):  # the nth call finds the server restarted
        calls.append(1)
        if len(calls) == nth:
            restart(own_pg)
        return real(self, *a, **k)

    def ingest(db: str) -> list[str]:
        return ["ingest", str(docs), "--db", db, "--embedder", "hashing", "--workers", "2", "--acl", "team"]

    monkeypatch.setattr(owner, method, restarting)
    monkeypatch.setattr(importlib.import_module("chunkwise.pipeline.ingest"), "largest_first", iter)  # the walk drawn file by file, as the pool asks
    assert main(ingest(url)) == 1
    _one_line_error(capsys)
    left = [(p.pid, p.cmdline()) for p in _children() if p.pid not in before]
    assert not left, f"the run's worker processes outlived it: {left}"
    stored, broken = _holdings(url)
    assert broken == [] and stored == (4 if where == "write" else stored) < DOCS
    if stored:
        search = ["search", "harbour tide", "--db", url, "--groups", "team", "--k", "50", "--json"]
        assert main(search) == 0  # the default mode: BM25, as no run has recorded a model yet
        hits = json.loads(capsys.readouterr().out)["results"]
        with psycopg.connect(url) as con:
            whole = {d for d, in con.execute("SELECT doc_id FROM chunkwise.documents").fetchall()}
        assert hits and {h["doc_id"] for h in hits} <= whole
        assert main(search + ["--mode", "dense"]) == 2  # says why, not "ingested with --embedder none"
        assert "no ingest has finished on this store yet" in json.loads(capsys.readouterr().out)["error"]

    monkeypatch.setattr(owner, method, real)
    assert main(ingest(url)) == 0
    assert _holdings(url) == (DOCS, [])
    assert main(ingest(clean)) == 0
    capsys.readouterr()
    resumed, fresh = _state(url), _state(clean)
    assert resumed == fresh and len(fresh["chunks"]) > DOCS and fresh["vectors"] and fresh["postings"]
