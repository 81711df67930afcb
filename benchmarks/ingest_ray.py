"""Ingest on Ray vs the local executor, side by side in one process, plus the per-stage costs a
10M-document plan is built from.

Why: issue 12 asks for ingest throughput with Ray on this 2-core machine vs the local executor
(parity expected; the point is the same result) and a plan, with measured per-stage costs, for 10M
documents on a cluster (what scales, what serialises, where the store becomes the limit).

Method:
- corpus: ``benchmarks/ingest.py``'s generated Markdown (``--docs`` files of 1-3 KB, 100 per
  folder); MiniLM runs use its first ``--minilm-docs`` files; chunks of 256 (hashing) / 254
  (MiniLM) MiniLM tokens, strategy auto, one access tag;
- each run ingests into a fresh SQLite store through ``chunkwise.api.ingest``: ``local`` with
  ``workers=2`` (contained processes, embedding and writes in this process), ``ray`` with a
  ``RayExecutor`` (its defaults: one prepare actor of 2 contained processes) on a local cluster of
  2 CPUs started once by this process (its start is timed apart). Every Ray run pays its actors'
  start (prepare actors spawn their sandbox processes, embed actors load the model); the first Ray
  run on the new cluster also pays the cluster's one-time start of worker processes, so the
  hashing pair is run as ``ray, first run on the cluster``, then ``--repeat`` alternating pairs of
  ``local`` and ``ray`` (alternating, so a change in the machine's load hits both); each row is
  reported and the ratio is the median pair's (the first run's is given apart);
- CPU seconds are of every process involved, sampled from ``/proc`` every 0.2 s (``TreeCpu``):
  this process and its descendants (sandbox workers, the Ray cluster's processes and actors); the
  PostgreSQL server is not one of them (pg_ctl detaches it), so it is in neither row. For a
  local row the Ray cluster's processes (idle then) are left out; for a Ray row they are in (the
  raylet, the GCS and the actors are the Ray run's cost). On a loaded machine read this column and
  the ratios, not the wall times; The stores of the local and the last Ray run are compared row by
  row (ids, texts, vectors; MiniLM vectors to 1e-6);
- each row also gives when the first document came out of prepare (the fixed start: pool or
  actors, sandbox processes, the walk of the window) and the rate after it (the steady state);
- per-stage costs, one process, no parallelism (CPU seconds = wall here): the walk (list + sha256),
  *prepare* (``Preparer`` in-process), *embed* (hashing: every embedded text; MiniLM: the first
  512, batch 64), *write* (``WriteStage`` into a fresh store, vectors given), per document and per
  chunk.

- ``--pg``: the hashing pair again into two fresh PostgreSQL databases (a ``pgserver`` started by
  this script in a temporary folder), where Ray writes on write actors (``Capabilities.parallel_writes``)
  and the local run from this process; the two databases compared row by row (ids, texts, vectors,
  BM25 postings by chunk id) and by what readers see of the statistics kept per writer slot (a tag
  set's rows and length, each term's document frequency and bounds, summed over the slots).

- ``--pg-only``: only the PostgreSQL pairs (after one unreported Ray run that starts the cluster's
  worker processes); ``--pg-repeat``: how many PostgreSQL pairs (default ``--repeat``).

Run: ``.venv/bin/python benchmarks/ingest_ray.py [--docs N] [--repeat R] [--minilm-docs N] [--no-minilm] [--pg]
[--pg-only] [--pg-repeat R]``
"""
from __future__ import annotations

import argparse
import os
import sqlite3
import sys
import tempfile
import threading
import time
from pathlib import Path

from _timing import timed
from ingest import cw, git_head, write_corpus

NOW = "2026-01-01T00:00:00Z"


_TICK = os.sysconf("SC_CLK_TCK")
RAY_PIDS: set[int] = set()  # the local cluster's processes (their subtrees), left out of a local row's CPU


def _procs() -> dict[int, tuple[int, float]]:
    """pid -> (parent pid, its own CPU s: utime + stime) of every process readable in /proc."""
    out = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                fields = f.read().rsplit(b")", 1)[1].split()
        except OSError:
            continue
        out[int(name)] = (int(fields[1]), (int(fields[11]) + int(fields[12])) / _TICK)
    return out


