"""``ingest --executor ray``: prepare and embed on Ray actor pools, writes through the driver
(or, for a store that takes parallel writers, on write actors).

The store a Ray run builds is the local run's, row for row (ids, texts, vectors, stats, per-file
errors); a re-run is a no-op; a file that crashes, hangs or bombs its worker is that file's error
with the local executor's message, and a Ray worker that dies is retried without losing a file.
One local cluster (2 CPUs) serves the module and is shut down after it; Ray tests are few because a
cluster and its actors take seconds to start on two shared cores.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest

from chunkwise.config import ChunkConfig
from chunkwise.embed.hashing import HashingEmbedder
from chunkwise.pipeline import ingest
from chunkwise.sandbox import Limits

ray = pytest.importorskip("ray")
pytest.importorskip("markdown_it_pyrs")

from test_workers import NESTED, content, corpus  # noqa: E402

NOW = "2026-01-01T00:00:00Z"
CONFIG = ChunkConfig(strategy="auto", size=64)
LIMITS = Limits(memory_mb=256, seconds=8)

# Importable on the Ray workers (the cluster's PYTHONPATH names its folder): preparers that
# misbehave on one file each, the way a hostile input makes a parser misbehave.
HOSTILE = '''
import os, signal, time
from pathlib import Path
from chunkwise.embed.hashing import HashingEmbedder
from chunkwise.errors import ChunkwiseError
from chunkwise.pipeline.prepare import Preparer

def _in_ray_actor():
    with open(f"/proc/{os.getppid()}/cmdline", "rb") as f:
        return f.read().startswith(b"ray::")

class Hostile(Preparer):
    def __call__(self, task, **kw):
        if task.rel == "stuck.md":
            time.sleep(3600)                      # a parser that never returns
        if task.rel == "hog.md":
            blob = bytearray(1 << 30)             # a bomb: 1 GB at once
        if task.rel == "killer.md" and _in_ray_actor():
            mark = Path(task.path).with_suffix(".killed")
            if not mark.exists():                 # the Ray worker dies once, mid-file
                mark.write_text("x")
                os.kill(os.getppid(), signal.SIGKILL)
                time.sleep(60)
        return super().__call__(task, **kw)

class Slow(Preparer):
    # a parser that takes a while: a run lasts long enough to lose a worker in the middle of it
    def __call__(self, task, **kw):
        time.sleep(0.1)
        return super().__call__(task, **kw)

class Poison(Preparer):
    # a file that kills the Ray worker preparing it every time, while its .flag file exists
    def __call__(self, task, **kw):
        if task.rel == "poison.md" and _in_ray_actor() and Path(task.path).with_suffix(".flag").exists():
            os.kill(os.getppid(), signal.SIGKILL)
            time.sleep(60)
        return super().__call__(task, **kw)

def _fill_limit(path, room):
    import resource
    size = sum(os.path.getsize(p) for p in (path, f"{path}-wal") if os.path.exists(p))
    resource.setrlimit(resource.RLIMIT_FSIZE, (size + room, size + room))

class FullDiskWrite:
    # a write actor whose process may not grow a file past the store's size + 64 KB: a write past
    # it fails with EFBIG (Python ignores SIGXFSZ), as on a full disk
    def __init__(self, spec, embedder=None, late=None):
        from chunkwise.pipeline.rayactors import Write
        _fill_limit(spec.location, 64 * 1024)
        self.inner = Write(spec, embedder, late)
    def run(self, items, vectors=None):
        return self.inner.run(items, vectors)

class Unreachable(HashingEmbedder):
    # an embedding service that is down: the run fails with its error, as a local run would
    def embed(self, texts):
        raise ChunkwiseError("embedding service at http://127.0.0.1:9 is down")
    def __reduce__(self):
        return (Unreachable, ())
'''


def timeless(db) -> dict:
    """``content(db)`` without ingest times (a CLI run stamps the clock, a library run ``NOW``)."""
    def strip(value):
        if isinstance(value, str) and value.startswith("{"):
            record = json.loads(value)
            record.pop("ingested_at", None)
            return json.dumps(record, sort_keys=True)
        return value

    rows = content(db)
    return {**rows, "chunks": [tuple(map(strip, row)) for row in rows["chunks"]]}


def _processes_of(session: str) -> list[str]:
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                line = f.read().replace(b"\0", b" ").decode("utf-8", "replace")
        except OSError:
            continue
        if session in line:
            found.append(f"{pid}: {line[:120]}")
    return found


def _raylets() -> set[int]:
    out = subprocess.run(["pgrep", "-x", "raylet"], capture_output=True, text=True)
    return {int(p) for p in out.stdout.split()}


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    helpers = tmp_path_factory.mktemp("rayhelpers")
    (helpers / "hostileprep.py").write_text(HOSTILE, encoding="utf-8")
    sys.path.insert(0, str(helpers))
    path = os.pathsep.join(filter(None, [str(helpers), os.environ.get("PYTHONPATH")]))
    ray.init(address="local", num_cpus=2, include_dashboard=False, logging_level="WARNING",
             runtime_env={"env_vars": {"PYTHONPATH": path}})
    session = os.path.basename(ray.nodes()[0]["ObjectStoreSocketName"].split("/sockets/")[0])
    try:
        yield ray.get_runtime_context().gcs_address
    finally:
        ray.shutdown()
        sys.path.remove(str(helpers))
        deadline = time.monotonic() + 30
        while _processes_of(session) and time.monotonic() < deadline:
            time.sleep(0.5)
        assert not _processes_of(session), "Ray processes outlived the cluster"


def run(root, db, executor=None, **kw):
    return ingest([root], db, CONFIG, embedder=kw.pop("embedder", HashingEmbedder()), acl=("staff",), now=NOW,
                  workers=2, limits=kw.pop("limits", LIMITS), executor=executor, **kw)


def ray_executor(**kw):
    from chunkwise.pipeline.raydata import RayExecutor

    return RayExecutor(limits=kw.pop("limits", LIMITS), **kw)


def cli(*args, check=True):
    out = subprocess.run([sys.executable, "-m", "chunkwise.cli.main", *args], capture_output=True, text=True)
    assert not check or out.returncode in (0, 1), out.stderr
    return out


def test_cli_starts_its_own_cluster_and_leaves_nothing_running(tmp_path):
    """Without --ray-address the CLI starts a local cluster for the run and stops it: stdout is the
    JSON stats alone, the stats equal a local run's, and no raylet is left behind."""
    corpus(tmp_path / "docs", 6)
    (tmp_path / "docs" / "deep.md").write_text(NESTED, encoding="utf-8")
    base = ["ingest", str(tmp_path / "docs"), "--acl", "staff", "--size", "64", "--json"]
    before = _raylets()
    local = cli(*base, "--db", str(tmp_path / "local.db"), "--workers", "2")
    remote = cli(*base, "--db", str(tmp_path / "ray.db"), "--executor", "ray", "--file-memory", "512")
    assert remote.returncode == local.returncode == 1
    assert json.loads(remote.stdout) == json.loads(local.stdout)
    assert json.loads(remote.stdout)["errors"][0]["error"].startswith("worker crashed (SIGSEGV) in chunking/")
    assert timeless(tmp_path / "local.db") == timeless(tmp_path / "ray.db")
    deadline = time.monotonic() + 30
    while _raylets() - before and time.monotonic() < deadline:
        time.sleep(0.5)
    assert not _raylets() - before, "the CLI left a raylet running"


