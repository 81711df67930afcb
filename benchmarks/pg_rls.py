"""What row-level security costs a search (issue 12: ``chunkwise pg-secure``): the same generated
store searched through its owner's connection (no policies) and through a reader role under RLS,
query by query, interleaved (owner, reader, owner, ...) so load changes hit both alike.

Data: pg_search.py's generator (20 access groups, callers hold 3, Zipf pseudo-words, clustered
384-d vectors), loaded by COPY. Every query is a whole ``Retriever.search`` (rank, rows, version
links, context assembly), k=10; the two connections' results are compared (they must be equal).

    .venv/bin/python benchmarks/pg_rls.py --sizes 5k,20k [--queries 100] [--json FILE]
"""
from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import json  # noqa: E402
import shutil  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import urllib.parse  # noqa: E402
import uuid  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from pg_search import Vectors, load, parse_size, query_vectors, server  # noqa: E402
from search import SEED, make_queries  # noqa: E402

MODES = ("bm25", "dense", "hybrid")


def measure(owner: str, reader: str, n_queries: int, seed: int, samples: np.ndarray, k: int) -> dict:
    from chunkwise.retrieve import Retriever

    queries = make_queries(n_queries, seed)
    table = query_vectors(queries, samples, seed)
    out = {}
    with Retriever(owner, embedder=Vectors(table)) as mine, Retriever(reader, embedder=Vectors(table)) as theirs:
        assert theirs.store.capabilities.filtered_reads and not mine.store.capabilities.filtered_reads
        out["permitted_rows_mean"] = float(np.mean([mine.store.lexical_stats(g)[0] for _, g in queries[:20]]))
        for mode in MODES:
            walls = {"owner": [], "reader": []}
            differ = 0
            for r in (mine, theirs):  # warm both connections and the server's caches
                r.search(queries[0][0], queries[0][1], k=k, mode=mode)
            for q, g in queries:
                got = {}
                for name, r in (("owner", mine), ("reader", theirs)):
                    t0 = time.perf_counter()
                    got[name] = r.search(q, g, k=k, mode=mode).to_dict()
                    walls[name].append(time.perf_counter() - t0)
                differ += got["owner"] != got["reader"]
            row = {}
            for name, w in walls.items():
                w = np.array(w) * 1e3
                row[name] = {"p50_ms": float(np.percentile(w, 50)), "p95_ms": float(np.percentile(w, 95))}
            row["p50_ratio"] = row["reader"]["p50_ms"] / row["owner"]["p50_ms"]
            row["results_differ"] = differ
            out[mode] = row
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="5k")
    ap.add_argument("--queries", type=int, default=100)
    ap.add_argument("--k", type=int, default=10)
    ap.add_argument("--seed", type=int, default=SEED)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    import psycopg
    from psycopg import sql

    srv, folder = server(None)
    base = srv.get_uri()
    role = "bench_reader"
    report = {"commit": subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                                       cwd=Path(__file__).parent).stdout.strip(),
              "load_before": os.getloadavg(), "sizes": {}}
    try:
        with psycopg.connect(base, autocommit=True) as admin:
            report["server"] = admin.execute("SHOW server_version").fetchone()[0]
            admin.execute(sql.SQL("CREATE ROLE {} LOGIN").format(sql.Identifier(role)))
        for n in (parse_size(s) for s in args.sizes.split(",")):
            name = f"rls_{n}_{uuid.uuid4().hex[:6]}"
            with psycopg.connect(base, autocommit=True) as admin:
                admin.execute(f"CREATE DATABASE {name}")
            owner = base.replace("/postgres?", f"/{name}?")
            print(f"loading {n:,} chunks", file=sys.stderr, flush=True)
            loaded, _, samples, _, _ = load(owner, n, args.seed, "copy")
            from chunkwise import api

            api.row_security(owner, reader=role)
            reader = owner.replace("postgresql://postgres:@", f"postgresql://{urllib.parse.quote(role)}@", 1)
            row = {"chunks": n, "load_s": loaded, **measure(owner, reader, args.queries, args.seed, samples, args.k),
                   "load_after": os.getloadavg()}
            report["sizes"][str(n)] = row
            print(json.dumps(row, indent=1), flush=True)
            with psycopg.connect(base, autocommit=True) as admin:
                admin.execute(f"DROP DATABASE {name} WITH (FORCE)")
    finally:
        srv.cleanup()
        shutil.rmtree(folder, ignore_errors=True)
    if args.json:
        args.json.write_text(json.dumps(report, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
