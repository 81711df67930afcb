"""Search latency by the number of groups a caller holds (issue 25 item 13): 1, 64 and 1,000 groups,
on SQLite and PostgreSQL, BM25, dense and hybrid, through ``Retriever.search`` (what ``chunkwise
search`` and the server run).

Data: the search benchmark's generator (benchmarks/search.py: Zipf pseudo-words, documents of 4-16
chunks, 1% of chunks in review, 384-d random unit vectors under the ``hashing-384@1`` name), but
each document tagged with one of ``--tags`` team groups (2,000 by default), so a directory user's
hundreds of groups each select a few documents. Two kinds of caller per group count:

- ``spread``: every group tags documents, so the caller sees more rows as they hold more groups
  (1,000 of 2,000 groups: about half the store);
- ``one used``: one group that tags documents plus groups that tag nothing (a directory's
  mailing lists, roles): the same rows at every count, so the difference is what the group count
  itself costs. A filter that turned into a scan of the whole store would show here.

Eight callers of each kind rotate through the queries (the indexes cache a few group sets, as
callers repeat theirs). Every result is checked against the caller's groups (``leaks`` must be 0).
The PostgreSQL server is a pgserver in a temporary folder (stopped at the end).

    .venv/bin/python benchmarks/groups_latency.py [--chunks 20000] [--queries 100] [--backends sqlite,postgresql]
"""
from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

import argparse  # noqa: E402
import json  # noqa: E402
import shutil  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from search import DIM, MODEL, SEED, make_docs, vocabulary, zipf_sampler  # noqa: E402

COUNTS = (1, 64, 1000)
CALLERS = 8


def team(i: int) -> str:
    return f"team{i:04d}"