def test_bad_ray_usage_fails_fast(tmp_path):
    corpus(tmp_path / "docs", 2)
    base = ["ingest", str(tmp_path / "docs"), "--db", str(tmp_path / "x.db"), "--acl", "staff"]
    out = cli(*base, "--ray-address", "127.0.0.1:1", check=False)
    assert out.returncode == 2 and "need --executor ray" in out.stderr and "Traceback" not in out.stderr
    missing = subprocess.run(
        [sys.executable, "-c", "import sys; sys.modules['ray'] = None\n"
         "from chunkwise.cli.main import main; sys.exit(main(sys.argv[1:]))", *base, "--executor", "ray"],
        capture_output=True, text=True)
    assert missing.returncode == 2 and "pip install 'chunkwise[ray]'" in missing.stderr
    assert "Traceback" not in missing.stderr and not (tmp_path / "x.db").exists()
    (tmp_path / "warp.toml").write_text('[ingest]\nexecutor = "warp"\n', encoding="utf-8")
    warp = cli(*base, "--config", str(tmp_path / "warp.toml"), check=False)
    assert warp.returncode == 2 and "unknown executor 'warp'; use one of: local, ray" in warp.stderr
    (tmp_path / "gpus.toml").write_text('[ingest]\nexecutor = "ray"\nray_gpus = "all"\n', encoding="utf-8")
    gpus = cli(*base, "--config", str(tmp_path / "gpus.toml"), check=False)
    assert gpus.returncode == 2 and "[ingest] ray_gpus must be a number" in gpus.stderr
    assert not (tmp_path / "x.db").exists()


