"""Kill ingest with SIGKILL at random points: the store stays consistent, no document is half written,
and a re-run converges to the state of a clean run. Two ingests at once do not corrupt it."""
import os
import random
import signal
import sqlite3
import subprocess
import sys
import time

import pytest

pytestmark = pytest.mark.skipif(os.name != "posix", reason="SIGKILL")


def corpus(root, n=120):
    root.mkdir()
    rng = random.Random(7)
    words = "rollback deploy page on-call minutes ledger payout refund dispute window freeze owner".split()
    for i in range(n):
        sections = []
        for s in range(4):
            body = " ".join(rng.choice(words) for _ in range(rng.randint(30, 90)))
            sections.append(f"## Section {s} of doc {i}\n\n{body.capitalize()}.\n")
        (root / f"doc{i:03d}.md").write_text(f"# Doc {i}\n\n" + "\n".join(sections), encoding="utf-8")


def ingest_cmd(root, db):
    return [sys.executable, "-m", "chunkwise.cli.main", "ingest", str(root), "--db", str(db), "--acl", "staff",
            "--embedder", "hashing", "--size", "64", "--json"]


def state(db):
    con = sqlite3.connect(db)
    assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    per_doc = dict(con.execute("SELECT doc_id, chunk_count FROM documents"))
    actual = dict(con.execute("SELECT doc_id, count(*) FROM chunks GROUP BY doc_id"))
    assert {d: n for d, n in per_doc.items() if n} == actual, "a document was half written"
    fts = con.execute("SELECT count(*) FROM chunks_fts").fetchone()[0]
    assert fts == sum(actual.values())
    ids = {r[0] for r in con.execute("SELECT chunk_id FROM chunks")}
    con.close()
    return ids


def test_sigkill_at_random_points_then_rerun_converges(tmp_path):
    root = tmp_path / "docs"
    corpus(root)
    crashed = tmp_path / "crashed.db"
    start = time.perf_counter()
    subprocess.run(ingest_cmd(root, tmp_path / "timing.db"), check=True, capture_output=True)
    full = time.perf_counter() - start
    rng = random.Random(11)
    kills = 0
    for round_ in range(8):
        for path in rng.sample(sorted(root.iterdir()), 40):  # every round has real work to interrupt
            path.write_text(path.read_text(encoding="utf-8") + f"\nEdit {round_}: freeze the ledger.\n",
                            encoding="utf-8")
        proc = subprocess.Popen(ingest_cmd(root, crashed), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(rng.uniform(0.2, 0.9) * full)
        if proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
            kills += 1
        proc.wait()
        if crashed.exists():
            state(crashed)  # consistent after every kill
    assert kills >= 4
    subprocess.run(ingest_cmd(root, crashed), check=True, capture_output=True)
    clean = tmp_path / "clean.db"
    subprocess.run(ingest_cmd(root, clean), check=True, capture_output=True)
    assert state(crashed) == state(clean)


def test_two_ingests_at_once_do_not_corrupt(tmp_path):
    root = tmp_path / "docs"
    corpus(root, 60)
    db = tmp_path / "index.db"
    procs = [subprocess.Popen(ingest_cmd(root, db), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(2)]
    results = [p.communicate(timeout=300) + (p.returncode,) for p in procs]
    for out, err, code in results:
        assert code == 0 or "another ingest" in err, err
    final = subprocess.run(ingest_cmd(root, db), check=True, capture_output=True, text=True)
    assert '"added": 0' in final.stdout and '"removed": 0' in final.stdout
    clean = tmp_path / "clean.db"
    subprocess.run(ingest_cmd(root, clean), check=True, capture_output=True)
    assert state(db) == state(clean)
