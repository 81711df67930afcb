"""BM25 in PostgreSQL against SQLite on the same data (issue 26 item 2): p50/p95 as the store's owner,
as a ``pg-secure`` reader under row-level security, and SQLite's ranker, side by side in one run,
with the top-k ids compared (they must be the same except where scores tie). SQLite runs both its
BM25 engines: FTS5 (``chunkwise search``'s default) and the in-memory sparse index (``--bm25 sparse``).

Data: benchmarks/search.py's generated store (Zipf pseudo-words, documents of 4-16 chunks, 20
access groups, one or two tags per document, 1% review chunks; queries of 5-12 Zipf words, callers
of 3 groups), built once as SQLite into ``--cache`` and copied row by row (the PostgreSQL store's
own row builder, binary COPY) into a PostgreSQL store in a pgserver data folder kept in ``--cache``
too, so a rerun measures without rebuilding. During the copy the postings triggers are off and the
postings and per-tag-set statistics are built once afterwards by the migration's own SQL
(store/postgres/pg_bm25.py), as a bulk load would. Queries are interleaved (one engine after another per
query) so the machine's load hits all three alike; wall time per query, and CPU time per query: the
client process's plus, for PostgreSQL, its server backend's (from /proc: the server is local).

    PYTHONPATH=src .venv/bin/python benchmarks/pg_bm25.py --size 100k [--queries 200] [--cache DIR]
    PYTHONPATH=src .venv/bin/python benchmarks/pg_bm25.py --size 1M --generate --cache DIR --pgdata pgdata_1m \
        --queries 100 --exhaustive

A rerun with the same ``--cache`` and ``--pgdata`` reuses the store built before (``--build-only``
builds it and stops); the server is stopped when the run ends unless ``--keep-server``.
"""
from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import json  # noqa: E402
import sqlite3  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
import search  # noqa: E402
from pg_search import _COLUMNS, parse_size  # noqa: E402

READER = "bm25_reader"
SLICE = 5_000


def _copy_slice(job: tuple[str, str, int, int]) -> int:
    """Rows ``lo <= rowid < hi`` of the SQLite store into PostgreSQL (binary COPY of the PostgreSQL
    store's own rows, then into ``chunks`` with the lexemes as a tsvector)."""
    import psycopg

    from chunkwise.store import SQLiteStore
    from chunkwise.store.postgres.postgres import _row

    sqlite_path, url, lo, hi = job
    with SQLiteStore(sqlite_path, readonly=True) as src, psycopg.connect(url) as con:
        con.execute("SET search_path = chunkwise, public")
        con.execute("CREATE TEMP TABLE stage (" + ", ".join(f"{n} {t}" for n, t in _COLUMNS) + ")")
        rows = src.db.execute("SELECT c.rowid FROM chunks c WHERE c.rowid >= ? AND c.rowid < ?", (lo, hi)).fetchall()
        got = {c.key: c for c in src.chunks(keys=[r[0] for r in rows])}
        with con.cursor() as cur:
            with cur.copy("COPY stage FROM STDIN (FORMAT BINARY)") as copy:
                copy.set_types([t for _, t in _COLUMNS])
                for key in sorted(got):
                    c = got[key]
                    copy.write_row(list(_row({**c.record, "acl": list(c.acl), "quality": c.quality})))
            names = ", ".join(n for n, _ in _COLUMNS)
            cur.execute(f"INSERT INTO chunks ({names.replace('lex_terms', 'lex')}) SELECT"
                        f" {names.replace('lex_terms', 'array_to_tsvector(lex_terms)')} FROM stage")
        con.commit()
    return len(got)


