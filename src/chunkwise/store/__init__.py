"""The index: an embedded SQLite file by default, behind a small interface so another backend
(PostgreSQL + pgvector) can keep the same ingest semantics."""
from chunkwise.store.sqlite import SQLiteStore

__all__ = ["SQLiteStore"]
