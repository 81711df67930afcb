"""Session fixtures for the integration tests (see integration_fixtures.py)."""
import os
from pathlib import Path

import pytest

os.environ.setdefault("HAYSTACK_TELEMETRY_ENABLED", "False")  # Haystack phones home by default: no network in tests

from integration_fixtures import CHUNK_OPTIONS, PAYROLL, RUNBOOK, cli


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
