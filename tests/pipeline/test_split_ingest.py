"""A big PDF shared among the workers (``pipeline/split.py``): 1 and 2 workers build the same store
(sorted chunk ids and a hash of every record), and the PDF really is split for 2 workers."""
from __future__ import annotations

import hashlib
import sqlite3
import sys
from pathlib import Path

import pytest

pytest.importorskip("pypdf")
pytest.importorskip("fpdf")
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "extract"))

from pdf_fixtures import write_long_pdf  # noqa: E402

from chunkwise.config import ChunkConfig  # noqa: E402
from chunkwise.embed.hashing import HashingEmbedder  # noqa: E402
from chunkwise.pipeline import ingest, split  # noqa: E402
from chunkwise.pipeline.prepare import PrepareTask  # noqa: E402
from chunkwise.sandbox import Fanout, Limits  # noqa: E402

NOW = "2026-01-01T00:00:00Z"
CONFIG = ChunkConfig(strategy="auto", size=64)


def store(db) -> tuple[list[str], str, list]:
    """Sorted chunk ids, one hash over every chunk row in id order, the documents."""
    con = sqlite3.connect(db)
    try:
        rows = con.execute("SELECT * FROM chunks ORDER BY chunk_id").fetchall()
        docs = con.execute("SELECT doc_id, source_version, chunk_count FROM documents ORDER BY doc_id").fetchall()
    finally:
        con.close()
    return [r[0] for r in rows], hashlib.sha256(repr(rows).encode()).hexdigest(), docs


@pytest.fixture(scope="module")
def docs(tmp_path_factory):
    root = tmp_path_factory.mktemp("split-docs")
    write_long_pdf(root / "long.pdf", pages=64)
    write_long_pdf(root / "short.pdf", pages=20)  # too few pages to split
    for i in range(6):
        (root / f"note{i}.md").write_text(f"# Note {i}\n\nThe harbour ledger {i} closes at noon.\n", encoding="utf-8")
    return root


def test_the_long_pdf_is_split_for_two_workers_and_not_for_one(docs):
    def task(name):
        path = docs / name
        return PrepareTask(str(path), name, name, "application/pdf", hashlib.sha256(path.read_bytes()).hexdigest(),
                           path.stat().st_size)

    assert split.plan(task("long.pdf"), 1) is None
    fan = split.plan(task("long.pdf"), 2)
    assert isinstance(fan, Fanout) and [(p.first, p.last) for p in fan.parts] == [(0, 16), (16, 32), (32, 48), (48, 64)]
    assert split.plan(task("short.pdf"), 2) is None


def test_one_and_two_workers_build_the_same_store(docs, tmp_path):
    kw = dict(embedder=HashingEmbedder(), acl=("staff",), now=NOW, limits=Limits(memory_mb=1024, seconds=120))
    one = ingest([docs], tmp_path / "one.db", CONFIG, workers=1, **kw)
    two = ingest([docs], tmp_path / "two.db", CONFIG, workers=2, **kw)
    assert not one.errors and one.added > 200
    assert one.to_dict() == two.to_dict()
    assert store(tmp_path / "one.db") == store(tmp_path / "two.db")


def test_a_pdf_changed_while_its_parts_are_read_is_that_files_error(docs, tmp_path):
    path = tmp_path / "long.pdf"
    path.write_bytes((docs / "long.pdf").read_bytes())
    task = PrepareTask(str(path), "long.pdf", "long.pdf", "application/pdf", "0" * 64, path.stat().st_size)
    with pytest.raises(Exception, match="changed while it was being read"):
        split.read(task)