def test_ray_store_is_the_local_store_and_reruns_converge(tmp_path, cluster):
    """A segfaulting file and an empty one among 24 documents: same stats, errors and rows; a re-run
    is a no-op; after an edit and a deletion (the CLI on the running cluster) both stores agree."""
    docs = tmp_path / "docs"
    corpus(docs)
    (docs / "deep.md").write_text(NESTED, encoding="utf-8")
    (docs / "empty.md").write_text("", encoding="utf-8")
    # One batch holds all 26 files: the segfault costs its own file, the rest of the batch comes back.
    # The memory limit is absolute and a contained process spawned by a Ray actor starts larger than
    # a local one: under 256 MB the parser there may fail to allocate the stack it overflows on
    # deep.md (a panic: the Python parser takes over) where the local one segfaults; with room
    # both segfault.
    roomy = Limits(memory_mb=2048, seconds=120)  # deep.md segfaults at once; 8 s timed out at load 13
    local = run(docs, tmp_path / "local.db", limits=roomy)
    remote = run(docs, tmp_path / "ray.db", ray_executor(prepare_batch=64, limits=roomy), limits=roomy)
    assert remote.to_dict() == local.to_dict() and local.added > 24
    assert [e["path"] for e in remote.errors] == ["deep.md"]
    assert content(tmp_path / "local.db") == content(tmp_path / "ray.db")
    (docs / "deep.md").unlink()
    again_local, again = run(docs, tmp_path / "local.db"), run(docs, tmp_path / "ray.db", ray_executor())
    assert again.to_dict() == again_local.to_dict()
    assert (again.added, again.removed, again.embedded, again.skipped_documents) == (0, 0, 0, 24)
    (docs / "part0" / "doc03.md").write_text("# Runbook 3\n\nOnly one step is left now.\n", encoding="utf-8")
    (docs / "part1" / "doc04.md").unlink()
    edit_local = run(docs, tmp_path / "local.db")
    out = cli("ingest", str(docs), "--db", str(tmp_path / "ray.db"), "--acl", "staff", "--executor", "ray",
              "--ray-address", cluster,
              "--json", "--file-memory", "256", "--file-timeout", "8")
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout)
    warnings = got.pop("warnings")
    want = edit_local.to_dict()
    assert set(want.pop("warnings", [])) <= set(warnings)
    assert got == want
    # the CLI says what the API leaves to its caller: the empty file, and the toy embedder's store
    assert "empty.md is empty; skipped" in warnings
    assert all("empty.md" in w or "--reconfigure" in w for w in warnings)
    assert edit_local.added and edit_local.removed
    assert timeless(tmp_path / "local.db") == timeless(tmp_path / "ray.db")


def test_write_actors_write_the_local_store_and_the_driver_writes_nothing(tmp_path, cluster, monkeypatch):
    """Writes on the cluster (what a PostgreSQL store gets by default; forced here on SQLite, which
    takes one writer at a time and so gains nothing): each document in its own transaction on a
    write actor (a pool of its own: ``write_actors`` given), the same stats, errors and rows as a
    local run, re-runs a no-op; no document is written by the ingesting process."""
    from chunkwise.pipeline.write import WriteStage

    docs = tmp_path / "docs"
    corpus(docs)
    (docs / "deep.md").write_text(NESTED, encoding="utf-8")
    (docs / "bom.md").write_bytes(b"\xef\xbb\xbf# Bom\n\nA file with a byte order mark.\n")  # an extraction warning
    # The memory limit is absolute: a Ray actor's contained process starts far larger than a local
    # worker, so under 256 MB the parser cannot even allocate the stack it overflows on deep.md.
    roomy = Limits(memory_mb=2048, seconds=120)  # deep.md segfaults at once; 8 s timed out at load 13
    local = run(docs, tmp_path / "local.db", limits=roomy)

    def not_here(self, *a, **kw):
        raise AssertionError("the driver wrote a document")

    with monkeypatch.context() as m:
        m.setattr(WriteStage, "write", not_here)  # the actors' processes keep the real one
        remote = run(docs, tmp_path / "ray.db", ray_executor(writes="workers", write_actors=2, limits=roomy),
                     limits=roomy)
    assert remote.to_dict() == local.to_dict() and local.added > 24
    assert any(w.startswith("bom.md: UTF-8 byte order mark removed") for w in remote.warnings)
    assert [e["path"] for e in remote.errors] == ["deep.md"]
    assert unordered(tmp_path / "local.db") == unordered(tmp_path / "ray.db")
    (docs / "part0" / "doc03.md").write_text("# Runbook 3\n\nOnly one step is left now.\n", encoding="utf-8")
    (docs / "part1" / "doc04.md").unlink()
    again_local = run(docs, tmp_path / "local.db", limits=roomy)  # deep.md is retried: room on both sides
    again = run(docs, tmp_path / "ray.db", ray_executor(writes="workers", limits=roomy), limits=roomy)
    assert again.to_dict() == again_local.to_dict() and again.added and again.removed
    assert unordered(tmp_path / "local.db") == unordered(tmp_path / "ray.db")