def _generate_slice(job: tuple[str, int, int, int]) -> int:
    """Batch ``b`` of pg_search's generator (its random stream and document numbers, no vectors)
    straight into PostgreSQL: for sizes whose SQLite store is not built (``--generate``)."""
    import psycopg

    from chunkwise.store.postgres.postgres import _row
    from pg_search import BATCH, DOCS_PER_BATCH

    url, seed, n, b = job
    rng = np.random.default_rng([seed, n, 0, b])
    docs, _ = search.make_docs(rng, search.vocabulary(), search.zipf_sampler(rng), b * DOCS_PER_BATCH,
                               min(BATCH, n - b * BATCH))
    with psycopg.connect(url) as con:
        con.execute("SET search_path = chunkwise, public")
        con.execute("CREATE TEMP TABLE stage (" + ", ".join(f"{c} {t}" for c, t in _COLUMNS) + ")")
        with con.cursor() as cur:
            with cur.copy("COPY documents (doc_id, root, path, source_uri, source_version, inputs, title, author,"
                          " updated_at, ingested_at, chunk_count) FROM STDIN") as copy:
                for d, _ in docs:
                    copy.write_row([d["doc_id"], "synthetic", d["doc_id"], d["source_uri"], d["source_version"],
                                    d["inputs"], d["title"], d["author"], d["updated_at"], d["ingested_at"],
                                    d["chunk_count"]])
            with cur.copy("COPY stage FROM STDIN (FORMAT BINARY)") as copy:
                copy.set_types([t for _, t in _COLUMNS])
                for _, records in docs:
                    for r in records:
                        copy.write_row(list(_row(r)))
            names = ", ".join(c for c, _ in _COLUMNS)
            cur.execute(f"INSERT INTO chunks ({names.replace('lex_terms', 'lex')}) SELECT"
                        f" {names.replace('lex_terms', 'array_to_tsvector(lex_terms)')} FROM stage")
        con.commit()
    return sum(len(r) for _, r in docs)


