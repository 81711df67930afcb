"""Build, once, the two PostgreSQL stores the 1M-row filtered dense benchmark reads
(benchmarks/pg_filtered_recall.py ``--pgdata``): issue 25 item 10 at 1M rows.

- database ``f100k``: 100,000 generated chunks, every document tagged ``b<d % 100>`` (``d`` its
  number), so a caller holding ``b00 .. b{f-1}`` may see about f% of them;
- database ``f1m``: a copy of ``f100k`` (``CREATE DATABASE .. TEMPLATE``: the same rows, byte for
  byte) plus 900,000 more chunks tagged ``c<d % 100>``: 1,000,000 rows. A caller holding ``b00 ..
  b{f-1}`` keeps exactly the rows it had (now f/10 % of the store: ten times as many rows, all the
  new ones hidden from it); a caller holding ``b00 .. b{f-1}`` and ``c00 .. c{f-1}`` may see about
  f% of the million.

Data: the search benchmark's generator (benchmarks/search.py's documents of 4-16 chunks of Zipf
pseudo-words: real row widths, so an exact scan pays real heap reads), 384-d vectors (the default
model's dimension) around one set of 2,000 random centres for every row (the hidden rows lie in the
same neighbourhoods as the caller's: the hard case for a filtered walk), loaded by binary COPY from
two processes with the secondary indexes dropped and rebuilt; the HNSW index is the store's own
(``Store.run``'s finish), built with ``maintenance_work_mem`` large enough for its graph.

    PYTHONPATH=src .venv/bin/python benchmarks/pg_filtered_build.py --pgdata DIR/pgdata
"""
from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from pg_search import _DROPPED, _STAGE, BATCH, DOCS_PER_BATCH, _centres, bulk_write, clustered  # noqa: E402
from search import SEED, make_docs, vocabulary, zipf_sampler  # noqa: E402

BASE_ROWS = 100_000
TOTAL_ROWS = 1_000_000
_worker: dict = {}


def _open_worker(url: str, seed: int) -> None:
    import atexit

    from chunkwise.store import open_store

    store = open_store(url)
    atexit.register(store.close)
    store.db.execute(f"CREATE TEMP TABLE bench_stage ({_STAGE})")
    _worker.update(store=store, seed=seed, words=vocabulary(), centres=_centres(seed, 0))


def _load_batch(b: int) -> tuple[int, int, np.ndarray]:
    """Batch ``b`` (its own random stream and document numbers): tags ``b<d % 100>`` in the first
    ``BASE_ROWS``, ``c<d % 100>`` after."""
    w, store = _worker, _worker["store"]
    rng = np.random.default_rng([w["seed"], 0, b])
    docs, _ = make_docs(rng, w["words"], zipf_sampler(rng), b * DOCS_PER_BATCH, BATCH)
    prefix = "b" if b * BATCH < BASE_ROWS else "c"
    for doc_row, records in docs:
        number = int(doc_row["doc_id"].rsplit("doc", 1)[1].split(".")[0])
        for r in records:
            r["acl"] = [f"{prefix}{number % 100:02d}"]
    vecs = clustered(rng, w["centres"], sum(len(r) for _, r in docs))
    with store.atomic():
        bulk_write(store.db, docs, vecs)
    return b, len(vecs), vecs[rng.integers(0, len(vecs), 8)]


def load(url: str, batches: range, seed: int, memory_gb: int) -> None:
    """The batches into the store at ``url``: secondary and HNSW indexes dropped, rows written by two
    processes, indexes rebuilt, per-tag-set statistics summed again, HNSW built by ``Store.run``'s finish."""
    import multiprocessing

    from chunkwise.store import open_store

    t0 = time.perf_counter()
    with open_store(url) as store:
        schema = _unindexed(store.db)
        made = 0
        ctx = multiprocessing.get_context("spawn")
        with ctx.Pool(2, initializer=_open_worker, initargs=(url, seed)) as pool:
            for _, count, _ in pool.imap_unordered(_load_batch, batches):
                made += count
                print(f"  {made:,} chunks, {made / (time.perf_counter() - t0):,.0f}/s", file=sys.stderr, flush=True)
            pool.close()
            pool.join()
        _finish(store, schema, memory_gb, t0)


def _unindexed(db) -> dict:
    """Drop the secondary and HNSW indexes and the row triggers for a bulk load; returns the indexes'
    definitions. The BM25 postings trigger is off: this benchmark measures dense search only (the
    postings of the loaded rows are not built; ``acl_sets`` is filled by ``_finish``)."""
    schema = dict(db.execute("SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'chunks'"))
    for name in _DROPPED:
        db.execute(f"DROP INDEX IF EXISTS {name}")
    db.execute("DROP INDEX IF EXISTS vectors_hnsw")
    db.execute("ALTER TABLE chunks DISABLE TRIGGER USER")
    # The `dense` table (migration 10) is kept by triggers on `vectors` too; with chunks_embed_key
    # dropped each inserted vector's trigger would scan all of `chunks` (quadratic): off, and
    # `dense` is filled in one statement by _finish.
    db.execute("ALTER TABLE vectors DISABLE TRIGGER USER")
    db.execute("DROP INDEX IF EXISTS dense_acl")
    db.execute("TRUNCATE dense")
    return schema


