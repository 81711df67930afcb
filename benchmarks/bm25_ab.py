"""The in-memory (sparse) BM25 ranking of a base commit against this tree's, on one index of one store,
interleaved per query (issue 26 item 7: SQLite at 1M chunks, BM25 p50 <= 20 ms).

The machine is shared: two runs minutes apart differ by more than the change measured. Here both
versions rank the same queries on the same in-memory index in one process, alternating which goes
first, so load and memory-bus contention fall on both alike; CPU seconds are reported beside wall.
The base's ``retrieve/bm25.py`` and ``retrieve/index.py`` are read from git and run over this tree's
index arrays (the index is built once, by this tree). Rankings (keys and scores) must be identical.

    PYTHONPATH=src .venv/bin/python benchmarks/bm25_ab.py --size 1M --base main --queries 100 [--cache DIR] [--profile]

Data: benchmarks/search.py's generated store (built on first use; ``--cache`` as search.py's).
"""
from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import copy  # noqa: E402
import dataclasses  # noqa: E402
import importlib.util  # noqa: E402
import json  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
import search  # noqa: E402
from _timing import timed  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


def git(*args: str) -> str:
    return subprocess.run(["git", *args], capture_output=True, text=True, check=True, cwd=ROOT).stdout


def load_base(rev: str, folder: Path):
    """(bm25 module, index module) of ``rev``, loaded under names of their own (their imports of
    the rest of chunkwise resolve to this tree: only these two files are compared)."""
    mods = []
    for name in ("bm25", "index"):
        path = folder / f"base_{name}.py"
        path.write_text(git("show", f"{rev}:src/chunkwise/retrieve/{name}.py"))
        spec = importlib.util.spec_from_file_location(f"base_{name}", path)
        mod = sys.modules[spec.name] = importlib.util.module_from_spec(spec)  # dataclasses look it up
        spec.loader.exec_module(mod)
        mods.append(mod)
    return tuple(mods)


def base_index(index, bm25_mod, index_mod):
    """A copy of ``index`` (same arrays, same layout) whose BM25 methods are the base's."""
    old = copy.copy(index)
    old.__class__ = index_mod.SearchIndex
    old._stats = {}
    names = [f.name for f in dataclasses.fields(bm25_mod.SparseBM25)]
    old.bm25 = bm25_mod.SparseBM25(**{n: getattr(index.bm25, n) for n in names})
    return old


def summary(wall: list, cpu: list) -> dict:
    w, c = np.array(wall) * 1e3, np.array(cpu) * 1e3
    return {"p50_ms": float(np.percentile(w, 50)), "p95_ms": float(np.percentile(w, 95)),
            "cpu_p50_ms": float(np.percentile(c, 50)), "cpu_p95_ms": float(np.percentile(c, 95)),
            "cpu_mean_ms": float(c.mean())}


def main() -> int:
    from chunkwise.retrieve import Retriever

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--size", default="1M")
    ap.add_argument("--base", default="main", help="the commit whose ranking code is compared (default main)")
    ap.add_argument("--queries", type=int, default=100)
    ap.add_argument("--k", type=int, default=10)
    ap.add_argument("--rounds", type=int, default=1, help="passes over the queries (each query timed per pass)")
    ap.add_argument("--cache", type=Path, default=search.CACHE, help="search.py's store directory")
    ap.add_argument("--profile", action="store_true", help="then cProfile each version over the queries")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    search.CACHE = args.cache
    n = search.parse_size(args.size)
    path, _ = search.ensure_store(n, search.SEED)
    queries = search.make_queries(args.queries, search.SEED)
    report = {"chunks": n, "base": git("rev-parse", "--short", args.base).strip(),
              "head": git("rev-parse", "--short", "HEAD").strip(), "dirty": bool(git("status", "--porcelain", "src")),
              "load_before": os.getloadavg()}
    with tempfile.TemporaryDirectory() as tmp, Retriever(path, bm25="sparse", embedder=None) as r:
        bm25_mod, index_mod = load_base(args.base, Path(tmp))
        c0, t0 = time.process_time(), time.perf_counter()
        new = r.index()
        report["index_build_s"], report["index_build_cpu_s"] = time.perf_counter() - t0, time.process_time() - c0
        old = base_index(new, bm25_mod, index_mod)
        engines = {"base": lambda q, g: old.rank_bm25(q, g, args.k), "this tree": lambda q, g: new.rank_bm25(q, g, args.k)}
        for q, g in queries[:5]:
            for call in engines.values():
                call(q, g)
        times = {name: ([], []) for name in engines}
        same = 0
        for rnd in range(args.rounds):
            for i, (q, g) in enumerate(queries):
                names = list(engines) if (i + rnd) % 2 == 0 else list(engines)[::-1]
                outs = {}
                for name in names:
                    wall, cpu, outs[name] = timed(lambda: engines[name](q, g))
                    times[name][0].append(wall)
                    times[name][1].append(cpu)
                same += outs["base"] == outs["this tree"]
        report["load_after"] = os.getloadavg()
        report["engines"] = {name: summary(*t) for name, t in times.items()}
        b, t = (np.array(times[x][1]) for x in ("base", "this tree"))
        report["paired_cpu_ratio_median"] = float(np.median(t / np.maximum(b, 1e-9)))
        report["identical"] = same
        report["timed"] = args.queries * args.rounds
        print(f"{n:,} chunks ({len(new):,} servable), k={args.k}, {args.queries} queries x {args.rounds}, base "
              f"{report['base']} vs {report['head']}{' + changes' if report['dirty'] else ''}, index build "
              f"{report['index_build_s']:.1f} s (CPU {report['index_build_cpu_s']:.1f} s), load "
              f"{' '.join(f'{x:.1f}' for x in report['load_before'])} -> "
              f"{' '.join(f'{x:.1f}' for x in report['load_after'])}")
        for name, v in report["engines"].items():
            print(f"  {name:10s} p50 {v['p50_ms']:6.1f} ms  p95 {v['p95_ms']:6.1f} ms  CPU p50 {v['cpu_p50_ms']:6.1f}"
                  f"  p95 {v['cpu_p95_ms']:6.1f}  mean {v['cpu_mean_ms']:6.1f} ms")
        print(f"  paired CPU ratio (this tree / base), median over queries: {report['paired_cpu_ratio_median']:.3f}")
        print(f"  rankings identical (keys and scores): {same}/{report['timed']}")
        if args.profile:
            for name, call in engines.items():
                print()
                search.cpu_profile(call, queries, f"{name}, {len(queries)} queries", 22)
    if args.json:
        args.json.write_text(json.dumps(report, indent=1))
    return 0 if report["identical"] == report["timed"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
