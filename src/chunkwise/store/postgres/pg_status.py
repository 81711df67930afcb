"""``chunkwise pg status``: where a PostgreSQL store is and which migrations it lacks, changing nothing."""
from __future__ import annotations

from chunkwise.errors import StoreError
from chunkwise.store.postgres.pg_place import place, schema_tables
from chunkwise.store.postgres.pg_schema import LATEST, MIGRATIONS
from chunkwise.store.postgres.postgres import _driver, redact


def status(url: str) -> dict:
    """Where the store at ``url`` is and its schema version, changing nothing (``chunkwise pg status``):
    ``schema``, ``placed`` (how it was found: url, own, legacy, none), ``version`` (the last migration
    applied; 0: no store), ``latest`` (this chunkwise's), ``pending`` (what an owner's open applies)."""
    psycopg = _driver()
    try:
        db = psycopg.connect(url, autocommit=True, connect_timeout=10)
    except psycopg.OperationalError as exc:
        raise StoreError(f"cannot connect to {redact(url)}: {' '.join(str(exc).split())[:300]}") from None
    with db:
        where = place(db, create=False, errors=psycopg.errors)
        applied = ({n for (n,) in db.execute("SELECT number FROM migrations")}
                   if "migrations" in schema_tables(db) else set())
    return {"store": redact(url), "schema": where.schema, "placed": where.how, "version": max(applied, default=0),
            "latest": LATEST, "pending": [{"number": n, "name": name} for n, name, _ in MIGRATIONS if n not in applied]}
