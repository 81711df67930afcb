"""What two searches at once cost in one process (issue 26 item 4): the CPU of one search (its own
thread's CPU time) when it runs alone and when another thread searches at the same time, each
thread with its own Retriever as ``chunkwise serve``'s workers have. Same store and queries as
``benchmarks/serve.py``; no HTTP, so what differs is only what the threads share in the process.

Each configuration runs in a fresh process (SQLite's memory statistics are a setting of the
process):

- ``statistics on``: SQLite as Python starts it (the in-process search, and the server before it
  switched them off): every SQLite allocation takes one process-wide mutex;
- ``statistics off``: as ``chunkwise serve`` runs (store/sqlite/threads.py);
- ``... + progress N``: each thread's connection with the server's time-limit check every N virtual
  machine steps (store/sqlite/limits.py ``CHECK_EVERY``), a Python call that needs the GIL.

Phases alternate (alone, two at once, alone, ...) so a change of load falls on both. Two threads
only share the cores when the machine has two idle: on a loaded machine they mostly take turns, and
the "two at once" column is then close to "alone" whatever the code does (read the CPU/wall
column: near 2.0 means they really ran together).

    PYTHONPATH=src HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/search_threads.py [--mode bm25] [--queries 24]
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import search as generated  # noqa: E402  (single-threaded BLAS, as in serve.py)
import serve as bench  # noqa: E402

CONFIGS = (("statistics on", False, 0), ("statistics off", True, 0), ("statistics on + progress 10000", False, 10_000),
           ("statistics off + progress 10000", True, 10_000), ("statistics off + progress 100000", True, 100_000))
ROUNDS = 2


def child(db: str, mode: str, n: int, statistics_off: bool, progress: int) -> dict:
    """In this process: ``ROUNDS`` x (one thread alone, two threads at once); per phase the mean
    thread CPU per search, and wall and process CPU per search."""
    from chunkwise import api
    from chunkwise.store.sqlite.threads import memory_statistics_on, without_memory_statistics

    if statistics_off and not without_memory_statistics():
        raise SystemExit("could not switch SQLite's memory statistics off")
    queries = generated.make_queries(64, generated.SEED)
    phases = [(0,), (0, 1)] * ROUNDS
    start = [threading.Barrier(3) for _ in phases]
    done = [threading.Barrier(3) for _ in phases]
    cpu: dict = {}

    def worker(i: int) -> None:
        r = api.open_retriever(db)
        r.warm()
        if progress:
            deadline = time.monotonic() + 3600
            r.store.db.set_progress_handler(lambda: 1 if time.monotonic() > deadline else 0, progress)
        for q, g in queries[:4]:
            r.search(q, g, k=bench.K, mode=mode)
        for p, who in enumerate(phases):
            start[p].wait()
            if i in who:
                for j in range(i, n * 2, 2):
                    q, g = queries[j % len(queries)]
                    c0 = time.thread_time()
                    json.dumps(r.search(q, g, k=bench.K, mode=mode).to_dict())
                    cpu.setdefault(p, []).append(time.thread_time() - c0)
            done[p].wait()
        r.close()

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    out: dict = {"alone": [], "two": [], "wall_alone": 0.0, "wall_two": 0.0, "proc_two": 0.0, "n_two": 0,
                 "n_alone": 0, "statistics": memory_statistics_on()}
    for p, who in enumerate(phases):
        start[p].wait()
        w0, p0 = time.perf_counter(), time.process_time()
        done[p].wait()
        w, c = time.perf_counter() - w0, time.process_time() - p0
        key = "two" if len(who) == 2 else "alone"
        out[key] += cpu[p]
        out["wall_" + key] += w
        out["n_" + key] += len(cpu[p])
        if key == "two":
            out["proc_two"] += c
    for t in threads:
        t.join()
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--mode", default="bm25", choices=bench.MODES)
    p.add_argument("--queries", type=int, default=24, help="searches per thread and phase")
    p.add_argument("--chunks", default="100k")
    p.add_argument("--cache", default=str(bench.ROOT / "benchmarks" / ".cache"))
    p.add_argument("--child", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    db = bench.ensure_store(Path(args.cache), bench.parse_n(args.chunks))
    if args.child:
        off, progress = json.loads(args.child)
        print(json.dumps(child(str(db), args.mode, args.queries, off, progress)))
        return 0
    load0 = os.getloadavg()
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=bench.ROOT, capture_output=True,
                            text=True).stdout.strip()
    rows = []
    for name, off, progress in CONFIGS:
        done = subprocess.run([sys.executable, __file__, "--mode", args.mode, "--queries", str(args.queries),
                               "--chunks", args.chunks, "--cache", args.cache, "--child", json.dumps([off, progress])],
                              capture_output=True, text=True, env=bench.env())
        if done.returncode:
            raise SystemExit(done.stderr[-3000:])
        r = json.loads(done.stdout.strip().splitlines()[-1])
        alone, two = statistics.mean(r["alone"]) * 1000, statistics.mean(r["two"]) * 1000
        rows.append(f"| {name} | {alone:.2f} | {two:.2f} | {two - alone:+.2f} | {r['wall_alone'] / r['n_alone'] * 1000:.1f} "
                    f"| {r['wall_two'] / r['n_two'] * 1000:.1f} | {r['proc_two'] / r['wall_two']:.2f} |")
    load1 = os.getloadavg()
    print(f"{args.mode}, {args.queries} searches per thread and phase, {ROUNDS} rounds, commit {commit}; load average "
          f"{load0[0]:.2f} before, {load1[0]:.2f} after; {os.cpu_count()} CPUs")
    print()
    print("| SQLite | CPU/search alone ms | CPU/search, two at once ms | difference ms | wall/search alone ms "
          "| wall/search, two at once ms | CPU/wall, two at once |")
    print("|---|--:|--:|--:|--:|--:|--:|")
    print("\n".join(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
