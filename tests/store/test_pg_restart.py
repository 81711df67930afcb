"""A PostgreSQL restart under a running command (issue 26, "Bad input and faults"): a real server of
its own (pgserver), restarted with ``pg_ctl restart -m fast`` (every connection cut) at a chosen
point of the command, run in process through the CLI's entry point. The command stops with one
line on stderr (no traceback) and exit code 1; what the store holds is whole (each stored document
has all its chunks and postings); running the command again finishes the job."""
from __future__ import annotations

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
    write, calls = DocumentWrites.write_streamed, []

    def restarting(self, *a, **k):  # the fifth document's write finds the server restarted
        calls.append(1)
        if len(calls) == 5:
            restart(own_pg)
        return write(self, *a, **k)

    monkeypatch.setattr(DocumentWrites, "write_streamed", restarting)
    args = ["ingest", str(docs), "--db", url, "--embedder", "none", "--workers", "1", "--acl", "team"]
    assert main(args) == 1
    _one_line_error(capsys)
    stored, broken = _holdings(url)
    assert stored == 4 and broken == []  # the four committed documents, whole; nothing of the fifth

    monkeypatch.setattr(DocumentWrites, "write_streamed", write)
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