def unordered(db) -> dict:
    """``content(db)`` but the chunks' rowids: parallel writers insert in the order they finish."""
    rows = content(db)
    return {**rows, "chunks": [row[1:] for row in rows["chunks"]]}


def test_on_postgresql_write_actors_write_what_a_local_run_writes(tmp_path, cluster, pg_databases, monkeypatch):
    """By default on PostgreSQL (a store that takes parallel writers) the documents are written on
    the cluster, each in its own transaction — with the hashing embedder by the prepare actors
    themselves (one pool does every stage): the rows, vectors and stats are a local run's."""
    from backends import query

    from chunkwise.pipeline.write import WriteStage

    def rows(url):
        return {"chunks": query(url, "SELECT chunk_id, doc_id, chunk_index, record, text, embed_text, embed_key, acl, "
                                     "quality FROM chunks ORDER BY chunk_id"),
                "documents": query(url, "SELECT doc_id, source_version, chunk_count, versioning FROM documents "
                                        "ORDER BY doc_id"),
                "vectors": query(url, "SELECT embed_key, model, vector::text FROM vectors ORDER BY embed_key")}

    docs = tmp_path / "docs"
    corpus(docs, 12)
    (docs / "deep.md").write_text(NESTED, encoding="utf-8")
    local_url, ray_url = pg_databases.new(), pg_databases.new()
    # Under 256 MB whether markdown-it-pyrs overflows its stack (a crash) or cannot allocate it (a
    # panic: the Python parser takes over) depends on how large the worker's process already is;
    # with room deep.md crashes on both sides.
    roomy = Limits(memory_mb=2048, seconds=120)
    local = run(docs, local_url, limits=roomy)

    def not_here(self, *a, **kw):
        raise AssertionError("the driver wrote a document")

    with monkeypatch.context() as m:
        m.setattr(WriteStage, "write", not_here)
        remote = run(docs, ray_url, ray_executor(limits=roomy), limits=roomy)
    assert remote.to_dict() == local.to_dict() and local.added > 12
    assert [e["path"] for e in remote.errors] == ["deep.md"]
    assert rows(local_url) == rows(ray_url) and rows(ray_url)["vectors"]
    # and they search alike: the actors' rows got other keys (in the order they committed), and no
    # ranking looks at keys (exact ties, of which this corpus has many, go by chunk id)
    from backends import key_to_chunk
    from chunkwise.retrieve import Retriever

    ranked = []
    for url in (local_url, ray_url):
        names = key_to_chunk(url)
        with Retriever(url) as r:
            ranked.append({(q, mode, n): [(names[k], s) for k, s in r.rank(q, ["staff"], n, mode)]
                           for q in ("rollback", "page the owner", "rollback service minutes")
                           for mode in ("bm25", "dense", "hybrid") for n in (3, 10)})
    assert ranked[0] == ranked[1] and all(ranked[0].values())
    again = run(docs, ray_url, ray_executor())
    assert (again.added, again.removed, again.embedded, again.skipped_documents) == (0, 0, 0, 12)


def test_writes_go_to_the_cluster_only_for_a_store_that_takes_parallel_writers():
    from chunkwise.errors import ConfigError

    from chunkwise.store.base import Capabilities

    class Server:
        capabilities = Capabilities("postgresql", native_search=True, parallel_writes=True)

    class File:
        capabilities = Capabilities("sqlite", native_search=False, parallel_writes=False)

    auto, driver, workers = ray_executor(), ray_executor(writes="driver"), ray_executor(writes="workers")
    assert auto.writes_in_workers(Server()) and not auto.writes_in_workers(File())
    assert not driver.writes_in_workers(Server()) and workers.writes_in_workers(File())
    with pytest.raises(ConfigError, match="writes must be one of auto, driver, workers"):
        ray_executor(writes="sometimes")


class _Cluster:
    """What ``RayExecutor`` asks of Ray when it sizes its pools: CPUs in total and per node."""

    def __init__(self, nodes):
        self._nodes = nodes

    def cluster_resources(self):
        return {"CPU": float(sum(self._nodes))}

    def nodes(self):
        return [{"Alive": True, "Resources": {"CPU": float(c)}} for c in self._nodes]