def _finish(store, schema: dict, memory_gb: int, t0: float) -> None:
    db = store.db
    db.execute("ALTER TABLE chunks ENABLE TRIGGER USER")
    db.execute("ALTER TABLE vectors ENABLE TRIGGER USER")
    db.execute(f"SET maintenance_work_mem = '{memory_gb}GB'")
    db.execute("SET max_parallel_maintenance_workers = 1")
    for name in _DROPPED:
        db.execute(schema[name])
    from chunkwise.store.postgres.pg_dense import ACL_INDEX_SQL, FILL_SQL

    db.execute(FILL_SQL)
    db.execute(ACL_INDEX_SQL)
    db.execute("INSERT INTO roots (root) VALUES ('synthetic') ON CONFLICT DO NOTHING")
    db.execute("DELETE FROM acl_stats")
    db.execute("INSERT INTO acl_stats (acl, rows, total_len) SELECT acl, count(*), sum(lex_len)"
               " FROM chunks WHERE servable GROUP BY acl")
    db.execute("INSERT INTO acl_sets (acl) SELECT acl FROM acl_stats ORDER BY acl ON CONFLICT (acl) DO NOTHING")
    print(f"  loaded in {time.perf_counter() - t0:.0f} s", file=sys.stderr, flush=True)
    db.execute("VACUUM ANALYZE")
    t1 = time.perf_counter()
    with store.run("2024-06-05T00:00:00Z") as finish:
        finish("2024-06-05T00:00:00Z", {}, {"embedder": "x"})
    print(f"  HNSW build {time.perf_counter() - t1:.0f} s", file=sys.stderr, flush=True)


def replicate(url: str, copies: int, seed: int, memory_gb: int) -> None:
    """``copies`` more copies of every document already stored (the texts and analysed fields of
    the originals, so rows are as wide as real ones), each copy's document tagged
    ``c<hash(doc_id) % 100>`` and each chunk given a fresh vector around the same centres: the
    generator's Python analysis of 900k more chunks would take an hour on this machine."""
    from pg_search import DIM, MODEL

    from chunkwise.store import open_store

    t0 = time.perf_counter()
    centres = _centres(seed, 0)
    with open_store(url) as store:
        db = store.db
        schema = _unindexed(db)
        keys = [k for (k,) in db.execute("SELECT embed_key FROM vectors ORDER BY embed_key")]
        doc_cols = [c for (c,) in db.execute("SELECT column_name FROM information_schema.columns WHERE"
                                             " table_name = 'documents' ORDER BY ordinal_position")]
        chunk_cols = [c for (c,) in db.execute("SELECT column_name FROM information_schema.columns WHERE"
                                               " table_name = 'chunks' AND column_name != 'key' ORDER BY ordinal_position")]
        for r in range(1, copies + 1):
            s = f"'#{r}'"
            tag = f"'c' || to_char(abs(hashtext(doc_id || {s})) % 100, 'FM00')"
            d_expr = {"doc_id": f"doc_id || {s}", "path": f"path || {s}", "source_uri": f"source_uri || {s}"}
            c_expr = {"chunk_id": f"chunk_id || {s}", "doc_id": f"doc_id || {s}", "embed_key": f"embed_key || {s}",
                      "acl": f"ARRAY[{tag}]",
                      "record": f"record || jsonb_build_object('chunk_id', chunk_id || {s}, 'doc_id', doc_id || {s},"
                                f" 'acl', jsonb_build_array({tag}))"}
            with store.atomic():
                db.execute(f"INSERT INTO documents ({', '.join(doc_cols)}) SELECT"
                           f" {', '.join(d_expr.get(c, c) for c in doc_cols)} FROM documents WHERE doc_id NOT LIKE '%#%'")
                db.execute(f"INSERT INTO chunks ({', '.join(chunk_cols)}) SELECT"
                           f" {', '.join(c_expr.get(c, c) for c in chunk_cols)} FROM chunks WHERE doc_id NOT LIKE '%#%'")
                vecs = clustered(np.random.default_rng([seed, 7, r]), centres, len(keys))
                with db.cursor() as cur:
                    with cur.copy("COPY vectors (embed_key, model, dim, vector) FROM STDIN (FORMAT BINARY)") as copy:
                        copy.set_types(["text", "text", "int4", "vector"])
                        for k, v in zip(keys, vecs):
                            copy.write_row([f"{k}#{r}", MODEL, DIM, v])
            print(f"  copy {r}: {time.perf_counter() - t0:.0f} s", file=sys.stderr, flush=True)
        _finish(store, schema, memory_gb, t0)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pgdata", type=Path, required=True, help="the server's data folder (kept; reused by the benchmark)")
    ap.add_argument("--seed", type=int, default=SEED)
    args = ap.parse_args()
    import pgserver
    import psycopg

    srv = pgserver.get_server(args.pgdata, cleanup_mode="stop")
    with psycopg.connect(srv.get_uri(), autocommit=True) as admin:
        have = {r[0] for r in admin.execute("SELECT datname FROM pg_database")}
        if "f100k" not in have:
            admin.execute("CREATE DATABASE f100k")
            with psycopg.connect(srv.get_uri("f100k"), autocommit=True) as db:
                db.execute("CREATE EXTENSION IF NOT EXISTS vector")
            load(srv.get_uri("f100k"), range(BASE_ROWS // BATCH), args.seed, 1)
        if "f1m" not in have:
            admin.execute("CREATE DATABASE f1m TEMPLATE f100k")
            replicate(srv.get_uri("f1m"), TOTAL_ROWS // BASE_ROWS - 1, args.seed, 4)
    srv.cleanup()
    return 0


if __name__ == "__main__":
    sys.exit(main())