def generate(n: int, tags: int, seed: int):
    """(documents, vectors): each document's chunks all tagged with one team group."""
    rng = np.random.default_rng([seed, n, tags])
    words, sample = vocabulary(), zipf_sampler(rng)
    docs, _ = make_docs(rng, words, sample, 0, n)
    for _, records in docs:
        tag = [team(int(rng.integers(0, tags)))]
        for r in records:
            r["acl"] = tag
    vecs = rng.standard_normal((n, DIM), dtype=np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    return docs, vecs


def write(store, docs, vecs) -> None:
    """Through the store's own per-document apply step, many documents per transaction."""
    from chunkwise.store import DocumentDiff, DocumentRow

    at = 0
    for start in range(0, len(docs), 500):
        with store.atomic():
            for doc_row, records in docs[start:start + 500]:
                vectors = {r["embed_key"]: vecs[at + i].tolist() for i, r in enumerate(records)}
                at += len(records)
                store._apply(DocumentRow(path=doc_row["doc_id"], **doc_row),
                             DocumentDiff(added=records, vectors=vectors, vector_model=MODEL))
    with store.run("2024-06-05T00:00:00Z") as finish:
        finish("2024-06-05T00:00:00Z", {}, {"embedder": MODEL})


def callers(kind: str, count: int, used: list[str], seed: int) -> list[tuple[str, ...]]:
    """``CALLERS`` group sets of ``count`` groups: drawn from the groups that tag documents
    (``spread``), or one of those plus groups that tag nothing (``one used``)."""
    rng = np.random.default_rng([seed, count, 0 if kind == "spread" else 1])
    out = []
    for _ in range(CALLERS):
        if kind == "spread":
            chosen = [used[int(i)] for i in rng.choice(len(used), count, replace=False)]
        else:
            chosen = [used[int(rng.integers(0, len(used)))]] + [f"list{int(i):05d}" for i in
                                                              rng.choice(50_000, count - 1, replace=False)]
        out.append(tuple(sorted(chosen)))
    return out


def queries(n: int, seed: int) -> list[str]:
    rng = np.random.default_rng([seed, 7])
    words, sample = vocabulary(), zipf_sampler(rng)
    return [" ".join(words[sample(int(rng.integers(5, 13)))].tolist()) for _ in range(n)]


def permitted_rows(store, groups) -> int:
    from chunkwise.access import AccessTags

    rows = store.servable_rows()
    g = set(groups)
    return sum(1 for t in rows.tags if g.intersection(AccessTags.parse(list(t)).tags))


def measure(location: str, qs: list[str], used: list[str], seed: int, k: int) -> list[dict]:
    from chunkwise.retrieve import Retriever

    out = []
    with Retriever(location) as r:
        for kind in ("spread", "one used"):
            for count in COUNTS:
                group_sets = callers(kind, count, used, seed)
                visible = float(np.mean([permitted_rows(r.store, g) for g in group_sets[:2]]))
                for mode in ("bm25", "dense", "hybrid"):
                    r.search(qs[0], group_sets[0], k=k, mode=mode)  # warm: loads, caches, the connection
                    walls, leaks, full = [], 0, 0
                    for i, q in enumerate(qs):
                        g = group_sets[i % len(group_sets)]
                        t0 = time.perf_counter()
                        result = r.search(q, g, k=k, mode=mode)
                        walls.append(time.perf_counter() - t0)
                        full += len(result.passages) == k
                        leaks += sum(1 for p in result.passages if not set(p.acl) & set(g))
                    w = np.array(walls) * 1e3
                    out.append({"caller": kind, "groups": count, "mode": mode, "visible_rows": visible,
                                "p50_ms": float(np.percentile(w, 50)), "p95_ms": float(np.percentile(w, 95)),
                                "full": full, "queries": len(qs), "leaks": leaks})
                    print(f"  {kind:8s} {count:5d} groups {mode:6s} p50 {out[-1]['p50_ms']:8.2f} ms"
                          f"  p95 {out[-1]['p95_ms']:8.2f} ms  leaks {leaks}", file=sys.stderr, flush=True)
    return out


def run_sqlite(folder: Path, docs, vecs, qs, used, seed, k) -> list[dict]:
    from chunkwise.store import SQLiteStore

    path = folder / "groups.db"
    with SQLiteStore(path) as store:
        write(store, docs, vecs)
    return measure(str(path), qs, used, seed, k)


def run_postgres(docs, vecs, qs, used, seed, k) -> list[dict]:
    import pgserver
    import psycopg

    from chunkwise.store import open_store

    folder = Path(tempfile.mkdtemp(prefix="chunkwise-groups-"))
    srv = pgserver.get_server(folder / "data", cleanup_mode="stop")
    try:
        with psycopg.connect(srv.get_uri(), autocommit=True) as admin:
            admin.execute("CREATE DATABASE groups_bench")
        url = srv.get_uri("groups_bench")
        with psycopg.connect(url, autocommit=True) as db:
            db.execute("CREATE EXTENSION IF NOT EXISTS vector")
        with open_store(url) as store:
            write(store, docs, vecs)
            store.db.execute("ANALYZE")
        return measure(url, qs, used, seed, k)
    finally:
        srv.cleanup()
        shutil.rmtree(folder, ignore_errors=True)


def report(results: dict, args, commit: str) -> str:
    lines = [f"Search latency by groups per caller: {args.chunks:,} chunks, {args.tags:,} team groups (one per "
             f"document, {results['_used']:,} of them used), k={args.k}, {args.queries} queries per row, {CALLERS} callers rotating; "
             f"`Retriever.search` wall time; commit {commit}.", "",
             "| backend | caller | groups | rows visible | BM25 p50 / p95 ms | dense p50 / p95 ms | hybrid p50 / p95 ms "
             "| leaks |", "|---|---|---:|---:|---:|---:|---:|---:|"]
    for backend, rows in results.items():
        if backend.startswith("_"):
            continue
        for kind in ("spread", "one used"):
            for count in COUNTS:
                sel = {r["mode"]: r for r in rows if r["caller"] == kind and r["groups"] == count}
                cells = [f"{sel[m]['p50_ms']:.1f} / {sel[m]['p95_ms']:.1f}" for m in ("bm25", "dense", "hybrid")]
                leaks = sum(r["leaks"] for r in sel.values())
                lines.append(f"| {backend} | {kind} | {count:,} | {sel['bm25']['visible_rows']:,.0f} | "
                             + " | ".join(cells) + f" | {leaks} |")
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--chunks", type=int, default=20_000)
    ap.add_argument("--tags", type=int, default=2_000, help="team groups, one per document")
    ap.add_argument("--queries", type=int, default=100)
    ap.add_argument("--k", type=int, default=10)
    ap.add_argument("--seed", type=int, default=SEED)
    ap.add_argument("--backends", default="sqlite,postgresql")
    ap.add_argument("--json", help="write the raw figures here")
    args = ap.parse_args(argv)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                            cwd=Path(__file__).parent).stdout.strip()
    docs, vecs = generate(args.chunks, args.tags, args.seed)
    qs = queries(args.queries, args.seed)
    used = sorted({records[0]["acl"][0] for _, records in docs})
    if len(used) < max(COUNTS):
        raise SystemExit(f"only {len(used)} groups tag documents; use more --chunks or --tags")
    results: dict = {}
    with tempfile.TemporaryDirectory(prefix="chunkwise-groups-") as tmp:
        for backend in args.backends.split(","):
            print(f"{backend}:", file=sys.stderr, flush=True)
            if backend == "sqlite":
                results[backend] = run_sqlite(Path(tmp), docs, vecs, qs, used, args.seed, args.k)
            elif backend == "postgresql":
                results[backend] = run_postgres(docs, vecs, qs, used, args.seed, args.k)
            else:
                raise SystemExit(f"unknown backend {backend!r}")
    results["_used"] = len(used)
    if args.json:
        Path(args.json).write_text(json.dumps({"args": vars(args), "commit": commit, "results": results}, indent=1))
    print(report(results, args, commit))
    return 0


if __name__ == "__main__":
    sys.exit(main())