def test_pools_are_sized_from_the_cluster_and_ask_no_more_cpus_than_it_has():
    """This machine: one prepare actor with 2 contained processes and nothing else for hashing (two
    of one each when they also write); a model gets an embed actor of its own, and a write pool
    follows it. Any cluster: the defaults never ask more CPUs than the cluster has, nor put more on
    one actor than its smallest node has."""
    from hypothesis import given, settings, strategies as st

    two = _Cluster([2])
    assert ray_executor()._widths(two, False, False) == ((1, 2), 0, 0, 1.0)
    assert ray_executor()._widths(two, False, False, fused=True) == ((2, 1), 0, 0, 1.0)
    assert ray_executor()._widths(two, True, True) == ((1, 1), 1, 1, pytest.approx(2 / 3))
    assert ray_executor(prepare_actors=2)._widths(two, False, False) == ((2, 1), 0, 0, 1.0)
    assert ray_executor()._widths(_Cluster([4] * 4), False, False) == ((4, 4), 0, 0, 1.0)
    assert ray_executor()._widths(_Cluster([8, 2]), False, False) == ((5, 2), 0, 0, 1.0)

    @settings(max_examples=200, deadline=None)
    @given(st.lists(st.integers(1, 64), min_size=1, max_size=8), st.booleans(), st.booleans(),
           st.integers(1, 4), st.none() | st.integers(1, 8), st.none() | st.integers(1, 8), st.booleans())
    def sized(nodes, embedding, writing, embedders, prepare_actors, write_actors, fused):
        executor = ray_executor(embed_actors=embedders, prepare_actors=prepare_actors, write_actors=write_actors)
        (prepare_n, per_actor), embed_n, write_n, cpus = executor._widths(_Cluster(nodes), embedding, writing, fused)
        assert prepare_n >= 1 and per_actor >= 1 and embed_n == (embedders if embedding else 0)
        assert (write_n >= 1) == writing
        assert (prepare_n * per_actor + embed_n + write_n) * cpus <= sum(nodes) + 1e-9
        if prepare_actors is None:
            assert per_actor <= min(nodes) and prepare_n * per_actor <= max(1, sum(nodes) - embed_n)

    sized()


def test_only_a_model_gets_embed_actors():
    """Hashing runs where each file is prepared (as the local pool does); a model, or late chunking,
    runs on embed actors."""
    from types import SimpleNamespace

    from chunkwise.pipeline.raydata import _embeds_remotely

    class Model:
        cheap = False

    assert not _embeds_remotely(SimpleNamespace(embedder=HashingEmbedder(), late=None))
    assert not _embeds_remotely(SimpleNamespace(embedder=None, late=None))
    assert _embeds_remotely(SimpleNamespace(embedder=Model(), late=None))
    assert _embeds_remotely(SimpleNamespace(embedder=HashingEmbedder(), late=object()))


def test_hang_bomb_and_a_dying_worker_cost_only_their_file(tmp_path, cluster, monkeypatch):
    """Under the local pool's limits: the hung file times out, the bomb hits the memory limit, each
    with the local executor's message; a Ray worker killed mid-file is restarted and that file is
    ingested as if nothing happened."""
    import hostileprep

    monkeypatch.setattr(sys.modules["chunkwise.pipeline.ingest"], "Preparer", hostileprep.Hostile)
    docs = tmp_path / "docs"
    corpus(docs, 6)
    for name in ("stuck.md", "hog.md", "killer.md"):
        (docs / name).write_text(f"# {name}\n\nThe {name} file has text of its own.\n", encoding="utf-8")
    local, remote = run(docs, tmp_path / "local.db"), run(docs, tmp_path / "ray.db", ray_executor())
    assert (docs / "killer.killed").exists()  # the Ray worker was killed once
    errors = {e["path"]: e["error"] for e in remote.errors}
    assert errors == {"stuck.md": "timed out after 8 s (worker stopped)",
                      "hog.md": "over the 256 MB memory limit (MemoryError)"}
    assert remote.to_dict() == local.to_dict()
    assert content(tmp_path / "local.db") == content(tmp_path / "ray.db")


def test_an_embedder_error_on_an_actor_fails_the_run_cleanly(tmp_path, cluster):
    import hostileprep

    from chunkwise.errors import ChunkwiseError

    corpus(tmp_path / "docs", 2)
    with pytest.raises(ChunkwiseError) as failed:  # a clean run error (exit 1 in the CLI), never a Ray traceback
        run(tmp_path / "docs", tmp_path / "ray.db", ray_executor(), embedder=hostileprep.Unreachable())
    message = str(failed.value)
    assert message == "embedding service at http://127.0.0.1:9 is down" or message.startswith("the Ray pipeline failed")


