"""``Store.time_limit`` on SQLite: a progress handler stops the statement running past the deadline."""
from __future__ import annotations

import sqlite3
import time
from contextlib import contextmanager
from typing import Iterator

from chunkwise.errors import StoreTimeout

# SQLite virtual-machine steps between two looks at the clock. Each look is a Python call, so it
# needs the GIL: beside another worker's Python that is a wait and a hand-over. A bm25 search at 100k
# chunks runs ~700k steps (~35 ms): ~7 looks at this spacing (70 at 10,000, which cost two searches at
# once 7-15% of their throughput: benchmarks/search_threads.py); still ~5 ms apart.
CHECK_EVERY = 100_000


@contextmanager
def time_limit(db: sqlite3.Connection, seconds: float) -> Iterator[None]:
    """Interrupt the statement running once ``seconds`` have passed, once (the snapshot's COMMIT after
    it must run), as ``StoreTimeout``; roll back a transaction the block left open."""
    deadline = time.monotonic() + seconds
    fired = [False]

    def check() -> int:
        if not fired[0] and time.monotonic() > deadline:
            fired[0] = True
            return 1
        return 0

    db.set_progress_handler(check, CHECK_EVERY)
    try:
        yield
    except sqlite3.OperationalError as exc:
        if fired[0] and "interrupt" in str(exc):
            raise StoreTimeout(f"stopped after {seconds:g} s") from None
        raise
    finally:
        db.set_progress_handler(None, CHECK_EVERY)
        if db.in_transaction:
            db.rollback()  # never keep a snapshot a failed job left open