def _tree(procs: dict, exclude: set[int]) -> set[int]:
    """This process and its descendants, without the subtrees rooted at ``exclude``."""
    children: dict[int, list[int]] = {}
    for pid, (ppid, _) in procs.items():
        children.setdefault(ppid, []).append(pid)
    found, todo = set(), [os.getpid()]
    while todo:
        pid = todo.pop()
        if pid not in exclude:
            found.add(pid)
            todo += children.get(pid, [])
    return found


class TreeCpu:
    """CPU s of this process and its descendants over a block, sampled from /proc every ``every`` s:
    processes that start and end inside it (sandbox workers, Ray actors) count up to their last
    sample (their parents' cutime is no help: the raylet does not account for its reaped workers).
    The sampler's own CPU is taken off."""

    def __init__(self, exclude: set[int], every: float = 0.2) -> None:
        self.exclude, self.every = exclude, every
        self.base: dict[int, float] = {}
        self.last: dict[int, float] = {}
        self.own = 0.0
        self.stop = threading.Event()

    def _sample(self) -> None:
        procs = _procs()
        for pid in _tree(procs, self.exclude):
            self.last[pid] = procs[pid][1]

    def _loop(self) -> None:
        t0 = time.thread_time()
        while not self.stop.wait(self.every):
            self._sample()
        self.own = time.thread_time() - t0

    def __enter__(self) -> "TreeCpu":
        self._sample()
        self.base = dict(self.last)
        self.thread = threading.Thread(target=self._loop, daemon=True)
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop.set()
        self.thread.join()
        self._sample()

    @property
    def seconds(self) -> float:
        return sum(v - self.base.get(pid, 0.0) for pid, v in self.last.items()) - self.own


def descendants() -> set[int]:
    return {pid for pid, (ppid, _) in _procs().items() if ppid == os.getpid()}


def measured(run, ray_row: bool):
    """(wall s, CPU s of every process involved, result) of one run."""
    with TreeCpu(set() if ray_row else RAY_PIDS) as cpu:
        wall, _, out = timed(run)
    return wall, cpu.seconds, out


def log(message: str) -> None:
    print(f"... {message}", file=sys.stderr, flush=True)


def rows(db: Path) -> tuple[list, list, list]:
    con = sqlite3.connect(db)
    try:
        chunks = con.execute("SELECT rowid, chunk_id, doc_id, text, embed_text, embed_key FROM chunks "
                             "ORDER BY chunk_id").fetchall()
        keys = [k for (k,) in con.execute("SELECT embed_key FROM vectors ORDER BY embed_key")]
        blobs = [v for (v,) in con.execute("SELECT vector FROM vectors ORDER BY embed_key")]
    finally:
        con.close()
    return chunks, keys, blobs


def same_store(a: Path, b: Path, exact: bool) -> str:
    import numpy as np

    (ca, ka, va), (cb, kb, vb) = rows(a), rows(b)
    if ca != cb or ka != kb:
        return "NO (chunks differ)"
    if exact:
        return "yes, byte for byte" if va == vb else "NO (vectors differ)"
    diff = max((np.abs(np.frombuffer(x, "<f4") - np.frombuffer(y, "<f4")).max() for x, y in zip(va, vb)),
               default=0.0)
    return f"yes (vectors within {diff:.1e})" if diff < 1e-6 else f"NO (vectors differ by {diff:.1e})"


class Clock:
    """A ``Progress`` noting when each file leaves prepare (seconds after it was made)."""

    def __init__(self) -> None:
        self.start, self.marks = time.perf_counter(), []

    def prepared(self, n: int = 1) -> None:
        self.marks.extend([time.perf_counter() - self.start] * n)

    def skipped(self, n: int = 1) -> None:
        pass

    def embedded(self, n: int) -> None:
        pass

    def written(self, n: int = 1) -> None:
        pass

    def cells(self) -> str:
        """``first document s | files/s after it``."""
        if len(self.marks) < 2:
            return "| |"
        first, last = self.marks[0], self.marks[-1]
        rate = (len(self.marks) - 1) / (last - first) if last > first else float("inf")
        return f"{first:.1f} | {rate:.1f} |"


def ingest(root: Path, db, embedder, size: int, executor=None, clock: Clock | None = None):
    from chunkwise import api

    if clock is not None:
        clock.start = time.perf_counter()
    return api.ingest([root], db, api.ChunkConfig(strategy="auto", size=size), embedder=embedder, acl=["bench"],
                      now=NOW, workers=2, executor=executor or "local", progress=clock)


