"""EXPLAIN (ANALYZE, BUFFERS) of one PostgreSQL BM25 query (``Store.lexical_top``'s statement) on a
store that ``pg_search.load`` generates in a throw-away pgserver: where a BM25 query's time goes.

    PYTHONPATH=src .venv/bin/python benchmarks/pg_explain_bm25.py 20000
"""
import sys, tempfile, time
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parent))
import numpy as np
import pg_search
from search import make_queries
import pgserver, psycopg
def main():
    folder = Path(tempfile.mkdtemp(prefix="cw-explain-"))
    srv = pgserver.get_server(folder / "data", cleanup_mode="stop")
    try:
        with psycopg.connect(srv.get_uri(), autocommit=True) as admin:
            admin.execute("CREATE DATABASE ex")
        url = srv.get_uri("ex")
        n = int(sys.argv[1]) if len(sys.argv) > 1 else 20000
        loaded, built, samples, size, index = pg_search.load(url, n, 20240605, "copy", 2)
        print("loaded", loaded, built)
        from chunkwise.retrieve import Retriever
        from chunkwise.store.postgres import postgres_read
        queries = make_queries(10, 20240605)
        with Retriever(url, embedder=pg_search.Vectors({q: samples[0] for q, _ in queries})) as r:
            db = r.store.db
            real = db.execute
            plans = []
            def spy(sql, params=None, *a, **k):
                if "WITH q AS" in sql:
                    plans.append(real("EXPLAIN (ANALYZE, BUFFERS) " + sql, params).fetchall())
                return real(sql, params, *a, **k)
            r.rank(queries[0][0], queries[0][1], 10, "bm25")
            t0 = time.perf_counter()
            for q, g in queries[1:6]:
                r.rank(q, g, 10, "bm25")
            print("ms/query", (time.perf_counter() - t0) / 5 * 1e3)
            db.execute = spy
            r.rank(queries[1][0], queries[1][1], 10, "bm25")
            for row in plans[0]:
                print(row[0])
    finally:
        srv.cleanup()


if __name__ == '__main__':
    main()
