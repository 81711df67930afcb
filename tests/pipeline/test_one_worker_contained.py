"""Issue 25 item 9: with one worker too, files are parsed in a worker process, never in the process
that runs the ingest: a file that crashes its parser costs that file, not the run."""
import json
import os
import subprocess
import sys

import pytest

pytest.importorskip("markdown_it_pyrs")

SRC = os.path.join(os.path.dirname(__file__), "..", "..", "src")
NESTED = "> " * 60_000 + "deep\n"  # markdown-it-pyrs overflows its stack (tests/sandbox/hostile.py)


def test_a_parser_crash_with_one_worker_is_that_files_error(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "crash.md").write_text(NESTED, encoding="utf-8")
    (docs / "fine.md").write_text("# Fine\n\nAn ordinary file about the ledger.\n", encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": os.path.abspath(SRC), "HF_HUB_OFFLINE": "1", "TIKTOKEN_CACHE_DIR": ""}
    out = subprocess.run([sys.executable, "-m", "chunkwise.cli.main", "ingest", str(docs), "--db",
                          str(tmp_path / "s.db"), "--acl", "staff", "--embedder", "hashing", "--workers", "1", "--json"],
                         capture_output=True, text=True, env=env, timeout=300)
    assert out.returncode == 1, (out.returncode, out.stderr[-2000:])
    stats = json.loads(out.stdout)
    assert [e["path"] for e in stats["errors"]] == ["crash.md"] and "crash" in stats["errors"][0]["error"]
    assert stats["in_store"] >= 1
