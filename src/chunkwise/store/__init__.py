"""The index behind one small interface (``store.base.Store``): an embedded SQLite file by default;
a server database (PostgreSQL) plugs into ``open_store`` by URL. Everything that speaks SQL lives in
this package."""
from __future__ import annotations

import os

from chunkwise.errors import ConfigError
from chunkwise.store.base import (DocumentDiff, DocumentRow, DocumentState, ServableRows, Store, StoreBusy,
                                  StoreCounts, StoredChunk, VersionLink)
from chunkwise.store.sqlite import SQLiteStore

_SERVER_SCHEMES = ("postgresql://", "postgres://")


def open_store(location: str | os.PathLike, *, readonly: bool = False, create: bool | None = None,
               timeout: float = 60.0) -> Store:
    """Open the store at a path (SQLite) or URL. ``readonly``: never write (search, check);
    ``create`` (default: not ``readonly``): a missing SQLite file becomes a new store, else it is
    an error that says how to make one. A second writer waits up to ``timeout`` seconds."""
    text = os.fspath(location)
    if text.startswith(_SERVER_SCHEMES):
        raise ConfigError(f"{text.split('://', 1)[0]} stores are not available in this chunkwise version; "
                          f"use a SQLite file path for --db")
    return SQLiteStore(text, readonly=readonly, create=(not readonly) if create is None else create, timeout=timeout)


__all__ = ["DocumentDiff", "DocumentRow", "DocumentState", "SQLiteStore", "ServableRows", "Store", "StoreBusy",
           "StoreCounts", "StoredChunk", "VersionLink", "open_store"]
