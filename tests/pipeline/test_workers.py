"""``ingest --workers``: prepare in contained processes; the store is the same as with one worker,
and a file that crashes, panics or hangs its worker is that file's error only."""
from __future__ import annotations

import json
import re
from array import array
import sqlite3
import subprocess
import sys

import pytest

from chunkwise.config import ChunkConfig
from chunkwise.embed.hashing import HashingEmbedder
from chunkwise.pipeline import ingest
from chunkwise.sandbox import Limits

pytest.importorskip("markdown_it_pyrs")

NOW = "2026-01-01T00:00:00Z"
CONFIG = ChunkConfig(strategy="auto", size=64)
NESTED = "> " * 60_000 + "deep\n"                      # segfaults markdown-it-pyrs
PANIC = "| a |\n|---|\n| The regex [^`]+ matches. |\n"  # a Rust panic (BaseException)


def corpus(root, n=24):
    for i in range(n):
        sub = root / f"part{i % 3}"
        sub.mkdir(parents=True, exist_ok=True)
        body = "\n\n".join(f"## Step {s}\n\nRun the rollback for service {i} within {s + 5} minutes; "
                           f"page the owner of ledger {i * s} when it fails." for s in range(1 + i % 5))
        (sub / f"doc{i:02d}.md").write_text(f"# Runbook {i}\n\n{body}\n", encoding="utf-8")


def content(db) -> dict:
    """Everything a search can see: chunks (all columns), documents, vectors; run times aside."""
    con = sqlite3.connect(db)
    try:
        chunks = con.execute("SELECT * FROM chunks ORDER BY chunk_id").fetchall()
        docs = con.execute("SELECT doc_id, source_version, chunk_count FROM documents ORDER BY doc_id").fetchall()
        vectors = con.execute("SELECT * FROM vectors ORDER BY 1").fetchall()
    finally:
        con.close()
    return {"chunks": chunks, "documents": docs, "vectors": vectors}


def run(root, db, workers, **kw):
    return ingest([root], db, CONFIG, embedder=HashingEmbedder(), acl=("staff",), now=NOW, workers=workers,
                  limits=kw.pop("limits", Limits(memory_mb=512, seconds=60)), **kw)


def test_two_workers_write_the_same_store_as_one(tmp_path):
    corpus(tmp_path / "docs")
    one, two = run(tmp_path / "docs", tmp_path / "one.db", 1), run(tmp_path / "docs", tmp_path / "two.db", 2)
    assert one.to_dict() == two.to_dict() and one.added > 24 and not one.errors
    assert content(tmp_path / "one.db") == content(tmp_path / "two.db")


class Costly(HashingEmbedder):
    """The same vectors from an embedder that is not ``cheap``: embedded by the embed stage."""

    cheap = False

    def __reduce__(self):
        return (Costly, ())


def test_vectors_made_in_the_workers_are_the_embed_stages(tmp_path):
    """A cheap embedder runs where each document is prepared (a worker) and its vectors travel with
    the records: the store holds byte-identical vectors to the embed stage's, with the same counts."""
    from chunkwise.pipeline.prepare import Preparer, PrepareSettings, PrepareTask
    from chunkwise.sources import iter_sources

    corpus(tmp_path / "docs")
    staged = ingest([tmp_path / "docs"], tmp_path / "staged.db", CONFIG, embedder=Costly(), acl=("staff",), now=NOW,
                    workers=2)
    local = run(tmp_path / "docs", tmp_path / "local.db", 2)
    assert local.to_dict() == staged.to_dict() and local.embedded == local.added > 24
    assert content(tmp_path / "local.db") == content(tmp_path / "staged.db")
    src = next(s for s in iter_sources([tmp_path / "docs"]) if s.doc_id.endswith("doc04.md"))
    prepared = Preparer(PrepareSettings(CONFIG, "hashing-384@1", embedder=HashingEmbedder()))(
        PrepareTask(str(src.path), src.doc_id, src.doc_id, src.media_type, src.sha256, src.size))
    texts = {r["embed_key"]: r["embed_text"] for r in prepared.records}
    assert len(texts) > 1 and set(prepared.vectors) == set(texts)
    for key, vector in zip(texts, HashingEmbedder().embed(list(texts.values()))):
        assert prepared.vectors[key] == array("f", vector)  # what the store keeps: float32


class Down(HashingEmbedder):
    """A cheap embedder that fails (a subclass calling a service that is down)."""

    def embed(self, texts):
        from chunkwise.errors import ChunkwiseError

        raise ChunkwiseError("embedding service at http://127.0.0.1:9 is down")

    def __reduce__(self):
        return (Down, ())


