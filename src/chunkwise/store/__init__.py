"""The index behind one small interface (``store.base.Store``): an embedded SQLite file by default;
a server database (PostgreSQL) plugs into ``open_store`` by URL. Everything that speaks SQL lives in
this package."""
from __future__ import annotations

import os

from chunkwise.store.base import (DocumentDiff, DocumentRow, DocumentState, Postings, ServableRows, Store, StoreBusy,
                                  StoreCounts, StoredChunk, VersionLink)
from chunkwise.store.sqlite.sqlite import SQLiteStore

_SERVER_SCHEMES = ("postgresql://", "postgres://")


def is_server_url(location) -> bool:
    """A ``postgresql://`` (or ``postgres://``) URL rather than a SQLite file path."""
    return isinstance(location, (str, os.PathLike)) and os.fspath(location).startswith(_SERVER_SCHEMES)


def server_lost(exc: BaseException):
    """A ``StoreLost`` that says, on one line, what happened when ``exc`` is a server store's broken
    connection (the PostgreSQL server stopped or restarted under a running command); else None.
    The driver is not imported for this: without it loaded, no server store was used."""
    import sys

    from chunkwise.errors import StoreLost

    psycopg = sys.modules.get("psycopg")
    if psycopg is None or not isinstance(exc, (psycopg.OperationalError, psycopg.InterfaceError)):
        return None
    reason = " ".join(str(exc).split())[:200] or type(exc).__name__
    return StoreLost(f"lost the connection to the PostgreSQL store ({reason}): the server stopped or restarted "
                     f"during the run; nothing half-written is kept (each document is written in one transaction): "
                     f"run the command again to finish")


def open_store(location: str | os.PathLike, *, readonly: bool = False, create: bool | None = None,
               timeout: float = 60.0) -> Store:
    """Open the store at a path (SQLite) or a ``postgresql://`` URL (the ``pg`` extra; the database
    must exist, its tables are created on first open). ``readonly``: never write (search, check);
    ``create`` (default: not ``readonly``): a missing SQLite file becomes a new store, else it is
    an error that says how to make one. A second writer waits up to ``timeout`` seconds."""
    text = os.fspath(location)
    create = (not readonly) if create is None else create
    if is_server_url(text):
        from chunkwise.store.postgres.postgres import PostgresStore

        return PostgresStore(text, readonly=readonly, create=create, timeout=timeout)
    return SQLiteStore(text, readonly=readonly, create=create, timeout=timeout)


__all__ = ["DocumentDiff", "DocumentRow", "DocumentState", "Postings", "SQLiteStore", "ServableRows", "Store", "StoreBusy",
           "StoreCounts", "StoredChunk", "VersionLink", "is_server_url", "open_store", "server_lost"]
