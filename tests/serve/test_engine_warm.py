"""``Engine.warm`` leaves nothing for a first query to load: the model, the shared vector index,
and every worker's own FTS5 row sizes (each worker reads the store through its own connection)."""
from __future__ import annotations

import threading

from .serving import make_store

from chunkwise.serve.engine import Engine


def test_every_worker_is_warm_before_the_first_query(tmp_path):
    engine = Engine(str(make_store(tmp_path)), workers=3)
    try:
        engine.warm()
        together = threading.Barrier(3, timeout=60)

        def loaded() -> bool:
            seen = engine.retriever.fts._loaded
            together.wait()  # one job per worker
            return seen

        # unlimited jobs: a query's job would warm its worker first (Engine._run)
        jobs = [engine._queue(False, True, loaded, (), {}) for _ in range(3)]
        assert [f.result(timeout=60) for f in jobs] == [True, True, True]
        assert engine.cache.index is not None
    finally:
        engine.close()
