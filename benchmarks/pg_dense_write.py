"""What keeping ``dense`` costs a PostgreSQL ingest (store/postgres/pg_dense.py, migration 10): the same
generated documents written through the store's own apply step (``PostgresStore._apply``, what
``chunkwise ingest`` runs per document) into two databases of one server, one with the ``dense``
triggers on (the product) and one with them disabled (the store as it was before migration 10),
batches alternating between the two so both see the same machine load. Reported per database:
wall seconds and CPU seconds (this client + the server backend of its connection, from /proc),
and their ratio.

    .venv/bin/python benchmarks/pg_dense_write.py [--chunks 20000]
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
from pg_search import MODEL, SEED, _centres, clustered, server  # noqa: E402
from search import make_docs, vocabulary, zipf_sampler  # noqa: E402

BATCH = 1_000  # chunks per transaction
TRIGGERS = {"chunks": ("dense_chunk_insert", "dense_chunk_update"),
            "vectors": ("dense_vector_insert", "dense_vector_update", "dense_vector_delete")}


def _backend_cpu(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--chunks", type=int, default=20_000)
    ap.add_argument("--seed", type=int, default=SEED)
    args = ap.parse_args()
    import psycopg

    from chunkwise.store import DocumentDiff, DocumentRow, open_store

    srv, folder = server(None)
    report = {"commit": subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                                       cwd=Path(__file__).parent).stdout.strip(),
              "chunks": args.chunks, "load_before": os.getloadavg()}
    try:
        stores = {}
        for name in ("dense on", "dense off"):
            db = name.replace(" ", "_")
            with psycopg.connect(srv.get_uri(), autocommit=True) as admin:
                admin.execute(f"CREATE DATABASE {db}")
            store = open_store(srv.get_uri(db))
            if name == "dense off":
                with store.atomic():
                    for table, names in TRIGGERS.items():
                        for trigger in names:
                            store.db.execute(f"ALTER TABLE {table} DISABLE TRIGGER {trigger}")
            store.add_root("/r")
            pid = store.db.execute("SELECT pg_backend_pid()").fetchone()[0]
            stores[name] = {"store": store, "pid": pid, "wall": 0.0, "cpu": 0.0}
        words, centres = vocabulary(), _centres(args.seed, args.chunks)
        for b in range(0, args.chunks, BATCH):
            rng = np.random.default_rng([args.seed, b])
            docs, _ = make_docs(rng, words, zipf_sampler(rng), b, min(BATCH, args.chunks - b))
            vecs = clustered(rng, centres, sum(len(r) for _, r in docs))
            for s in stores.values():
                store, at = s["store"], 0
                t0, c0 = time.perf_counter(), time.process_time() + _backend_cpu(s["pid"])
                with store.atomic():
                    for doc_row, records in docs:
                        vectors = {r["embed_key"]: vecs[at + i] for i, r in enumerate(records)}
                        at += len(records)
                        store._apply(DocumentRow(path=doc_row["doc_id"], **doc_row),
                                     DocumentDiff(added=records, vectors=vectors, vector_model=MODEL))
                s["wall"] += time.perf_counter() - t0
                s["cpu"] += time.process_time() + _backend_cpu(s["pid"]) - c0
        for name, s in stores.items():
            rows = s["store"].db.execute("SELECT count(*) FROM dense").fetchone()[0]
            report[name] = {"wall_s": s["wall"], "cpu_s": s["cpu"], "dense_rows": rows}
            s["store"].close()
        report["cpu_ratio_on_off"] = report["dense on"]["cpu_s"] / report["dense off"]["cpu_s"]
        report["wall_ratio_on_off"] = report["dense on"]["wall_s"] / report["dense off"]["wall_s"]
    finally:
        srv.cleanup()
        shutil.rmtree(folder, ignore_errors=True)
    report["load_after"] = os.getloadavg()
    print(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
