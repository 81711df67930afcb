"""A second ingest into a store while a long MiniLM ingest runs: neither fails nor corrupts the store,
and searches keep answering throughout (embedding runs outside the write transaction, so the lock is
held only for each document's short write)."""
from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import time

import pytest

pytest.importorskip("sentence_transformers")

SRC = os.path.join(os.path.dirname(__file__), "..", "..", "src")
WORDS = "rollback deploy page on-call minutes ledger payout refund dispute window freeze owner".split()


def corpus(root, n, tag):
    root.mkdir(parents=True)
    for i in range(n):
        body = "\n\n".join(f"## Part {s}\n\n" + " ".join(WORDS[(i + s + k) % len(WORDS)] for k in range(120)) + "."
                           for s in range(4))
        (root / f"{tag}{i:03d}.md").write_text(f"# {tag} {i}\n\n{body}\n", encoding="utf-8")


def ingest(root, db):
    env = {**os.environ, "PYTHONPATH": os.path.abspath(SRC), "HF_HUB_OFFLINE": "1"}
    return subprocess.Popen([sys.executable, "-m", "chunkwise.cli.main", "ingest", str(root), "--db", str(db),
                             "--acl", "staff", "--embedder", "minilm", "--size", "128", "--workers", "2", "--json"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)


def consistent(db) -> dict[str, int]:
    con = sqlite3.connect(db, isolation_level=None)
    try:
        assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        # One read transaction: the writer commits between two autocommit SELECTs (two snapshots
        # disagreed by the documents committed in between: a false "half written").
        con.execute("BEGIN")
        per_doc = dict(con.execute("SELECT doc_id, chunk_count FROM documents"))
        actual = dict(con.execute("SELECT doc_id, count(*) FROM chunks GROUP BY doc_id"))
        assert {d: n for d, n in per_doc.items() if n} == actual, "a document was half written"
        assert con.execute("SELECT count(*) FROM chunks_fts").fetchone()[0] == sum(actual.values())
        return actual
    finally:
        con.close()


def _written(db) -> dict[str, int]:
    """``consistent``, or nothing yet while the first run is still creating the schema."""
    try:
        return consistent(db)
    except sqlite3.OperationalError as exc:
        if "no such table" in str(exc):
            return {}
        raise


@pytest.mark.slow
def test_second_ingest_during_a_long_minilm_ingest_waits_and_searches_keep_working(tmp_path):
    from chunkwise import api

    corpus(tmp_path / "long", 30, "long")
    corpus(tmp_path / "short", 10, "short")
    db = tmp_path / "index.db"
    first = ingest(tmp_path / "long", db)
    while not (db.exists() and _written(db)):  # the first documents are in
        assert first.poll() is None, first.communicate()
        time.sleep(0.2)
    second = ingest(tmp_path / "short", db)
    searches, hits, failures = 0, 0, []
    while first.poll() is None or second.poll() is None:
        try:
            result = api.search(db, "freeze the ledger", ["staff"], k=3, mode="bm25")
            searches += 1
            hits += bool(result.passages)
        except Exception as exc:  # noqa: BLE001 - any error is the failure under test
            failures.append(repr(exc))
        time.sleep(0.05)
    outs = [p.communicate() + (p.returncode,) for p in (first, second)]
    for out, err, code in outs:
        assert code == 0, err
        assert "Traceback" not in err
    assert not failures, failures[:3]
    assert searches >= 5 and hits == searches
    stats = [json.loads(out) for out, _, _ in outs]
    chunks = consistent(db)
    assert len(chunks) == 40 and sum(chunks.values()) == stats[0]["added"] + stats[1]["added"]
    assert api.search(db, "freeze", ["staff"], k=3, mode="dense").passages
