"""Kill ingest with SIGKILL at random points: the store stays consistent, no document is half written,
and a re-run converges to the state of a clean run. Two ingests at once do not corrupt it. On
SQLite and on PostgreSQL (the ``backend`` parameter; the server is never killed, the ingest is)."""
import os
import random
import signal
import subprocess
import sys
import time

import pytest

from backends import consistent, is_pg, query

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
    """The store is whole after every kill; its chunk ids (tests/backends.py). A kill before the
    first commit leaves an SQLite file with no tables at all (the migrations run in one transaction):
    an empty store, which the next ingest migrates and a reader refuses as "not a chunkwise store"."""
    if not is_pg(db) and not query(db, "SELECT name FROM sqlite_master WHERE type = 'table'"):
        assert query(db, "PRAGMA integrity_check")[0][0] == "ok"
        return set()
    return consistent(db)


def exists(db) -> bool:
    return is_pg(db) or os.path.exists(db)


def test_sigkill_at_random_points_then_rerun_converges(tmp_path, new_location):
    root = tmp_path / "docs"
    corpus(root)
    crashed = new_location()
    start = time.perf_counter()
    subprocess.run(ingest_cmd(root, new_location()), check=True, capture_output=True)
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
        if exists(crashed):
            state(crashed)  # consistent after every kill
    assert kills >= 4
    subprocess.run(ingest_cmd(root, crashed), check=True, capture_output=True)
    clean = new_location()
    subprocess.run(ingest_cmd(root, clean), check=True, capture_output=True)
    assert state(crashed) == state(clean)


def test_two_ingests_at_once_do_not_corrupt(tmp_path, new_location):
    root = tmp_path / "docs"
    corpus(root, 60)
    db = new_location()
    procs = [subprocess.Popen(ingest_cmd(root, db), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(2)]
    results = [p.communicate(timeout=300) + (p.returncode,) for p in procs]
    for out, err, code in results:
        assert code == 0 or "another ingest" in out + err, (out[-2000:], err)  # --json: the error is on stdout
    final = subprocess.run(ingest_cmd(root, db), check=True, capture_output=True, text=True)
    assert '"added": 0' in final.stdout and '"removed": 0' in final.stdout
    clean = new_location()
    subprocess.run(ingest_cmd(root, clean), check=True, capture_output=True)
    assert state(db) == state(clean)
