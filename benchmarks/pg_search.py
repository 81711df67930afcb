"""Search inside PostgreSQL + pgvector at 100k / 1M generated chunks (issue 12): BM25 (scored in the server over
the permitted rows' postings), dense (filtered HNSW; recall@10 against the exact filtered top-10),
hybrid (RRF), with the access filter on, plus load and index build times.

Data: the search benchmark's generator (benchmarks/search.py: Zipf pseudo-words, documents of 4-16
chunks, 20 access groups, one or two tags per document, 1% review chunks), written through the
PostgreSQL store's rows (``--loader copy``: its row builder, binary COPY; ``apply``: its own
per-document apply step, many documents per transaction), and 384-d vectors
drawn around 2,000 random centres (unit length; embeddings cluster, uniform random vectors do not).
Query vectors are stored vectors plus noise; callers hold 3 of the 20 groups (about 22% of rows).

The server is a pgserver PostgreSQL 16 in a temporary folder (stopped at the end) unless --url
names one. Every query goes through ``Retriever.rank`` (the code ``chunkwise search`` runs); the
dense rows are measured three ways: the store's own choice (exact scan of the permitted rows up to
``EXACT_ROWS``, else HNSW), HNSW forced, and the exact scan forced (the truth for recall).

    .venv/bin/python benchmarks/pg_search.py --sizes 100k [--queries 200] [--json FILE] [--loader copy|apply]
    .venv/bin/python benchmarks/pg_search.py --sizes 100k,1M --url postgresql://...   # an existing server
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
import tempfile  # noqa: E402
import time  # noqa: E402
import uuid  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from search import DIM, GROUPS, MODEL, SEED, make_docs, make_queries, vocabulary, zipf_sampler  # noqa: E402

CENTRES = 2_000
SPREAD = 0.6  # noise around a centre, per dimension, relative to the centre's own scale
QUERY_NOISE = 0.3


def parse_size(text: str) -> int:
    text = text.strip().lower()
    return int(float(text[:-1]) * (1_000 if text[-1] == "k" else 1_000_000)) if text[-1] in "km" else int(text)


def clustered(rng, centres, n: int) -> np.ndarray:
    picks = rng.integers(0, len(centres), n)
    v = centres[picks] + SPREAD * rng.standard_normal((n, DIM), dtype=np.float32) / np.sqrt(DIM)
    return (v / np.linalg.norm(v, axis=1, keepdims=True)).astype(np.float32)


_DROPPED = ("chunks_doc", "chunks_embed_key", "chunks_acl", "chunks_lex")  # rebuilt after a bulk load


_STAGE = ("chunk_id text, doc_id text, chunk_index int4, record jsonb, text text, embed_text text, embed_model text,"
          " embed_key text, acl text[], quality text, size int4, servable bool, lex_terms text[], lex_tf jsonb,"
          " lex_len int4, lex_body text, lex_title text, lex_heading text")
_COLUMNS = [c.split(" ", 1) for c in _STAGE.split(", ")]


def bulk_write(db, docs, vecs) -> None:
    """One batch by binary COPY: the rows the store's own apply step writes (``postgres._row``), into
    a staging table, then into ``chunks`` (terms to ``tsvector`` by ``array_to_tsvector``, as the
    store does); documents and the vectors table likewise; statistics are summed after the load."""
    from chunkwise.store.postgres.postgres import _row

    with db.cursor() as cur:
        with cur.copy("COPY documents (doc_id, root, path, source_uri, source_version, inputs, title, author,"
                      " updated_at, ingested_at, chunk_count) FROM STDIN") as copy:
            for doc_row, _ in docs:
                copy.write_row([doc_row["doc_id"], doc_row["root"], doc_row["doc_id"], doc_row["source_uri"],
                                doc_row["source_version"], doc_row["inputs"], doc_row["title"], doc_row["author"],
                                doc_row["updated_at"], doc_row["ingested_at"], doc_row["chunk_count"]])
        records = [r for _, rs in docs for r in rs]
        with cur.copy("COPY bench_stage FROM STDIN (FORMAT BINARY)") as copy:
            copy.set_types([t for _, t in _COLUMNS])
            for r in records:
                copy.write_row(list(_row(r)))
        names = ", ".join(n for n, _ in _COLUMNS)
        cur.execute(f"INSERT INTO chunks ({names.replace('lex_terms', 'lex')}) SELECT"
                    f" {names.replace('lex_terms', 'array_to_tsvector(lex_terms)')} FROM bench_stage")
        cur.execute("TRUNCATE bench_stage")
        with cur.copy("COPY vectors (embed_key, model, dim, vector) FROM STDIN (FORMAT BINARY)") as copy:
            copy.set_types(["text", "text", "int4", "vector"])
            for r, v in zip(records, vecs):
                copy.write_row([r["embed_key"], MODEL, DIM, v])


BATCH = 5_000  # chunks per batch (one transaction)
DOCS_PER_BATCH = BATCH // 4 + 1  # documents hold >= 4 chunks: each batch numbers its own documents
_worker: dict = {}


def _centres(seed: int, n: int) -> np.ndarray:
    c = np.random.default_rng([seed, n, 1]).standard_normal((CENTRES, DIM), dtype=np.float32)
    return c / np.linalg.norm(c, axis=1, keepdims=True)


def _open_worker(url: str, seed: int, n: int, loader: str) -> None:
    """A loading process: its own connection (its own staging table), the shared vocabulary and centres."""
    import atexit

    from chunkwise.store import open_store

    store = open_store(url)
    atexit.register(store.close)
    if loader == "copy":
        store.db.execute(f"CREATE TEMP TABLE bench_stage ({_STAGE})")
    _worker.update(store=store, seed=seed, n=n, loader=loader, words=vocabulary(), centres=_centres(seed, n))


def _load_batch(b: int) -> tuple[int, int, np.ndarray]:
    """Batch ``b``: its own random stream (``[seed, n, 0, b]``) and document numbers, so the data is
    the same whichever process makes it and in whatever order; returns (b, chunks, sample vectors)."""
    from chunkwise.store import DocumentDiff, DocumentRow

    w, store = _worker, _worker["store"]
    rng = np.random.default_rng([w["seed"], w["n"], 0, b])
    size = min(BATCH, w["n"] - b * BATCH)
    docs, _ = make_docs(rng, w["words"], zipf_sampler(rng), b * DOCS_PER_BATCH, size)
    vecs = clustered(rng, w["centres"], sum(len(r) for _, r in docs))
    with store.atomic():
        if w["loader"] == "copy":
            bulk_write(store.db, docs, vecs)
        else:
            at = 0
            for doc_row, records in docs:  # many documents per transaction: the store's own apply step
                vectors = {r["embed_key"]: vecs[at + i] for i, r in enumerate(records)}
                at += len(records)
                store._apply(DocumentRow(path=doc_row["doc_id"], **doc_row),
                             DocumentDiff(added=records, vectors=vectors, vector_model=MODEL))
    return b, len(vecs), vecs[rng.integers(0, len(vecs), 8)]


def load(url: str, n: int, seed: int, loader: str, processes: int = 2):
    """Generate ``n`` chunks into the store at ``url``; returns (load s, index build s, sample vectors, sizes).

    Batches of ``BATCH`` chunks are made and written by ``processes`` loading processes at once
    (each one connection, one transaction per batch: the generator's Python and the server's work
    overlap on the two cores). ``apply``: the store's own per-document apply step (what ingest
    runs; many documents per transaction). ``copy``: the same rows by COPY with the secondary
    indexes dropped during the load and rebuilt after it, and the per-tag-set statistics summed
    once (a bulk load, not an ingest)."""
    import multiprocessing

    from chunkwise.store import open_store

    t0 = time.perf_counter()
    with open_store(url) as store:
        schema = dict(store.db.execute("SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'chunks'"))
        if loader == "copy":
            for name in _DROPPED:
                store.db.execute(f"DROP INDEX {name}")
        kept, made = {}, 0
        ctx = multiprocessing.get_context("spawn")  # no inherited connection
        with ctx.Pool(processes, initializer=_open_worker, initargs=(url, seed, n, loader)) as pool:
            for b, count, sample in pool.imap_unordered(_load_batch, range(-(-n // BATCH))):
                kept[b] = sample
                made += count
                print(f"  {made:,}/{n:,} chunks, {made / (time.perf_counter() - t0):,.0f} chunks/s", file=sys.stderr,
                      flush=True)
            pool.close()
            pool.join()
        # The graph fits in memory (no slow second build phase); one parallel worker beside the leader.
        store.db.execute(f"SET maintenance_work_mem = '{max(1, -(-n * 4 // 1_000_000))}GB'")
        store.db.execute("SET max_parallel_maintenance_workers = 1")
        if loader == "copy":
            for name in _DROPPED:
                store.db.execute(schema[name])
            store.db.execute("INSERT INTO roots (root) VALUES ('synthetic') ON CONFLICT DO NOTHING")
            store.db.execute("INSERT INTO acl_stats (acl, rows, total_len) SELECT acl, count(*), sum(lex_len)"
                             " FROM chunks WHERE servable GROUP BY acl")
        loaded = time.perf_counter() - t0
        store.db.execute("ANALYZE")
        t1 = time.perf_counter()
        with store.run("2024-06-05T00:00:00Z") as finish:
            finish("2024-06-05T00:00:00Z", {}, {"embedder": MODEL})
        built = time.perf_counter() - t1
        size = store.db.execute("SELECT pg_database_size(current_database())").fetchone()[0]
        index = store.db.execute("SELECT pg_relation_size('vectors_hnsw')").fetchone()[0]
    return loaded, built, np.vstack([kept[b] for b in sorted(kept)]), size, index


class Vectors:
    """The query embedder: a fixed vector per query text (the store's model name)."""

    name, dim = MODEL, DIM

    def __init__(self, table: dict) -> None:
        self.table = table

    def embed(self, texts):
        return [self.table[t] for t in texts]


def query_vectors(queries, samples: np.ndarray, seed: int) -> dict:
    """Each query's vector: a stored vector plus noise (unit length), the same for every benchmark
    that searches these stores."""
    rng = np.random.default_rng([seed, 99])
    table = {}
    for i, (q, _) in enumerate(queries):
        v = samples[i % len(samples)] + QUERY_NOISE * rng.standard_normal(DIM).astype(np.float32) / np.sqrt(DIM)
        table[q] = (v / np.linalg.norm(v)).astype(np.float32)
    return table


def measure(url: str, n_queries: int, seed: int, samples: np.ndarray, k: int) -> dict:
    from chunkwise.retrieve import Retriever
    from chunkwise.store.postgres import postgres_read

    queries = make_queries(n_queries, seed)
    table = query_vectors(queries, samples, seed)
    out = {}
    with Retriever(url, embedder=Vectors(table)) as r:
        assert r.native
        permitted = [r.store.lexical_stats(g)[0] for _, g in queries[:20]]
        out["permitted_rows_mean"] = float(np.mean(permitted))
        tags = dict(r.store.db.execute("SELECT key, acl FROM chunks WHERE servable"))

        def run(name, mode, exact_rows=postgres_read.EXACT_ROWS):
            saved = postgres_read.EXACT_ROWS
            postgres_read.EXACT_ROWS = exact_rows
            walls, results, leaks = [], [], 0
            try:
                r.rank(queries[0][0], queries[0][1], k, mode)  # warm the connection and caches
                for q, g in queries:
                    t0 = time.perf_counter()
                    got = r.rank(q, g, k, mode)
                    walls.append(time.perf_counter() - t0)
                    results.append([key for key, _ in got])
                    leaks += sum(1 for key in results[-1] if not set(tags.get(key, ())) & set(g))
            finally:
                postgres_read.EXACT_ROWS = saved
            w = np.array(walls) * 1e3
            out[name] = {"p50_ms": float(np.percentile(w, 50)), "p95_ms": float(np.percentile(w, 95)),
                         "full": sum(len(x) == k for x in results), "queries": len(results), "leaks": leaks}
            return results

        run("bm25", "bm25")
        auto = run("dense (store's choice)", "dense")
        hnsw = run("dense (HNSW forced)", "dense", exact_rows=0)
        exact = run("dense (exact scan forced)", "dense", exact_rows=10**12)
        for name, got in (("dense (store's choice)", auto), ("dense (HNSW forced)", hnsw)):
            out[name]["recall_at_10"] = float(np.mean([len(set(a) & set(b)) / max(1, len(b)) for a, b in zip(got, exact)]))
        run("hybrid", "hybrid")
    return out


def server(url: str | None):
    if url:
        return url, None
    import pgserver

    folder = Path(tempfile.mkdtemp(prefix="chunkwise-pgbench-"))
    srv = pgserver.get_server(folder / "data", cleanup_mode="stop")
    import psycopg

    with psycopg.connect(srv.get_uri(), autocommit=True) as admin:  # a bulk load: fewer checkpoints
        admin.execute("ALTER SYSTEM SET max_wal_size = '8GB'")
        admin.execute("SELECT pg_reload_conf()")
    return srv, folder


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="100k")
    ap.add_argument("--queries", default="200", help="queries per size: one number, or one per size (200,100)")
    ap.add_argument("--processes", type=int, default=2, help="loading processes")
    ap.add_argument("--k", type=int, default=10)
    ap.add_argument("--seed", type=int, default=SEED)
    ap.add_argument("--url", help="an existing server's maintenance database URL (default: a pgserver in /tmp)")
    ap.add_argument("--json", type=Path)
    ap.add_argument("--loader", choices=("copy", "apply"), default="copy",
                    help="copy: COPY with indexes rebuilt after (default); apply: the store's per-document apply step")
    args = ap.parse_args()
    import psycopg

    srv, folder = server(args.url)
    base = srv if isinstance(srv, str) else srv.get_uri()
    report = {"commit": subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                                       cwd=Path(__file__).parent).stdout.strip(),
              "load_before": os.getloadavg(), "sizes": {}}
    try:
        with psycopg.connect(base, autocommit=True) as admin:
            report["server"] = admin.execute("SHOW server_version").fetchone()[0]
        sizes = [parse_size(s) for s in args.sizes.split(",")]
        per_size = [int(q) for q in args.queries.split(",")]
        for i, n in enumerate(sizes):
            n_queries = per_size[min(i, len(per_size) - 1)]
            name = f"bench_{n}_{uuid.uuid4().hex[:6]}"
            with psycopg.connect(base, autocommit=True) as admin:
                admin.execute(f"CREATE DATABASE {name}")
            url = base.replace("/postgres?", f"/{name}?") if "/postgres?" in base else base.rsplit("/", 1)[0] + "/" + name
            try:
                print(f"loading {n:,} chunks", file=sys.stderr, flush=True)
                loaded, built, samples, size, index = load(url, n, args.seed, args.loader, args.processes)
                row = {"chunks": n, "loader": args.loader, "load_s": loaded, "hnsw_build_s": built, "database_mb": size / 2**20,
                       "hnsw_mb": index / 2**20}
                row.update(measure(url, n_queries, args.seed, samples, args.k))
                row["load_after"] = os.getloadavg()
                report["sizes"][str(n)] = row
                print(json.dumps(row, indent=1), flush=True)
            finally:
                with psycopg.connect(base, autocommit=True) as admin:
                    admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
    finally:
        if folder is not None:
            srv.cleanup()
            shutil.rmtree(folder, ignore_errors=True)
    if args.json:
        args.json.write_text(json.dumps(report, indent=1))
    with_version = report.get("server", "?")
    print(f"\nPostgreSQL {with_version}, commit {report['commit']}, load {report['load_before']}")
    for n, row in report["sizes"].items():
        print(f"\n{int(n):,} chunks: load ({row['loader']}) {row['load_s']:.0f} s, HNSW build {row['hnsw_build_s']:.0f} s, "
              f"db {row['database_mb']:.0f} MB (HNSW {row['hnsw_mb']:.0f} MB), permitted rows/caller "
              f"{row['permitted_rows_mean']:,.0f}")
        for key, v in row.items():
            if isinstance(v, dict):
                recall = f"  recall@10 {v['recall_at_10']:.3f}" if "recall_at_10" in v else ""
                print(f"  {key:28s} p50 {v['p50_ms']:7.1f} ms  p95 {v['p95_ms']:7.1f} ms  full {v['full']}/"
                      f"{v['queries']}  leaks {v['leaks']}{recall}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
