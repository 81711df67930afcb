"""A small real store for the integration tests: two documents readable by different groups,
ingested by the real CLI (hashing embedder, so dense and hybrid search work without a model)."""
import os
import subprocess
import sys
from pathlib import Path

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