def test_minilm_on_an_embed_actor_matches_local(tmp_path, cluster):
    """The model loads on the embed actor; ids and texts are identical, vectors equal to float32
    rounding (a transformer's batch composition moves the last bits, locally as well)."""
    import sqlite3

    import numpy as np

    pytest.importorskip("sentence_transformers")
    from chunkwise.embed import MiniLMEmbedder

    docs = tmp_path / "docs"
    corpus(docs, 4)
    local = run(docs, tmp_path / "local.db", embedder=MiniLMEmbedder())
    remote = run(docs, tmp_path / "ray.db", ray_executor(), embedder=MiniLMEmbedder())
    assert remote.to_dict() == local.to_dict() and local.embedded > 4

    def rows(db):
        con = sqlite3.connect(db)
        try:
            chunks = con.execute("SELECT chunk_id, text, embed_text, embed_key FROM chunks ORDER BY chunk_id").fetchall()
            keys = [k for (k,) in con.execute("SELECT embed_key FROM vectors ORDER BY embed_key")]
        finally:
            con.close()
        from chunkwise.store import open_store

        with open_store(db, readonly=True) as store:
            vectors = store.vectors(keys)
        return chunks, keys, np.array([vectors[k] for k in keys])

    (a_chunks, a_keys, a_vec), (b_chunks, b_keys, b_vec) = rows(tmp_path / "local.db"), rows(tmp_path / "ray.db")
    assert a_chunks == b_chunks and a_keys == b_keys and a_vec.shape == (len(a_keys), 384)
    assert np.abs(a_vec - b_vec).max() < 1e-6


def test_one_worker_two_workers_and_ray_build_the_same_store(tmp_path, cluster):
    """Files of very different sizes (the schedule runs the largest first), two files claiming one
    front matter id (the one written first keeps it): 1 worker, 2 workers and Ray give the same
    stats and the same rows, row ids included."""
    docs = tmp_path / "docs"
    corpus(docs, 9)
    (docs / "big.md").write_text("# Big\n\n" + "\n\n".join(f"## Part {i}\n\nThe ledger {i} closes at noon."
                                                          for i in range(300)), encoding="utf-8")
    for name, words in (("a-claim.md", 3), ("z-claim.md", 400)):
        (docs / name).write_text("---\nid: shared\n---\n# Claim\n\n" + "word " * words, encoding="utf-8")
    one = ingest([docs], tmp_path / "one.db", CONFIG, embedder=HashingEmbedder(), acl=("staff",), now=NOW,
                 workers=1, limits=LIMITS)
    two = run(docs, tmp_path / "two.db")
    remote = run(docs, tmp_path / "ray.db", ray_executor())
    for stats in (one, two, remote):  # the larger claim is written first
        assert [e["path"] for e in stats.errors] == ["a-claim.md"], stats.errors
    assert one.to_dict() == two.to_dict()
    assert remote.to_dict() == one.to_dict()
    assert content(tmp_path / "one.db") == content(tmp_path / "two.db") == content(tmp_path / "ray.db")


# --- faults: a worker lost mid-run, a file that keeps killing its worker, a full disk --------------

def _kill_when_busy(title: bytes, killed: list, timeout: float = 120.0):
    """A thread that SIGKILLs the first process whose title is ``title`` (a Ray actor running a
    call: ``ray::Prepare.run``), once, from outside, the way the OOM killer or an operator would."""
    import signal
    import threading

    def watch():
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and not killed:
            for pid in os.listdir("/proc"):
                if not pid.isdigit():
                    continue
                try:
                    with open(f"/proc/{pid}/cmdline", "rb") as f:
                        line = f.read()
                except OSError:
                    continue
                if line.startswith(title):
                    time.sleep(0.3)  # well inside its batch
                    os.kill(int(pid), signal.SIGKILL)
                    killed.append(int(pid))
                    return
            time.sleep(0.05)

    thread = threading.Thread(target=watch, daemon=True)
    thread.start()
    return thread