@pytest.mark.parametrize("workers", [1, 2])
def test_an_embedder_that_fails_in_the_workers_fails_the_run(tmp_path, workers):
    """Embedding where the documents are prepared never turns the embedder's error into per-file
    errors: the run fails with it, as it does when the embed stage runs the embedder."""
    from chunkwise.errors import ChunkwiseError

    corpus(tmp_path / "docs", 4)
    with pytest.raises(ChunkwiseError, match="127.0.0.1:9 is down"):
        ingest([tmp_path / "docs"], tmp_path / "down.db", CONFIG, embedder=Down(), acl=("staff",), now=NOW,
               workers=workers)


def test_crashing_and_panicking_files_cost_only_themselves(tmp_path):
    corpus(tmp_path / "clean")
    corpus(tmp_path / "dirty")
    (tmp_path / "dirty" / "part1" / "deep.md").write_text(NESTED, encoding="utf-8")
    clean = run(tmp_path / "clean", tmp_path / "clean.db", 2)
    dirty = run(tmp_path / "dirty", tmp_path / "dirty.db", 2)
    errors = {e["path"]: e["error"] for e in dirty.errors}
    assert set(errors) == {"part1/deep.md"}
    assert errors["part1/deep.md"].startswith("worker crashed (SIGSEGV) in chunking/markdown.py:")
    assert (dirty.added, dirty.embedded) == (clean.added, clean.embedded)
    assert content(tmp_path / "clean.db") == content(tmp_path / "dirty.db")


def test_one_worker_is_a_worker_process_too(tmp_path, monkeypatch):
    """Issue 25 item 9: files are never parsed in the ingesting process, one worker included."""
    from chunkwise.pipeline.prepare import Preparer
    from chunkwise.sandbox import processes

    started = []
    real = processes.Processes.__init__

    def count(self, fn, n, limits, *rest):
        started.append(n)
        real(self, fn, n, limits, *rest)

    def here(self, task):
        raise AssertionError("a file was prepared in the ingesting process")

    monkeypatch.setattr(processes.Processes, "__init__", count)
    monkeypatch.setattr(Preparer, "__call__", here)  # the worker runs its own, unpatched copy
    corpus(tmp_path / "docs", 4)
    (tmp_path / "docs" / "table.md").write_text(PANIC, encoding="utf-8")
    stats = run(tmp_path / "docs", tmp_path / "one.db", 1)
    assert not stats.errors and stats.added > 4  # the panic line: markdown-it-py takes over in the worker
    assert started == [1]


def test_a_file_that_hangs_is_stopped_at_the_time_limit(tmp_path, monkeypatch):
    """A preparer stuck on one file (stands in for a parser that never returns): the file's error
    says so after the limit, the others are ingested."""
    corpus(tmp_path / "docs", 6)
    (tmp_path / "docs" / "stuck.md").write_text("# Stuck\n\nhang here\n", encoding="utf-8")
    (tmp_path / "stuckprep.py").write_text(
        "import time\n"
        "from chunkwise.pipeline.prepare import Preparer\n"
        "class Stuck(Preparer):\n"
        "    def __call__(self, task, **kw):\n"
        "        if task.rel == 'stuck.md':\n"
        "            time.sleep(3600)\n"
        "        return super().__call__(task, **kw)\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))  # spawned workers get the parent's sys.path
    import stuckprep

    monkeypatch.setattr(sys.modules["chunkwise.pipeline.ingest"], "Preparer", stuckprep.Stuck)
    stats = run(tmp_path / "docs", tmp_path / "t.db", 2, limits=Limits(memory_mb=512, seconds=5))
    assert stats.errors == [{"path": "stuck.md", "error": "timed out after 5 s (worker stopped)"}]
    assert stats.added > 6


def cli(*args, check=True):
    out = subprocess.run([sys.executable, "-m", "chunkwise.cli.main", *args], capture_output=True, text=True)
    assert not check or out.returncode in (0, 1), out.stderr
    return out


def test_cli_workers_flag_errors_and_progress(tmp_path):
    corpus(tmp_path / "docs", 6)
    (tmp_path / "docs" / "deep.md").write_text(NESTED, encoding="utf-8")
    base = ["ingest", str(tmp_path / "docs"), "--acl", "staff", "--size", "64"]
    out = cli(*base, "--db", str(tmp_path / "a.db"), "--workers", "2", "--json")
    stats = json.loads(out.stdout)
    assert out.returncode == 1 and [e["path"] for e in stats["errors"]] == ["deep.md"]
    assert "prepared" not in out.stderr  # no bar on a pipe
    shown = cli(*base, "--db", str(tmp_path / "b.db"), "--workers", "2", "--progress")
    assert "prepared" in shown.stderr and re.search(r"[1-9]\d* chunks, \d+ embedded, \d+ written", shown.stderr)
    assert "error: deep.md: worker crashed (SIGSEGV)" in shown.stderr
    bad = cli(*base, "--db", str(tmp_path / "c.db"), "--workers", "0", check=False)
    assert bad.returncode == 2 and "--workers: must be above 0" in bad.stderr and "Traceback" not in bad.stderr
