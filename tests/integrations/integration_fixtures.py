"""Shared by the integration tests (imported by each; a conftest.py here would shadow tests/conftest.py):
a small real store for the integration tests: two documents readable by different groups,
ingested by the real CLI (hashing embedder, so dense and hybrid search work without a model)."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

os.environ.setdefault("HAYSTACK_TELEMETRY_ENABLED", "False")  # Haystack phones home by default: no network in tests

ROOT = Path(__file__).resolve().parents[2]
CHUNK_OPTIONS = {"strategy": "auto", "size": 64}

RUNBOOK = """---
title: Deploy runbook
acl: [sre]
---
# Deploys

## Rolling back

To roll back a bad deploy, run `deployctl revert` with the release id. Yes.

Confirm the error rate falls within five minutes. Yes.

## Freezes

Only the release manager may lift a deploy freeze. Yes.
"""
PAYROLL = """---
title: Payroll
acl: [finance]
---
# Payroll

## Corrections

A payroll rollback needs the finance controller's approval and a second signature.
"""


def cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    return subprocess.run([sys.executable, "-m", "chunkwise.cli.main", *args], capture_output=True, text=True,
                          env=env, cwd=cwd, timeout=600)


@pytest.fixture(scope="session")
def docs(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("docs")
    (folder / "runbook.md").write_text(RUNBOOK, encoding="utf-8")
    (folder / "payroll.md").write_text(PAYROLL, encoding="utf-8")
    return folder


@pytest.fixture(scope="session")
def store(docs, tmp_path_factory) -> Path:
    db = tmp_path_factory.mktemp("store") / "index.db"
    r = cli("ingest", str(docs), "--db", str(db), "--embedder", "hashing", "--strategy", CHUNK_OPTIONS["strategy"],
            "--size", str(CHUNK_OPTIONS["size"]))
    assert r.returncode == 0, r.stderr
    return db