@pytest.mark.parametrize("writes", ["driver", "workers"])
def test_a_ray_worker_killed_mid_run_loses_no_document(tmp_path, cluster, monkeypatch, writes):
    """The actor preparing (and, with ``workers``, writing) a batch is killed from outside mid-run:
    Ray restarts it, the batch runs again, and the store is a local run's, every document in it
    once; nothing is reported, and a re-run is a no-op. With the driver writing, even the stats
    are a local run's (with the actor writing, a document it wrote before dying is found
    unchanged by the retry and counted so)."""
    import hostileprep

    monkeypatch.setattr(sys.modules["chunkwise.pipeline.ingest"], "Preparer", hostileprep.Slow)
    docs = tmp_path / "docs"
    corpus(docs, 48)
    local = run(docs, tmp_path / "local.db")
    killed: list = []
    watcher = _kill_when_busy(b"ray::Prepare.run", killed)
    remote = run(docs, tmp_path / "ray.db", ray_executor(prepare_batch=8, writes=writes))
    watcher.join(1)
    assert killed, "no Ray worker was killed: the run ended before the watcher saw it busy"
    assert remote.errors == [] and local.errors == []
    if writes == "driver":
        assert remote.to_dict() == local.to_dict()
        assert content(tmp_path / "local.db") == content(tmp_path / "ray.db")
    else:
        assert remote.added + remote.unchanged == local.added
        assert unordered(tmp_path / "local.db") == unordered(tmp_path / "ray.db")
    again = run(docs, tmp_path / "ray.db", ray_executor())
    assert (again.added, again.removed, again.skipped_documents, again.errors) == (0, 0, 48, [])


def test_a_file_that_keeps_killing_its_worker_is_named_and_a_rerun_completes_it(tmp_path, cluster, monkeypatch):
    """One file kills the Ray worker preparing it every time: its batch is lost twice, then each of
    its files runs alone; the innocent ones are written, the poison is the run's one error, saying
    to ingest it again (it is not written, its old chunks are kept). Once it behaves, a re-run
    writes exactly it and the store is a clean local run's."""
    import hostileprep

    from chunkwise.pipeline.raystream import LOST

    monkeypatch.setattr(sys.modules["chunkwise.pipeline.ingest"], "Preparer", hostileprep.Poison)
    docs = tmp_path / "docs"
    corpus(docs, 9)
    (docs / "poison.md").write_text("# Poison\n\nThe worker that reads this dies.\n", encoding="utf-8")
    local = run(docs, tmp_path / "local.db")
    whole = content(tmp_path / "local.db")
    poison = {d[0]: d[2] for d in whole["documents"]}["poison.md"]  # its chunk count
    (docs / "poison.flag").write_text("x")
    first = run(docs, tmp_path / "ray.db", ray_executor(prepare_batch=16))
    assert [e["path"] for e in first.errors] == ["poison.md"]
    prefix = LOST.split("{cause}")[0]
    assert first.errors[0]["error"].startswith(prefix) and first.errors[0]["error"].endswith("ingest it again")
    assert first.added == local.added - poison and first.skipped_documents == 0
    held = content(tmp_path / "ray.db")
    assert held["documents"] == [d for d in whole["documents"] if d[0] != "poison.md"]
    (docs / "poison.flag").unlink()
    again = run(docs, tmp_path / "ray.db", ray_executor())
    assert (again.added, again.skipped_documents, again.errors) == (poison, 9, [])
    assert unordered(tmp_path / "ray.db") == unordered(tmp_path / "local.db")


def _complete_documents(db, whole) -> tuple[int, int]:
    """(documents in ``db``, chunks): every document ``db`` holds has exactly the chunks (ids and
    texts) it has in ``whole`` (a complete store of the same corpus) and its row's chunk count:
    nothing half-written is served."""
    import sqlite3

    def per_doc(path):
        con = sqlite3.connect(path)
        try:
            chunks: dict = {}
            for doc, cid, text in con.execute("SELECT doc_id, chunk_id, text FROM chunks ORDER BY chunk_id"):
                chunks.setdefault(doc, []).append((cid, text))
            counts = dict(con.execute("SELECT doc_id, chunk_count FROM documents"))
        finally:
            con.close()
        return chunks, counts

    (got, counts), (want, _) = per_doc(db), per_doc(whole)
    assert set(got) == set(counts)
    for doc, rows in got.items():
        assert rows == want[doc] and counts[doc] == len(rows), doc
    return len(got), sum(map(len, got.values()))


