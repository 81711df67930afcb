"""Where a PostgreSQL store lives: its own schema, ``chunkwise`` unless the URL says otherwise.

Every table, index and function of a store is created unqualified in the connection's current
schema (the first schema on the search path that exists), so the store is wherever the search path
points. ``place`` puts the store's schema first on the path when a connection opens:

- the URL names a search path (``?options=-csearch_path%3Dkb``): that, untouched (another schema);
- else the schema ``chunkwise`` when it exists, or when this opening may create the store;
- else, for a store written before stores had a schema of their own (its tables in the current
  schema, ``public`` by default), that store, where it is: it keeps working, nothing is moved.

So a new store never meets an application's ``documents`` table in ``public``.
"""
from __future__ import annotations

from dataclasses import dataclass

DEFAULT_SCHEMA = "chunkwise"
_OURS = {"migrations", "documents", "chunks"}
_SCHEMA_LOCK = 0x6368756E6B03


def schema_tables(db) -> set[str]:
    return {n for (n,) in db.execute("SELECT tablename FROM pg_tables WHERE schemaname = current_schema()")}


def explicit_search_path(db) -> bool:
    """The connection's URL (or its PGOPTIONS) set the search path itself."""
    options = db.info.get_parameters().get("options", "") or ""
    return "search_path" in options


@dataclass(frozen=True)
class Place:
    schema: str  # where the store's tables are (or will be)
    how: str  # "url" (the URL's search path), "own" (the chunkwise schema), "legacy" (tables from before), "none"


def place(db, *, create: bool, errors) -> Place:
    """Set the search path of ``db`` (autocommit) for the store; see the module docstring."""
    from psycopg import sql

    if explicit_search_path(db):
        return Place(db.execute("SELECT current_schema()").fetchone()[0] or "", "url")
    exists = db.execute("SELECT 1 FROM pg_namespace WHERE nspname = %s", (DEFAULT_SCHEMA,)).fetchone() is not None
    if not exists:
        here = schema_tables(db)
        if _OURS <= here:  # a store from before the chunkwise schema, in the current schema: where it is
            return Place(db.execute("SELECT current_schema()").fetchone()[0], "legacy")
        if not create:
            return Place(DEFAULT_SCHEMA, "none")
        from chunkwise.errors import StoreError

        try:
            with db.transaction():
                db.execute("SELECT pg_advisory_xact_lock(%s)", (_SCHEMA_LOCK,))
                db.execute(sql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(sql.Identifier(DEFAULT_SCHEMA)))
        except errors.InsufficientPrivilege:
            role = db.execute("SELECT current_user").fetchone()[0]
            raise StoreError(f"role {role} may not create the schema {DEFAULT_SCHEMA!r} for the store: have the database "
                             f"owner run CREATE SCHEMA {DEFAULT_SCHEMA} AUTHORIZATION {role}, or name a schema the role "
                             f"owns in the URL (?options=-csearch_path%3DNAME)") from None
    elif not db.execute("SELECT has_schema_privilege(%s, 'USAGE')", (DEFAULT_SCHEMA,)).fetchone()[0]:
        from chunkwise.errors import StoreError

        role = db.execute("SELECT current_user").fetchone()[0]
        raise StoreError(f"role {role} may not use the store's schema {DEFAULT_SCHEMA!r}: make it a reader (chunkwise "
                         f"pg-secure --db OWNER_URL --reader {role}) or GRANT USAGE ON SCHEMA {DEFAULT_SCHEMA} and "
                         f"SELECT on its tables")
    db.execute("SELECT set_config('search_path', %s || ', ' || current_setting('search_path'), false)",
               (sql.Identifier(DEFAULT_SCHEMA).as_string(db),))
    return Place(DEFAULT_SCHEMA, "own")

