"""In-process search on SQLite at up to 1M chunks (issue 26 item 7): BM25 (the in-memory sparse
index), dense (exact, numpy) and hybrid, with hybrid run both ways in the same process run: its
dense list ranked in a thread beside BM25 (``retrieve/store.py``, above ``PARALLEL_ROWS`` rows) and
in one thread (the thresholds raised for that engine), and dense alone with its product in two
halves (two threads, ``retrieve/dense.py``, from ``SPLIT_ROWS`` permitted rows) and in one, interleaved per query so the machine's load
hits all alike. Wall and CPU ms per query (CPU: the whole process, every thread), and the fused
rankings of the two hybrid engines compared (they must be identical).

Data: benchmarks/search.py's generated store (built into its cache on first use: ~30-45 min at
1M on a loaded 2-core machine), queries of 5-12 Zipf words, callers of 3 of 20 groups, k = 10.

    PYTHONPATH=src .venv/bin/python benchmarks/search_hybrid.py --size 1M --queries 100 [--json out.json]
"""
from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")  # one BLAS thread: the parallelism measured is the retriever's own

import argparse  # noqa: E402
import json  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
import search  # noqa: E402


def main() -> int:
    from chunkwise.retrieve import Retriever, dense
    from chunkwise.retrieve import store as retrieve_store

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--size", default="1M")
    ap.add_argument("--queries", type=int, default=100)
    ap.add_argument("--k", type=int, default=10)
    ap.add_argument("--json", type=Path)
    ap.add_argument("--cache", type=Path, default=search.CACHE, help="search.py's store directory")
    args = ap.parse_args()
    search.CACHE = args.cache
    n = search.parse_size(args.size)
    path, built = search.ensure_store(n, search.SEED)
    report = {"chunks": n, "store_build_s": built, "load_before": os.getloadavg(),
              "commit": subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                                       cwd=Path(__file__).parent).stdout.strip()}
    queries = search.make_queries(args.queries, search.SEED)
    parallel, split, never = retrieve_store.PARALLEL_ROWS, dense.SPLIT_ROWS, 10 ** 12
    with Retriever(path, bm25="sparse") as r:
        c0, t0 = time.process_time(), time.perf_counter()
        index = r.index()
        report["index_build_s"], report["index_build_cpu_s"] = time.perf_counter() - t0, time.process_time() - c0
        report["rows"] = len(index)
        bm25 = lambda q, g: r.rank(q, g, args.k, "bm25")  # noqa: E731
        exact = lambda q, g: r.rank(q, g, args.k, "dense")  # noqa: E731
        hybrid = lambda q, g: r.rank(q, g, args.k, "hybrid")  # noqa: E731
        engines = {  # name: (call, PARALLEL_ROWS, SPLIT_ROWS)
            "BM25 sparse": (bm25, parallel, split),
            "dense exact, one thread": (exact, parallel, never),
            "dense exact, two halves": (exact, parallel, split),
            "hybrid, one thread": (hybrid, never, never),
            "hybrid, dense in threads": (hybrid, parallel, split),
        }
        times = {name: ([], []) for name in engines}
        got = {name: [] for name in engines}
        for q, g in queries[:5]:  # warm: masks, statistics
            for call, _, _ in engines.values():
                call(q, g)
        for q, g in queries:
            for name, (call, threshold, halves) in engines.items():
                retrieve_store.PARALLEL_ROWS, dense.SPLIT_ROWS = threshold, halves
                c0, t0 = time.process_time(), time.perf_counter()
                out = call(q, g)
                times[name][0].append(time.perf_counter() - t0)
                times[name][1].append(time.process_time() - c0)
                got[name].append(out)
        retrieve_store.PARALLEL_ROWS, dense.SPLIT_ROWS = parallel, split
    report["load_after"] = os.getloadavg()
    report["engines"] = {}
    for name, (wall, cpu) in times.items():
        w, c = np.array(wall) * 1e3, np.array(cpu) * 1e3
        report["engines"][name] = {"p50_ms": float(np.percentile(w, 50)), "p95_ms": float(np.percentile(w, 95)),
                                   "cpu_p50_ms": float(np.percentile(c, 50)), "cpu_p95_ms": float(np.percentile(c, 95)),
                                   "full": sum(len(x) == args.k for x in got[name])}
    report["hybrid_same"] = sum(a == b for a, b in zip(got["hybrid, one thread"], got["hybrid, dense in threads"]))
    report["dense_same"] = sum(a == b for a, b in zip(got["dense exact, one thread"], got["dense exact, two halves"]))
    if args.json:
        args.json.write_text(json.dumps(report, indent=1))
    print(f"\n{n:,} chunks ({report['rows']:,} servable), k={args.k}, {args.queries} queries, commit {report['commit']},"
          f" index build {report['index_build_s']:.1f} s (CPU {report['index_build_cpu_s']:.1f} s), load "
          f"{' '.join(f'{x:.1f}' for x in report['load_before'])} -> {' '.join(f'{x:.1f}' for x in report['load_after'])}")
    for name, v in report["engines"].items():
        print(f"  {name:26s} p50 {v['p50_ms']:7.1f} ms  p95 {v['p95_ms']:7.1f} ms  CPU p50 {v['cpu_p50_ms']:6.1f}"
              f"  p95 {v['cpu_p95_ms']:6.1f} ms  full {v['full']}/{args.queries}")
    print(f"  rankings identical, threads vs one thread: hybrid {report['hybrid_same']}/{args.queries},"
          f" dense {report['dense_same']}/{args.queries}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