def build_postgres(sqlite_path: Path | None, url: str, processes: int, n: int, seed: int) -> float:
    """The SQLite store's rows (or, without one, the generator's) into a fresh PostgreSQL store at
    ``url``; returns seconds."""
    import multiprocessing

    from chunkwise.store import open_store
    from chunkwise.store.postgres import pg_bm25
    from pg_search import BATCH

    t0 = time.perf_counter()
    with open_store(url) as store:
        db = store.db
        db.execute("ALTER TABLE chunks DISABLE TRIGGER postings_insert")
        db.execute("INSERT INTO roots (root) VALUES ('synthetic') ON CONFLICT DO NOTHING")
        db.commit()
        if sqlite_path is None:
            work, jobs = _generate_slice, [(url, seed, n, b) for b in range(-(-n // BATCH))]
        else:
            src = sqlite3.connect(sqlite_path)
            with db.cursor() as cur, cur.copy("COPY documents (doc_id, root, path, source_uri, source_version, inputs,"
                                              " title, author, updated_at, ingested_at, chunk_count) FROM STDIN") as copy:
                for row in src.execute("SELECT doc_id, 'synthetic', path, source_uri, source_version, inputs, title,"
                                       " author, updated_at, ingested_at, chunk_count FROM documents"):
                    copy.write_row(row)
            db.commit()
            top = src.execute("SELECT max(rowid) FROM chunks").fetchone()[0]
            src.close()
            work, jobs = _copy_slice, [(str(sqlite_path), url, lo, lo + SLICE) for lo in range(1, top + 1, SLICE)]
        made = 0
        with multiprocessing.get_context("spawn").Pool(processes) as pool:
            for count in pool.imap_unordered(work, jobs):
                made += count
                print(f"  copied {made:,} chunks, {made / (time.perf_counter() - t0):,.0f}/s", file=sys.stderr, flush=True)
        db.execute("INSERT INTO acl_stats (acl, rows, total_len) SELECT acl, count(*), sum(lex_len) FROM chunks"
                   " WHERE servable GROUP BY acl")
        # the postings and statistics at once (the migration's SQL), the primary key built after them
        db.execute("SET maintenance_work_mem = '1GB'")
        db.execute("ALTER TABLE postings DROP CONSTRAINT postings_pkey")
        backfill = pg_bm25.MIGRATION[pg_bm25.MIGRATION.index("INSERT INTO acl_sets (acl) SELECT DISTINCT acl FROM chunks"):]
        db.execute(backfill.replace("FROM postings GROUP BY 1, 2", "FROM postings GROUP BY 1, 2 ORDER BY 1, 2"))
        db.execute("ALTER TABLE postings ADD PRIMARY KEY (lexeme, set_id, key) INCLUDE (len, f0, f1, f2)")
        db.execute("ALTER TABLE chunks ENABLE TRIGGER postings_insert")
        db.execute("INSERT INTO settings (key, value) VALUES ('bench', 'complete')")
        db.commit()
        db.autocommit = True
        db.execute("VACUUM ANALYZE")  # all-visible pages: index-only scans of the postings
    return time.perf_counter() - t0


def ensure_postgres(srv, sqlite_path: Path | None, n: int, processes: int, seed: int, reader: bool = True
                    ) -> tuple[str, float | None]:
    import psycopg

    name = f"bm25_{n}" + ("_gen" if sqlite_path is None else "")
    url = srv.get_uri(name)
    with psycopg.connect(srv.get_uri(), autocommit=True) as admin:
        exists = admin.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone()
        if exists:
            try:
                with psycopg.connect(url) as con:
                    done = con.execute("SELECT value FROM chunkwise.settings WHERE key = 'bench'").fetchone()
                if done:
                    if reader:
                        _secure(url)  # idempotent: a build stopped after its rows still gets its reader
                    return url, None
            except psycopg.Error:
                pass
            admin.execute(f"DROP DATABASE {name} WITH (FORCE)")
        admin.execute(f"CREATE DATABASE {name}")
        if not admin.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (READER,)).fetchone():
            admin.execute(f"CREATE ROLE {READER} LOGIN")
    print(f"building PostgreSQL {name} from {sqlite_path or 'the generator'}", file=sys.stderr, flush=True)
    seconds = build_postgres(sqlite_path, url, processes, n, seed)
    _secure(url)
    return url, seconds


def _secure(url: str) -> None:
    """The reader role made a ``pg-secure`` reader of the store (row-level security on)."""
    from chunkwise.cli.main import main as cli

    assert cli(["pg-secure", "--db", url, "--reader", READER]) == 0


def _server_cpu(pid: int | None) -> float:
    """CPU seconds the PostgreSQL backend serving a connection has used (0 for SQLite: in process)."""
    if pid is None:
        return 0.0
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def measure(engines: dict, queries, k: int) -> dict:
    """Per engine: wall and client-CPU ms per query (interleaved), and the top-k ids compared. An
    engine named "... exhaustive" is PostgreSQL with every term's postings scored (no pruning): the
    reference the pruned top k must equal where no SQLite store is built."""
    from chunkwise.retrieve import Retriever
    from chunkwise.store.postgres import pg_bm25

    opened = {name: Retriever(where, embedder=None, bm25="sparse" if "sparse" in name else "fts5")
              for name, where in engines.items()}
    backend = {name: r.store.db.execute("SELECT pg_backend_pid()").fetchone()[0]
               for name, r in opened.items() if hasattr(r.store.db, "info")}
    out = {name: {"wall": [], "cpu": []} for name in engines}
    ids: dict[str, list] = {name: [] for name in engines}
    try:
        for name, r in opened.items():  # warm the connections and caches
            for q, g in queries[:3]:
                r.rank(q, g, k, "bm25")
        for q, g in queries:
            for name, r in opened.items():
                saved = pg_bm25.BUDGET
                pg_bm25.BUDGET = 10 ** 12 if name.endswith("exhaustive") else saved
                s0, c0, t0 = _server_cpu(backend.get(name)), time.process_time(), time.perf_counter()
                try:
                    got = r.rank(q, g, k, "bm25")
                finally:
                    pg_bm25.BUDGET = saved
                out[name]["wall"].append(time.perf_counter() - t0)
                out[name]["cpu"].append(time.process_time() - c0 + _server_cpu(backend.get(name)) - s0)
                with r.store.as_caller(g):  # a reader sees rows only as a caller
                    rows = {c.key: c for c in r.store.chunks(keys=[key for key, _ in got])}
                ids[name].append([(rows[key].record["chunk_id"], score) for key, score in got])
    finally:
        for r in opened.values():
            r.close()
    first = next(iter(engines))
    for name in engines:
        w, c = np.array(out[name]["wall"]) * 1e3, np.array(out[name]["cpu"]) * 1e3
        same = ties = 0
        for a, b in zip(ids[first], ids[name]):
            if [x for x, _ in a] == [x for x, _ in b]:
                same += 1
            elif np.allclose(sorted(s for _, s in a), sorted(s for _, s in b), rtol=1e-6):
                ties += 1  # the same scores: a tie decided the other way
        out[name] = {"p50_ms": float(np.percentile(w, 50)), "p95_ms": float(np.percentile(w, 95)),
                     "cpu_p50_ms": float(np.percentile(c, 50)), "cpu_p95_ms": float(np.percentile(c, 95)),
                     "cpu_mean_ms": float(c.mean()), "same_ids": same, "tie_only": ties,
                     "queries": len(queries), "full": sum(len(x) == k for x in ids[name])}
    return out


def main() -> int:
    import pgserver

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--size", default="100k", help="chunks: 100k, 1M or a number (default 100k)")
    ap.add_argument("--queries", type=int, default=200, help="queries, each run by every engine (default 200)")
    ap.add_argument("--k", type=int, default=10, help="results per query compared (default 10)")
    ap.add_argument("--processes", type=int, default=2, help="loading processes of a build (default 2)")
    ap.add_argument("--cache", type=Path, default=Path(__file__).resolve().parent / ".cache" / "pgbm25",
                    help="folder of the SQLite store and the pgserver data folder, kept between runs (default %(default)s)")
    ap.add_argument("--pgdata", default="pgdata", help="the pgserver data folder's name inside --cache")
    ap.add_argument("--build-only", action="store_true", help="build the stores (if not built yet) and stop")
    ap.add_argument("--keep-server", action="store_true",
                    help="leave the pgserver running (another process uses it) and print the store's URL")
    ap.add_argument("--owner-only", action="store_true", help="no RLS reader row (pg-secure waits for a running VACUUM)")
    ap.add_argument("--generate", action="store_true",
                    help="PostgreSQL only, generated straight into it (no SQLite store: sizes it would take too long to build)")
    ap.add_argument("--exhaustive", action="store_true",
                    help="also PostgreSQL with no pruning (every term scored), the reference for the top-k ids")
    ap.add_argument("--json", type=Path, help="also write the figures to this file")
    args = ap.parse_args()
    n = parse_size(args.size)
    args.cache.mkdir(parents=True, exist_ok=True)
    search.CACHE = args.cache
    report = {"chunks": n, "load_before_build": os.getloadavg(),
              "commit": subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                                       cwd=Path(__file__).parent).stdout.strip()}
    sqlite_path = None
    if not args.generate:
        sqlite_path, report["sqlite_build_s"] = search.ensure_store(n, search.SEED)
    srv = pgserver.get_server(args.cache / args.pgdata, cleanup_mode=None if args.keep_server else "stop")
    try:
        url, report["postgres_build_s"] = ensure_postgres(srv, sqlite_path, n, args.processes, search.SEED,
                                                            reader=not args.owner_only)
        if args.keep_server:  # for other commands on the same store: chunkwise check --db URL, ...
            print(f"store (server left running): {url}", file=sys.stderr)
        if args.build_only:
            return 0
        reader = url.replace("postgresql://postgres:@", f"postgresql://{READER}@", 1)
        queries = search.make_queries(args.queries, search.SEED)
        engines = {"sqlite fts5": sqlite_path, "sqlite sparse": sqlite_path} if sqlite_path else {}
        if args.exhaustive:
            engines["postgres exhaustive"] = url
        engines["postgres owner"] = url
        if not args.owner_only:
            engines["postgres reader"] = reader
        report["load_before"] = os.getloadavg()  # the queries' (a build before them takes minutes)
        report["engines"] = measure(engines, queries, args.k)
        report["load_after"] = os.getloadavg()
    finally:
        srv.cleanup()
    if args.json:
        args.json.write_text(json.dumps(report, indent=1))
    e = report["engines"]
    print(f"\n{n:,} chunks, k={args.k}, {args.queries} queries, commit {report['commit']}, load "
          f"{' '.join(f'{x:.1f}' for x in report['load_before'])} -> {' '.join(f'{x:.1f}' for x in report['load_after'])}")
    for name, v in e.items():
        print(f"  {name:15s} p50 {v['p50_ms']:7.1f} ms  p95 {v['p95_ms']:7.1f} ms  CPU p50 {v['cpu_p50_ms']:5.1f} p95 {v['cpu_p95_ms']:5.1f} mean {v['cpu_mean_ms']:5.1f} ms"
              f"  same top-k ids as {next(iter(e))} {v['same_ids']}/{v['queries']} (+{v['tie_only']} only in a tie)"
              f"  full {v['full']}")
    owner, reader = e["postgres owner"], e.get("postgres reader")
    if reader:
        print(f"  reader / owner: wall p50 {reader['p50_ms'] / owner['p50_ms']:.2f}x, p95 {reader['p95_ms'] / owner['p95_ms']:.2f}x;"
              f" CPU mean {reader['cpu_mean_ms'] / owner['cpu_mean_ms']:.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
