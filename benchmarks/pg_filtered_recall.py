"""PostgreSQL dense search under the permission filter (issue 25 item 10): recall@10 against the
exact top 10 over exactly the caller's rows, and p50, for callers who may see 1%, 2%, 5% and 20% of
the rows; then the same callers again after ``--hidden`` times as many rows of another group are
added (recall must not move: the filter is not applied to an index walk that hidden rows fill).

Data: the search benchmark's generator (benchmarks/search.py; 384-d vectors around 2,000 random
centres, pg_search.py's COPY writer), every document tagged ``b<d % 100>`` (``d`` its number), so
the caller holding ``b00 .. b{f-1}`` may see about f% of the rows, spread over the whole space.
Each query is a stored vector plus noise. Three paths, each through ``dense_rank`` (the code
``chunkwise search --mode dense`` runs on PostgreSQL): the store's own choice (exact scan of the
permitted rows up to ``EXACT_ROWS``, else the HNSW walk with its exact fallback), the HNSW path
forced (``EXACT_ROWS`` = 0: what a caller above the threshold gets at scale) and the exact scan
forced (the truth). ``--rls`` repeats the store's choice as a row-level-security reader.

    .venv/bin/python benchmarks/pg_filtered_recall.py --rows 50k [--hidden 0] [--queries 50] [--rls]

At 1M rows (``--pgdata``: the server benchmarks/pg_filtered_build.py built once): callers of 1, 2,
5 and 20% of the 100k rows of database ``f100k``, then the same callers on ``f1m`` (those rows plus
900k rows of other groups: ten times the rows, the permitted rows fixed), recall against the exact
results on ``f100k``; then callers of 1-20% of the million (``b`` and ``c`` groups) on ``f1m``, as
owner and (``--rls``) as a row-level-security reader. CPU per query is the client's plus the
server backend's (``/proc``), over all queries of a path.

    .venv/bin/python benchmarks/pg_filtered_recall.py --pgdata DIR/pgdata --queries 40 --rls
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
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from pg_search import _STAGE, BATCH, DOCS_PER_BATCH, QUERY_NOISE, _centres, bulk_write, clustered, parse_size, server  # noqa: E402
from search import DIM, SEED, make_docs, vocabulary, zipf_sampler  # noqa: E402

FRACTIONS = (1, 2, 5, 20)  # percent of the rows a caller may see
HIDDEN_TAG = "others"


def _caller(percent: int) -> list[str]:
    return [f"b{i:02d}" for i in range(percent)]


def write(url: str, first_batch: int, n: int, seed: int, hidden: bool) -> np.ndarray:
    """``n`` chunks in batches (document numbers from ``first_batch``: a second call adds new
    documents); tags ``b<d % 100>``, or ``HIDDEN_TAG`` for every row when ``hidden``. The HNSW index
    is dropped first and rebuilt by ``Store.run``'s finish (one build, not 10x n single inserts); the
    per-tag-set statistics are summed again. Returns a sample of the written vectors."""
    from chunkwise.store import open_store

    words, centres, samples = vocabulary(), _centres(seed, 0), []
    with open_store(url) as store:
        store.db.execute(f"CREATE TEMP TABLE IF NOT EXISTS bench_stage ({_STAGE})")
        store.db.execute("DROP INDEX IF EXISTS vectors_hnsw")
        made, b = 0, first_batch
        while made < n:
            rng = np.random.default_rng([seed, 0, b])
            size = min(BATCH, n - made)
            docs, _ = make_docs(rng, words, zipf_sampler(rng), b * DOCS_PER_BATCH, size)
            for doc_row, records in docs:
                number = int(doc_row["doc_id"].rsplit("doc", 1)[1].split(".")[0])
                for r in records:
                    r["acl"] = [HIDDEN_TAG] if hidden else [f"b{number % 100:02d}"]
            vecs = clustered(rng, centres, sum(len(r) for _, r in docs))
            with store.atomic():
                bulk_write(store.db, docs, vecs)
            samples.append(vecs[rng.integers(0, len(vecs), 8)])
            made, b = made + size, b + 1
            print(f"  {made:,}/{n:,} chunks", file=sys.stderr, flush=True)
        store.db.execute("INSERT INTO roots (root) VALUES ('synthetic') ON CONFLICT DO NOTHING")
        store.db.execute("DELETE FROM acl_stats")
        store.db.execute("INSERT INTO acl_stats (acl, rows, total_len) SELECT acl, count(*), sum(lex_len)"
                         " FROM chunks WHERE servable GROUP BY acl")
        store.db.execute("SET maintenance_work_mem = '1GB'")
        store.db.execute("ANALYZE")
        t0 = time.perf_counter()
        with store.run("2024-06-05T00:00:00Z") as finish:
            finish("2024-06-05T00:00:00Z", {}, {"embedder": "x"})
        print(f"  HNSW build {time.perf_counter() - t0:.0f} s", file=sys.stderr, flush=True)
    return np.vstack(samples)


def queries(samples: np.ndarray, count: int, seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng([seed, 99])
    out = []
    for i in range(count):
        v = samples[i % len(samples)] + QUERY_NOISE * rng.standard_normal(DIM).astype(np.float32) / np.sqrt(DIM)
        out.append((v / np.linalg.norm(v)).astype(np.float32))
    return out


def _backend_cpu(pids: tuple[int, int | None]) -> float:
    """CPU seconds (user + system) of the connection's backend, plus those of the postmaster's
    exited children (``cutime``, ``cstime``): the parallel workers a scan started, reaped when it
    ends (also any other child that exits meanwhile: nothing else runs on the benchmark's server)."""
    backend, postmaster = (Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split() if p else [0] * 20
                           for p in pids)
    return (int(backend[11]) + int(backend[12]) + int(postmaster[13]) + int(postmaster[14])) / os.sysconf("SC_CLK_TCK")


def measure(url: str, qs: list[np.ndarray], k: int, modes: dict, truth: dict | None = None,
            caller=None, fractions=None, pgdata: Path | None = None, warm: bool = False) -> tuple[dict, dict]:
    """Per caller: permitted rows, and per path p50/p95 ms and recall@10 against ``truth`` (percent ->
    the exact results measured before), else against this run's own exact path; returns the row
    and this run's exact results (when ``modes`` has one)."""
    from chunkwise.retrieve.server import dense_rank
    from chunkwise.store import open_store
    from chunkwise.store.postgres import postgres_read

    out, exact = {}, {}
    caller = caller or _caller
    with open_store(url, readonly=True) as store:
        backend = (store.db.execute("SELECT pg_backend_pid()").fetchone()[0],
                   int((pgdata / "postmaster.pid").read_text().split()[0]) if pgdata else None)
        for percent in fractions or FRACTIONS:
            groups = caller(percent)
            row = {"permitted_rows": None if store.capabilities.filtered_reads else int(store.lexical_stats(groups)[0])}
            got = {}
            for name, exact_rows in modes.items():
                saved = postgres_read.EXACT_ROWS
                postgres_read.EXACT_ROWS = exact_rows
                try:
                    for q in (qs if warm else qs[:1]):  # warm the connection and caches (--warm: every query once)
                        dense_rank(store, q, groups, k)
                    walls, results = [], []
                    cpu0 = time.process_time() + _backend_cpu(backend)
                    for q in qs:
                        t0 = time.perf_counter()
                        results.append([key for key, _ in dense_rank(store, q, groups, k)])
                        walls.append(time.perf_counter() - t0)
                    cpu = (time.process_time() + _backend_cpu(backend) - cpu0) / len(qs)
                finally:
                    postgres_read.EXACT_ROWS = saved
                got[name] = results
                w = np.array(walls) * 1e3
                row[name] = {"p50_ms": float(np.percentile(w, 50)), "p95_ms": float(np.percentile(w, 95)),
                             "cpu_ms": cpu * 1e3}
            if "exact" in got:
                exact[percent] = got["exact"]
            want = truth[percent] if truth else got["exact"]
            for name, results in got.items():
                row[name]["recall_at_10"] = float(np.mean([len(set(a) & set(b)) / max(1, len(b))
                                                           for a, b in zip(results, want)]))
            out[f"{percent}%"] = row
            print(json.dumps({f"{percent}%": row}), file=sys.stderr, flush=True)
    return out, exact


def _both(percent: int) -> list[str]:
    """A caller of ``percent``% of pg_filtered_build's million rows: its b and its c groups."""
    return [f"{p}{i:02d}" for p in "bc" for i in range(percent)]


def _stored_queries(url: str, count: int, seed: int) -> list[np.ndarray]:
    """``count`` queries: stored vectors of the first 100k rows (a fixed pseudo-random pick) plus noise."""
    import psycopg
    from pgvector.psycopg import register_vector

    from chunkwise.store.postgres.pg_values import as_array

    with psycopg.connect(url) as db:
        register_vector(db)
        db.execute("SET search_path = chunkwise, public")
        rows = db.execute("SELECT vector FROM vectors WHERE embed_key NOT LIKE '%%#%%' ORDER BY md5(embed_key)"
                          " LIMIT %s", (count,)).fetchall()
    return queries(np.vstack([as_array(r[0]) for r in rows]), count, seed)


def _reader(srv, db: str) -> str:
    """A row-level-security reader's URL for database ``db`` (``chunkwise pg-secure``; idempotent)."""
    import psycopg

    from chunkwise.cli.main import main as cli

    role = "bench_reader"
    with psycopg.connect(srv.get_uri(), autocommit=True) as admin:
        if not admin.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (role,)).fetchone():
            admin.execute(f"CREATE ROLE {role} LOGIN")
    url = srv.get_uri(db)
    assert cli(["pg-secure", "--db", url, "--reader", role]) == 0
    return url.replace("postgresql://postgres:@", f"postgresql://{role}@", 1)


