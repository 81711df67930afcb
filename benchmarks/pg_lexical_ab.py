"""BM25 and hybrid latency on an existing database that ``pg_search.py`` loaded, with the store code
on ``PYTHONPATH``: run it once per checkout against the same database, one after the other, for a
before/after of a change to the server-side ranking (the results' digest must be equal).

    PYTHONPATH=../old/src python benchmarks/pg_lexical_ab.py --url postgresql://.../bench_1000000_x --queries 100
"""
from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import hashlib  # noqa: E402
import json  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from pg_search import QUERY_NOISE, Vectors  # noqa: E402
from search import DIM, SEED, make_queries  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--url", required=True)
    ap.add_argument("--queries", type=int, default=100)
    ap.add_argument("--k", type=int, default=10)
    ap.add_argument("--modes", default="bm25,hybrid")
    args = ap.parse_args()
    import chunkwise
    from chunkwise.retrieve import Retriever

    queries = make_queries(args.queries, SEED)
    rng = np.random.default_rng([SEED, 98])
    out = {"src": str(Path(chunkwise.__file__).resolve().parents[1]), "load_before": os.getloadavg()}
    modes = args.modes.split(",")
    dense = any(m != "bm25" for m in modes)  # BM25 alone needs no query vectors (nor the store's model)
    with Retriever(args.url, embedder=Vectors({}) if dense else None) as r:
        from chunkwise.store.postgres.postgres_read import as_array

        stored = [as_array(v) for (v,) in r.store.db.execute(
            "SELECT vector FROM chunks WHERE servable ORDER BY key LIMIT 8")] if dense else []
        for i, (q, _) in enumerate(queries if dense else ()):
            v = stored[i % len(stored)] + QUERY_NOISE * rng.standard_normal(DIM).astype(np.float32) / np.sqrt(DIM)
            r.embedder.table[q] = (v / np.linalg.norm(v)).astype(np.float32)
        for mode in modes:
            r.rank(queries[0][0], queries[0][1], args.k, mode)  # warm
            walls, digest = [], hashlib.sha256()
            for q, g in queries:
                t0 = time.perf_counter()
                got = r.rank(q, g, args.k, mode)
                walls.append(time.perf_counter() - t0)
                rows = {c.key: c for c in r.store.chunks(keys=[key for key, _ in got])}
                digest.update(json.dumps([[rows[key].record["chunk_id"], round(s, 9)] for key, s in got]).encode())
            w = np.array(walls) * 1e3
            out[mode] = {"p50_ms": float(np.percentile(w, 50)), "p95_ms": float(np.percentile(w, 95)),
                         "results_sha256": digest.hexdigest()[:16]}
    out["load_after"] = os.getloadavg()
    print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
