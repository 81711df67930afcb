"""The SQLite backend: one file, WAL, FTS5 for lexical search, in-memory indexes for ranking.

``sqlite`` is the store (schema checks, migrations, the write primitives of ``store.writing``),
``sqlite_read`` the reads and the lexical primitives the in-process ranker uses, ``schema`` the
recorded migrations. Nothing is imported here: ``chunkwise.store.open_store`` picks the backend."""