def row(name: str, label: str, docs: int, wall: float, cpu: float, stats, clock: Clock) -> str:
    return (f"| {name} | {label} | {docs:,} | {stats.added:,} | {wall:.1f} | {docs / wall:.1f} | "
            f"{stats.added / wall:.0f} | {clock.cells()} {cpu:.1f} | {len(stats.errors)} |")


def side_by_side(work: Path, root: Path, docs: int, name: str, size: int, first: bool = False,
                 repeat: int = 1) -> list[str]:
    """Local and Ray on the same corpus, ``repeat`` alternating pairs; ``first``: a Ray run before
    them, the first on the cluster."""
    from statistics import median

    from chunkwise import api
    from chunkwise.pipeline.raydata import RayExecutor

    lines, pairs, stats_all = [], [], []
    runs = (["first"] if first else []) + [f"{label}{k}" for k in range(repeat) for label in ("local", "ray")]
    results = {}
    for key in runs:
        label = {"first": "ray, first run on the cluster"}.get(key, key.rstrip("0123456789"))
        log(f"{name}: {label}, {docs} files")
        executor = RayExecutor() if label.startswith("ray") else None
        clock = Clock()
        db = work / f"{name}-{key}.db"
        wall, cpu, stats = measured(lambda: ingest(root, db, api.make_embedder(name), size, executor, clock),
                                    ray_row=executor is not None)
        results[key] = (wall, cpu, stats)
        stats_all.append(stats.to_dict())
        lines.append(row(name, label, docs, wall, cpu, stats, clock))
    for k in range(repeat):
        (lw, lc, _), (rw, rc, _) = results[f"local{k}"], results[f"ray{k}"]
        pairs.append((lw / rw, lc / rc))
    last = repeat - 1
    same = same_store(work / f"{name}-local{last}.db", work / f"{name}-ray{last}.db", exact=name == "hashing")
    stats_same = "equal" if all(s == stats_all[0] for s in stats_all) else "DIFFERENT"
    ratio = f"**{median(p[0] for p in pairs):.2f}x**"
    if repeat > 1:
        ratio += f" (pairs: {', '.join(f'{p[0]:.2f}' for p in pairs)})"
    if first:
        ratio += f" (first run on the cluster: {results['local0'][0] / results['first'][0]:.2f}x)"
    cpu_ratio = f"local/ray CPU {median(p[1] for p in pairs):.2f}x"
    lines.append(f"| | ray / local | | | | {ratio} | | | | {cpu_ratio} | stats {stats_same}; store identical: "
                 f"{same} |")
    return lines