def _namespaces_work() -> bool:
    """A private mount namespace (a user namespace when unprivileged) with a tmpfs of its own."""
    try:
        probe = subprocess.run(["unshare", "-rm", "sh", "-c", "mount -t tmpfs -o size=64k none /mnt"],
                               capture_output=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return probe.returncode == 0


def test_a_full_disk_during_a_ray_ingest_stops_with_one_line_and_a_consistent_store(tmp_path, cluster):
    """The store is on a small filesystem that fills up mid-run (a real ENOSPC: a tmpfs in a private
    mount namespace, which needs no privilege where user namespaces are allowed; elsewhere the
    kernel's file size limit, EFBIG): the CLI on the running cluster stops with one line and exit
    1, and the store it leaves holds whole documents only and passes ``chunkwise check``."""
    small, big = tmp_path / "small", tmp_path / "big"
    corpus(small, 3)
    for i in range(60):
        body = "\n\n".join(" ".join(f"w{i}x{p}x{j} ledger{j % 7}" for j in range(60)) for p in range(12))
        big.mkdir(parents=True, exist_ok=True)
        (big / f"doc{i:02d}.md").write_text(f"# Doc {i}\n\n{body}\n", encoding="utf-8")
    whole = tmp_path / "whole.db"
    run(small, whole)
    run(big, whole)
    py = sys.executable
    base = ["--acl", "staff", "--embedder", "hashing", "--size", "64"]
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    if _namespaces_work():
        disk = tmp_path / "disk"
        disk.mkdir()
        argv = ["unshare", "-rm", "sh", "-ec", " ".join([
            f"mount -t tmpfs -o size=8m none {disk};",
            f"{py} -m chunkwise.cli.main ingest {small} --db {disk}/s.db {' '.join(base)} >/dev/null;",
            # leave ~256 KB free: the big corpus needs several MB
            f"free=$(df -k --output=avail {disk} | tail -1); dd if=/dev/zero of={disk}/filler bs=1k "
            f"count=$((free - 256)) 2>/dev/null;",
            f"rc=0; {py} -m chunkwise.cli.main ingest {big} --db {disk}/s.db {' '.join(base)} --executor ray "
            f"--ray-address {cluster} --file-memory 512 2>{out_dir}/stderr >/dev/null || rc=$?;",
            f"echo $rc > {out_dir}/rc; cp {disk}/s.db* {out_dir}/"])]
        preexec = None
    else:
        db = out_dir / "s.db"
        assert cli("ingest", str(small), "--db", str(db), *base).returncode == 0
        limit = db.stat().st_size + 256 * 1024
        argv = ["sh", "-c", f"{py} -m chunkwise.cli.main ingest {big} --db {db} {' '.join(base)} --executor ray "
                            f"--ray-address {cluster} --file-memory 512 2>{out_dir}/stderr >/dev/null; "
                            f"echo $? > {out_dir}/rc"]

        def preexec():
            import resource
            resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    done = subprocess.run(argv, capture_output=True, text=True, timeout=600, preexec_fn=preexec)
    assert done.returncode == 0, done.stderr
    stderr = (out_dir / "stderr").read_text()
    errors = [line for line in stderr.splitlines() if line.startswith("chunkwise: error:")]
    assert (out_dir / "rc").read_text().strip() == "1", stderr[-2000:]
    assert "Traceback" not in stderr and len(errors) == 1 and "cannot write" in errors[0], stderr[-2000:]
    check = cli("check", "--db", str(out_dir / "s.db"), "--json")
    assert check.returncode == 0 and '"ok": true' in check.stdout, check.stdout + check.stderr
    docs, _ = _complete_documents(out_dir / "s.db", whole)
    assert 3 <= docs < 63  # the small corpus and part of the big one, each document whole


def test_a_full_disk_on_a_write_actor_stops_the_run_with_its_message(tmp_path, cluster, monkeypatch):
    """Writes on the cluster (a write pool of its own) and the disk fills up under the write actor
    (its file size limit: EFBIG, as on a full disk): the run stops with the store's one-line
    message instead of listing each remaining file as failed; the store holds whole documents."""
    import hostileprep

    from chunkwise.errors import StoreWriteError

    big = tmp_path / "big"
    big.mkdir()
    for i in range(60):
        body = "\n\n".join(" ".join(f"w{i}x{p}x{j} ledger{j % 7}" for j in range(60)) for p in range(12))
        (big / f"doc{i:02d}.md").write_text(f"# Doc {i}\n\n{body}\n", encoding="utf-8")
    db = tmp_path / "s.db"
    corpus(tmp_path / "small", 3)
    for store in (db, tmp_path / "whole.db"):
        run(tmp_path / "small", store)
    run(big, tmp_path / "whole.db")
    monkeypatch.setattr(sys.modules["chunkwise.pipeline.raydata"], "Write", hostileprep.FullDiskWrite)
    with pytest.raises(StoreWriteError, match="cannot write"):
        run(big, db, ray_executor(writes="workers", write_actors=1))
    check = cli("check", "--db", str(db), "--json")
    assert check.returncode == 0 and '"ok": true' in check.stdout, check.stdout + check.stderr
    docs, _ = _complete_documents(db, tmp_path / "whole.db")
    assert docs < 63