def prebuilt(args, report: dict, modes: dict) -> None:
    """The 1M-row run on pg_filtered_build's server: callers of 1-20% of 100k rows (``f100k``), the
    same callers after 900k hidden rows are added (``f1m``: ten times the rows, permitted rows
    fixed), then callers of 1-20% of the million (``f1m``), as owner and, with ``--rls``, as reader."""
    import pgserver

    from chunkwise.store.postgres import postgres_read

    srv = pgserver.get_server(args.pgdata, cleanup_mode="stop")
    small, big = srv.get_uri("f100k"), srv.get_uri("f1m")
    qs = _stored_queries(small, args.queries, args.seed)
    report["rows"] = 1_000_000
    saved = args.pgdata / "truth_100k.json"  # the "before" phase's exact results, for an "after" run alone
    if "before" in args.phases:
        report["before"], truth = measure(small, qs, args.k, modes, pgdata=args.pgdata, warm=args.warm)
        saved.write_text(json.dumps({str(p): t for p, t in truth.items()}))
    if "after" in args.phases:
        truth = {int(p): t for p, t in json.loads(saved.read_text()).items()}
        report["after"], later = measure(big, qs, args.k, modes, truth, fractions=args.fractions, pgdata=args.pgdata,
                                         warm=args.warm)
        report["exact_unchanged"] = all(later[p] == truth[p] for p in later)
    if "1m" in args.phases:
        report["1M"], truth = measure(big, qs, args.k, modes, caller=_both, fractions=args.fractions, pgdata=args.pgdata,
                                      warm=args.warm)
        if args.rls:
            report["1M_rls_reader"], _ = measure(_reader(srv, "f1m"), qs, args.k, {
                m: v for m, v in modes.items() if m != "exact"}, truth, caller=_both, fractions=args.fractions,
                pgdata=args.pgdata, warm=args.warm)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", default="50k", help="rows the callers' groups share (1% .. 20% of them each)")
    ap.add_argument("--hidden", type=int, default=0, help="then add this many times --rows hidden rows and measure again")
    ap.add_argument("--queries", type=int, default=50)
    ap.add_argument("--k", type=int, default=10)
    ap.add_argument("--seed", type=int, default=SEED)
    ap.add_argument("--rls", action="store_true", help="also measure the store's choice as a row-level-security reader")
    ap.add_argument("--json", type=Path)
    ap.add_argument("--pgdata", type=Path, help="pg_filtered_build.py's server folder: the 1M-row run")
    ap.add_argument("--phases", default="before,after,1m",
                    help="with --pgdata: before (callers of 100k rows), after (the same callers, 900k hidden rows added),"
                         " 1m (callers of 1-20%% of the million)")
    ap.add_argument("--fractions", type=lambda t: [int(x) for x in t.split(",")], default=None,
                    help="with --pgdata: only these callers (percent, e.g. 1,2)")
    ap.add_argument("--no-forced", action="store_true", help="with --pgdata: skip the HNSW-forced path")
    ap.add_argument("--warm", action="store_true",
                    help="run every query once on each path before timing it (the steady state of a serving store;"
                         " without: one query, so the first path of a caller pays the cold caches)")
    args = ap.parse_args()
    import psycopg

    from chunkwise.store.postgres import postgres_read

    n = parse_size(args.rows)
    modes = {"store's choice": postgres_read.EXACT_ROWS, "HNSW forced": 0, "exact": 10**12}
    report = {"commit": subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                                       cwd=Path(__file__).parent).stdout.strip(),
              "rows": n, "hidden_factor": args.hidden, "queries": args.queries, "dim": DIM,
              "exact_rows": postgres_read.EXACT_ROWS, "load_before": os.getloadavg()}
    if args.pgdata:
        report["hidden_factor"] = 9
        if args.no_forced:
            del modes["HNSW forced"]
        prebuilt(args, report, modes)
        return _print(report, args)
    srv, folder = server(None)
    base = srv.get_uri()
    try:
        with psycopg.connect(base, autocommit=True) as admin:
            admin.execute("CREATE DATABASE bench_filtered")
            report["server"] = admin.execute("SHOW server_version").fetchone()[0]
        url = srv.get_uri("bench_filtered")
        with psycopg.connect(url, autocommit=True) as db:
            db.execute("CREATE EXTENSION IF NOT EXISTS vector")
            report["pgvector"] = db.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'").fetchone()[0]
        samples = write(url, 0, n, args.seed, hidden=False)
        qs = queries(samples, args.queries, args.seed)
        report["before"], truth = measure(url, qs, args.k, modes)
        if args.rls:
            from chunkwise.cli.main import main as cli

            role = "bench_reader"
            with psycopg.connect(base, autocommit=True) as admin:
                admin.execute(f"CREATE ROLE {role} LOGIN")
            assert cli(["pg-secure", "--db", url, "--reader", role]) == 0
            reader = url.replace("postgresql://postgres:@", f"postgresql://{role}@", 1)
            report["before_rls_reader"], _ = measure(reader, qs, args.k, {
                "store's choice": postgres_read.EXACT_ROWS, "HNSW forced": 0}, truth)
        if args.hidden:
            write(url, 10_000, args.hidden * n, args.seed + 1, hidden=True)
            report["after"], later = measure(url, qs, args.k, modes, truth)  # recall against the exact results before
            report["exact_unchanged"] = later == truth
    finally:
        srv.cleanup()
        shutil.rmtree(folder, ignore_errors=True)
    return _print(report, args)