def side_by_side_pg(work: Path, root: Path, docs: int, repeat: int = 1) -> list[str]:
    """The hashing pair on PostgreSQL, ``repeat`` alternating pairs (local, ray), each run into a
    fresh database: Ray's documents written by its write actors. The ratio is the median pair's;
    each pair's two databases are compared row by row."""
    from statistics import median

    import pgserver
    import psycopg

    from chunkwise import api
    from chunkwise.pipeline.raydata import RayExecutor

    srv = pgserver.get_server(work / "pg", cleanup_mode="stop")
    try:
        urls = {}
        runs = [f"{label}{k}" for k in range(repeat) for label in ("local", "ray")]
        with psycopg.connect(srv.get_uri(), autocommit=True) as admin:
            for key in runs:
                admin.execute(f"CREATE DATABASE bench_{key}")
                urls[key] = srv.get_uri(f"bench_{key}")
        lines, results = [], {}
        for key in runs:
            label = key.rstrip("0123456789")
            log(f"hashing on PostgreSQL: {label}, {docs} files")
            executor = RayExecutor() if label == "ray" else None
            clock = Clock()
            wall, cpu, stats = measured(lambda: ingest(root, urls[key], api.make_embedder("hashing"), 256, executor,
                                                       clock), ray_row=executor is not None)
            results[key] = (wall, cpu, stats)
            how = "the Ray actors" if label == "ray" else "this process"
            lines.append(row(f"hashing, PostgreSQL (writes: {how})", label, docs, wall, cpu, stats, clock))

        def pg_rows(url):
            from chunkwise.store.postgres.pg_place import DEFAULT_SCHEMA

            with psycopg.connect(url) as con:
                con.execute(f"SET search_path = {DEFAULT_SCHEMA}")
                # the statistics as readers see them: summed over writer slots (store/postgres/pg_slots.py)
                return (con.execute("SELECT chunk_id, doc_id, text, embed_text, embed_key FROM chunks "
                                    "ORDER BY chunk_id").fetchall(),
                        con.execute("SELECT embed_key, vector::text FROM vectors ORDER BY embed_key").fetchall(),
                        con.execute("SELECT acl, sum(rows), sum(total_len) FROM acl_stats GROUP BY acl "
                                    "HAVING sum(rows) <> 0 OR sum(total_len) <> 0 ORDER BY acl").fetchall(),
                        con.execute("SELECT t.lexeme, s.acl, sum(t.df), max(t.m0), max(t.m1), max(t.m2), "
                                    "min(t.min_len) FROM term_df t JOIN acl_sets s ON s.id = t.set_id GROUP BY 1, 2 "
                                    "HAVING sum(t.df) > 0 ORDER BY 1, 2").fetchall(),
                        con.execute("SELECT lexeme, s.acl, p.len, p.f0, p.f1, p.f2, c.chunk_id FROM postings p "
                                    "JOIN acl_sets s ON s.id = p.set_id JOIN chunks c ON c.key = p.key "
                                    "ORDER BY 7, 1").fetchall())

        pairs = [(results[f"local{k}"][0] / results[f"ray{k}"][0], results[f"local{k}"][1] / results[f"ray{k}"][1])
                 for k in range(repeat)]
        same = all(pg_rows(urls[f"local{k}"]) == pg_rows(urls[f"ray{k}"]) for k in range(repeat))
        stats_all = [results[key][2].to_dict() for key in runs]
        stats_same = "equal" if all(s == stats_all[0] for s in stats_all) else "DIFFERENT"
        ratio = f"**{median(p[0] for p in pairs):.2f}x**"
        if repeat > 1:
            ratio += f" (pairs: {', '.join(f'{p[0]:.2f}' for p in pairs)})"
        lines.append(f"| | ray / local | | | | {ratio} | | | | local/ray CPU {median(p[1] for p in pairs):.2f}x | "
                     f"stats {stats_same}; store identical: {'yes, row for row' if same else 'NO'} |")
        return lines
    finally:
        srv.cleanup()


