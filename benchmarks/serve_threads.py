"""Per-thread CPU of ``chunkwise serve`` for one mode and client count (issue 26 item 4): which of the
server's threads spend what per request — the event loop (``python``), the search workers
(``chunkwise-searc``, named by serve/engine.py), and any thread they start (a thread inherits its
creator's name, so an ONNX Runtime pool created by a worker shows under the worker's name, as a
third ``chunkwise-searc`` line). Same store and queries as ``benchmarks/serve.py``.

    PYTHONPATH=src HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/serve_threads.py --mode hybrid --clients 8 --requests 48
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import search as generated  # noqa: E402
import serve as bench  # noqa: E402


def threads_cpu(pid: int) -> dict[str, tuple[str, float]]:
    """thread id -> (its name, CPU seconds so far)."""
    out = {}
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            comm = (task / "comm").read_text().strip()
            fields = (task / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:  # the thread ended
            continue
        out[task.name] = (comm, (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK"))
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--mode", default="bm25", choices=bench.MODES)
    p.add_argument("--clients", type=int, default=8)
    p.add_argument("--requests", type=int, default=48)
    p.add_argument("--chunks", default="100k")
    p.add_argument("--cache", default=str(bench.ROOT / "benchmarks" / ".cache"))
    args = p.parse_args(argv)
    db = bench.ensure_store(Path(args.cache), bench.parse_n(args.chunks))
    queries = generated.make_queries(200, generated.SEED)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=bench.ROOT, capture_output=True,
                            text=True).stdout.strip()
    with __import__("tempfile").TemporaryDirectory() as tmp:
        server = bench.Serve(db, Path(tmp) / "serve.log")
        try:
            bench.served(server, queries, 8, args.clients, args.mode)  # warm
            before, cpu0 = threads_cpu(server.proc.pid), server.cpu()
            bench.served(server, queries, args.requests, args.clients, args.mode)
            after, cpu1 = threads_cpu(server.proc.pid), server.cpu()
        finally:
            server.stop()
    n = args.requests
    load = os.getloadavg()
    print(f"{args.mode}, {args.clients} clients, {n} requests, commit {commit or '?'}, load {load[0]:.2f}: "
          f"server CPU {(cpu1 - cpu0) / n * 1000:.2f} ms/request")
    for tid, (name, cpu) in sorted(after.items()):
        spent = cpu - before.get(tid, (name, 0.0))[1]
        if spent > 0:
            print(f"  {name:16s} {spent / n * 1000:7.2f} ms/request")
    return 0


if __name__ == "__main__":
    sys.exit(main())
