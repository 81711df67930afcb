"""Issue 25 item 11: an ingest killed mid-run leaves nothing the gate calls damage. Each document's
transaction drops the vectors its old chunks used that no chunk uses any more, so after a SIGKILL
between two documents (or after removing vanished files, before the run's end) ``check`` passes.
The kill is real: the ingest process sends itself SIGKILL at a chosen point, on both backends."""
import json
import os
import signal
import subprocess
import sys
import textwrap

import pytest

from backends import consistent, count

pytestmark = pytest.mark.skipif(os.name != "posix", reason="SIGKILL")

SRC = os.path.join(os.path.dirname(__file__), "..", "..", "src")

# Runs the real CLI in a process that kills itself (SIGKILL: no cleanup, no finish_run) at a point.
KILLER = textwrap.dedent("""
    import importlib, os, signal, sys
    from chunkwise.pipeline.write import WriteStage
    from chunkwise.cli.main import main

    point, after = sys.argv[1], int(sys.argv[2])
    written = 0
    if point == "write":
        original = WriteStage.write
        def write(self, *args, **kwargs):
            global written
            original(self, *args, **kwargs)
            written += 1
            if written == after:
                os.kill(os.getpid(), signal.SIGKILL)
        WriteStage.write = write
    else:  # after the vanished files were removed, before the version links and the run's end
        def derive_links(*args, **kwargs):
            os.kill(os.getpid(), signal.SIGKILL)
        importlib.import_module("chunkwise.pipeline.ingest").derive_links = derive_links
    sys.exit(main(sys.argv[3:]))
""")


def corpus(root, n, edit=""):
    root.mkdir(exist_ok=True)
    for i in range(n):
        body = "\n\n".join(f"Paragraph {p} of doc {i}{edit}: " + " ".join(f"ledger{(i * p + j) % 97}" for j in range(40))
                           for p in range(4))
        (root / f"doc{i:02d}.md").write_text(f"# Doc {i}\n\n{body}\n", encoding="utf-8")


def args(root, db):
    return ["ingest", str(root), "--db", str(db), "--acl", "staff", "--embedder", "hashing", "--size", "64", "--header", "none",
            "--workers", "1", "--json"]


def env():
    return {**os.environ, "PYTHONPATH": os.path.abspath(SRC), "HF_HUB_OFFLINE": "1", "TIKTOKEN_CACHE_DIR": ""}


def killed(point, after, argv):
    proc = subprocess.run([sys.executable, "-c", KILLER, point, str(after), *argv], capture_output=True, text=True,
                          env=env(), timeout=300)
    assert proc.returncode == -signal.SIGKILL, (proc.returncode, proc.stderr[-2000:])


def check(db):
    out = subprocess.run([sys.executable, "-m", "chunkwise.cli.main", "check", "--db", str(db), "--json"],
                         capture_output=True, text=True, env=env(), timeout=300)
    return out.returncode, json.loads(out.stdout)


@pytest.mark.parametrize("point", ["write", "removed"])
def test_a_killed_ingest_leaves_no_vector_the_gate_calls_damage(tmp_path, new_location, point):
    root, db = tmp_path / "docs", new_location()
    corpus(root, 12)
    assert subprocess.run([sys.executable, "-m", "chunkwise.cli.main", *args(root, db)], env=env(),
                          capture_output=True).returncode == 0
    vectors_before = count(db, "vectors")
    if point == "write":
        corpus(root, 12, edit=" (edited)")  # every chunk changes: each rewritten document replaces its vectors
    else:
        for path in sorted(root.iterdir())[:6]:  # half the files vanish
            path.unlink()
    killed(point, 5, args(root, db))
    consistent(db)
    code, report = check(db)
    assert report["orphan_vectors"] == 0 and code == 0, report["failures"]
    if point == "removed":
        assert count(db, "vectors") < vectors_before  # the removed documents' vectors went with them


def test_a_chunk_moved_to_a_document_written_later_keeps_its_vector(tmp_path, new_location):
    """Dropping a vector inside one document's transaction must not leave a later document that
    counted on it (its text moved there) without one: the write repairs it."""
    root, db = tmp_path / "docs", new_location()
    root.mkdir()
    shared = "The payout ledger closes at noon and refunds wait for the next window. " * 3
    (root / "a.md").write_text(f"# A\n\n{shared}\n\nOnly in A.\n", encoding="utf-8")
    (root / "b.md").write_text("# B\n\nOnly in B.\n", encoding="utf-8")
    run = [sys.executable, "-m", "chunkwise.cli.main", *args(root, db)]
    assert subprocess.run(run, env=env(), capture_output=True).returncode == 0
    (root / "a.md").write_text("# A\n\nOnly in A.\n", encoding="utf-8")
    (root / "b.md").write_text(f"# B\n\n{shared}\n\nOnly in B.\n", encoding="utf-8")
    assert subprocess.run(run, env=env(), capture_output=True).returncode == 0
    code, report = check(db)
    assert code == 0 and report["missing_vectors"] == 0 and report["orphan_vectors"] == 0, report