def stage_costs(work: Path, root: Path, docs: int) -> list[str]:
    """Serial per-stage costs on one core (what a cluster spreads, or cannot)."""
    from chunkwise import api
    from chunkwise.access import AccessTags
    from chunkwise.pipeline.chunk import make_chunker
    from chunkwise.pipeline.prepare import Prepared, Preparer, PrepareSettings, PrepareTask
    from chunkwise.pipeline.write import IngestStats, WriteStage
    from chunkwise.sources import SourceFile, iter_sources
    from chunkwise.store import open_store

    log("stage costs: walk")
    walk_s, _, sources = timed(lambda: [s for s in iter_sources([root], root=str(root)) if isinstance(s, SourceFile)])
    tasks = [PrepareTask(str(s.path), s.doc_id, s.doc_id, s.media_type, s.sha256, s.size) for s in sources]
    hashing, minilm = api.make_embedder("hashing"), api.make_embedder("minilm")
    config = api.ChunkConfig(strategy="auto", size=254)
    preparer = Preparer(PrepareSettings(config, minilm.name, AccessTags.parse(["bench"], "acl"), {}, NOW),
                        make_chunker(config))
    preparer.warm_up()
    log("stage costs: prepare")
    prep_s, _, prepared = timed(lambda: [preparer(t) for t in tasks])
    prepared = [p for p in prepared if isinstance(p, Prepared)]
    texts = [r["embed_text"] for p in prepared for r in p.records]
    chunks = len(texts)
    log("stage costs: embed (hashing, MiniLM sample)")
    hash_s, _, _ = timed(lambda: hashing.embed(texts))
    sample = texts[:512]
    minilm.embed(["warm up"])
    mini_s, _, vecs = timed(lambda: minilm.embed(sample))
    by_key = dict(zip((r["embed_key"] for p in prepared for r in p.records), vecs * (chunks // len(sample) + 1)))
    log("stage costs: write")
    with open_store(work / "stages.db") as store:
        store.add_root(str(root))
        stats = IngestStats()
        write = WriteStage(store, root=str(root), inputs="bench", now=NOW, model=minilm.name, embedding=True,
                           stats=stats)

        def write_all():
            for p in prepared:
                write.write(p, {r["embed_key"]: by_key[r["embed_key"]] for r in p.records})

        write_s, _, _ = timed(write_all)
    n = len(prepared)
    per = lambda s, k: f"{s / k * 1000:.2f}"  # noqa: E731 - ms per unit
    return [f"Serial, one process: {n:,} documents, {chunks:,} chunks ({chunks / n:.1f} per document), "
            f"size 254, MiniLM vectors (384 float32).", "",
            "| stage | s | ms / document | ms / chunk | where it runs with `--executor ray` |",
            "|---|--:|--:|--:|---|",
            f"| walk (list + sha256) | {walk_s:.2f} | {per(walk_s, n)} | | driver |",
            f"| prepare (read, extract, chunk, enrich) | {prep_s:.2f} | {per(prep_s, n)} | {per(prep_s, chunks)} | "
            f"prepare actors |",
            f"| embed, hashing | {hash_s:.2f} | {per(hash_s, n)} | {per(hash_s, chunks)} | embed actors |",
            f"| embed, MiniLM (512 texts, batch 64) | {mini_s:.2f} | | {per(mini_s, len(sample))} | "
            f"embed actors (GPU on a cluster) |",
            f"| write (one transaction per document, vectors included) | {write_s:.2f} | {per(write_s, n)} | "
            f"{per(write_s, chunks)} | driver (SQLite: one writer) |", ""]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--docs", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=1, help="alternating local/ray pairs of the hashing runs")
    ap.add_argument("--minilm-docs", type=int, default=200)
    ap.add_argument("--no-minilm", action="store_true", help="skip the MiniLM pair and the stage costs")
    ap.add_argument("--pg", action="store_true", help="also the hashing pairs on PostgreSQL (pgserver)")
    ap.add_argument("--pg-only", action="store_true", help="only the PostgreSQL pairs (implies --pg --no-minilm)")
    ap.add_argument("--pg-repeat", type=int, default=None, help="PostgreSQL pairs (default: --repeat)")
    args = ap.parse_args()
    if args.pg_only:
        args.pg, args.no_minilm = True, True
    cw()
    import ray

    load0 = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="chunkwise-bench-ray-") as tmp:
        work = Path(tmp)
        corpus = write_corpus(work / "corpus", args.docs, 1000, 3000)
        small = work / "small"
        for f in corpus.files[: args.minilm_docs]:
            dest = small / f.relative_to(corpus.root)
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_bytes(f.read_bytes())
        log("starting a local Ray cluster (2 CPUs)")
        start_s, _, _ = timed(lambda: ray.init(address="local", num_cpus=2, include_dashboard=False,
                                               logging_level="WARNING"))
        RAY_PIDS.update(descendants())
        try:
            table = ["| embedder | executor | files | chunks | s | files/s | chunks/s | first document (s) | "
                     "files/s after it | CPU s (all processes) | errors |",
                     "|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|"]
            if args.pg_only:  # the cluster's first run (its worker processes start), not reported
                from chunkwise import api
                from chunkwise.pipeline.raydata import RayExecutor

                log("warm-up: a first Ray run on the cluster (SQLite), not reported")
                ingest(corpus.root, work / "warm-up.db", api.make_embedder("hashing"), 256, RayExecutor())
            else:
                table += side_by_side(work, corpus.root, args.docs, "hashing", 256, first=True, repeat=args.repeat)
            if not args.no_minilm:
                table += side_by_side(work, small, args.minilm_docs, "minilm", 254)
            if args.pg:
                table += side_by_side_pg(work, corpus.root, args.docs, args.pg_repeat or args.repeat)
        finally:
            ray.shutdown()
        stages = [] if args.no_minilm else stage_costs(work, small, args.minilm_docs)
    load1 = os.getloadavg()
    flags = ((f" --repeat {args.repeat}" if args.repeat > 1 else "")
             + ("" if args.pg_only else " --no-minilm" if args.no_minilm else f" --minilm-docs {args.minilm_docs}")
             + (" --pg-only" if args.pg_only else " --pg" if args.pg else "")
             + (f" --pg-repeat {args.pg_repeat}" if args.pg_repeat else ""))
    print(f"Commit {git_head()}; `benchmarks/ingest_ray.py --docs {args.docs}{flags}`; "
          f"load average {load0[0]:.2f} at the start, {load1[0]:.2f} at the end (2 cores shared).\n")
    print(f"Local Ray cluster start (`ray.init(num_cpus=2)`): {start_s:.1f} s, not in the Ray rows.\n")
    print("\n".join(table))
    print()
    print("\n".join(stages))


if __name__ == "__main__":
    main()
