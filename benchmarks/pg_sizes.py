"""What a PostgreSQL store takes on disk, per table and index and per chunk: ingest a folder into a
fresh database of a throw-away pgserver and read ``pg_total_relation_size`` and friends. With
``--old SRC`` the same folder is also ingested by the chunkwise at SRC (e.g. a ``git archive`` of
6dedb40's ``src``), for the before/after of schema 7 (each vector once, jsonb records).

    PYTHONPATH=src python benchmarks/pg_sizes.py FOLDER [--embedder hashing] [--old /tmp/old/src]
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

SIZES = """SELECT c.relname, c.relkind, pg_total_relation_size(c.oid), pg_relation_size(c.oid)
FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = %s AND c.relkind IN ('r', 'i') ORDER BY 3 DESC"""


def ingest(src: str, url: str, folder: str, embedder: str) -> None:
    code = ("import sys; from chunkwise import api; "
            "api.ingest([sys.argv[1]], sys.argv[2], embedder=sys.argv[3], acl=['staff'])")
    env = {**os.environ, "PYTHONPATH": src, "HF_HUB_OFFLINE": "1"}
    subprocess.run([sys.executable, "-c", code, folder, url, embedder], check=True, env=env)


def report(url: str, label: str) -> dict:
    import psycopg

    with psycopg.connect(url, autocommit=True) as con:
        schema = "chunkwise" if con.execute("SELECT 1 FROM pg_namespace WHERE nspname = 'chunkwise'").fetchone() \
            else "public"
        chunks, vectors = con.execute(f"SELECT (SELECT count(*) FROM {schema}.chunks),"
                                      f" (SELECT count(*) FROM {schema}.vectors)").fetchone()
        rows = con.execute(SIZES, (schema,)).fetchall()
    total = sum(t for _, kind, t, _ in rows if kind == "r")
    print(f"\n{label}: {chunks} chunks, {vectors} vectors, {total / 1e6:.2f} MB in all ({total / max(chunks, 1):.0f} B/chunk)")
    for name, kind, whole, own in rows:
        print(f"  {'table' if kind == 'r' else 'index'} {name:24s} {whole / 1e6:8.2f} MB" + (
            f"  (heap {own / 1e6:.2f} MB)" if kind == "r" else ""))
    return {"chunks": chunks, "vectors": vectors, "bytes": total}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("folder")
    ap.add_argument("--embedder", default="hashing")
    ap.add_argument("--old", help="the src folder of an older chunkwise, ingested for comparison")
    args = ap.parse_args()
    import pgserver

    with tempfile.TemporaryDirectory(prefix="cw-pg-sizes-") as tmp:
        srv = pgserver.get_server(Path(tmp) / "data", cleanup_mode="stop")
        try:
            out = {}
            for label, src in (("this chunkwise", str(Path(__file__).resolve().parents[1] / "src")), ("old", args.old)):
                if not src:
                    continue
                name = "sizes_" + label.split()[0]
                srv.psql(f"CREATE DATABASE {name}")
                url = srv.get_uri(name)
                ingest(src, url, args.folder, args.embedder)
                out[label] = report(url, label)
            print(json.dumps(out))
        finally:
            srv.cleanup()


if __name__ == "__main__":
    main()