def _print(report: dict, args) -> int:
    n = report["rows"]
    report["load_after"] = os.getloadavg()
    if args.json:
        args.json.write_text(json.dumps(report, indent=1))
    print(f"\nPostgreSQL {report.get('server', '16')}, pgvector {report.get('pgvector', '0.6.2')}, commit {report['commit']}, {n:,} rows"
          f" (+{report['hidden_factor']}x hidden), {args.queries} queries, k {args.k}, EXACT_ROWS {report['exact_rows']:,},"
          f" load {report['load_before'][0]:.1f} -> {report['load_after'][0]:.1f}")
    print("| caller sees | phase | permitted rows | path | p50 ms | p95 ms | CPU ms/query | recall@10 |")
    print("|---|---|---:|---|---:|---:|---:|---:|")
    for phase in ("before", "before_rls_reader", "after", "1M", "1M_rls_reader"):
        for caller, row in report.get(phase, {}).items():
            for name, v in row.items():
                if isinstance(v, dict) and name != "exact":
                    print(f"| {caller} | {phase} | {row['permitted_rows'] or '-'} | {name} | {v['p50_ms']:.1f} |"
                          f" {v['p95_ms']:.1f} | {v['cpu_ms']:.1f} | {v['recall_at_10']:.3f} |")
            if "exact" in row:
                print(f"| {caller} | {phase} | {row['permitted_rows']} | exact | {row['exact']['p50_ms']:.1f} |"
                      f" {row['exact']['p95_ms']:.1f} | {row['exact']['cpu_ms']:.1f} | 1.000 |")
    if "exact_unchanged" in report:
        print(f"exact top-10 of every caller unchanged by the hidden rows: {report['exact_unchanged']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
