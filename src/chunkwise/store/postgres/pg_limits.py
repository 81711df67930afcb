"""``Store.time_limit`` on PostgreSQL: the session's ``statement_timeout`` for the block's statements
(the connection is in autocommit between them)."""
from __future__ import annotations

from contextlib import contextmanager
from typing import Iterator

from chunkwise.errors import StoreTimeout


@contextmanager
def time_limit(db, seconds: float, errors) -> Iterator[None]:
    """The server cancels a statement of the block running past ``seconds`` (``errors``: the driver's
    ``psycopg.errors``): ``StoreTimeout``; the timeout is reset on the way out."""
    db.execute("SELECT set_config('statement_timeout', %s, false)", (f"{max(1, int(seconds * 1000))}ms",))
    try:
        yield
    except errors.QueryCanceled:
        raise StoreTimeout(f"stopped after {seconds:g} s") from None
    finally:
        if not db.closed:
            db.execute("RESET statement_timeout")
