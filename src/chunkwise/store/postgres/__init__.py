"""The PostgreSQL + pgvector backend (the ``pg`` extra): ranks inside the server.

``postgres`` is the store (connection, migrations, the write primitives of ``store.writing``),
``postgres_read`` the reads and the server-side search primitives, ``pg_*`` its parts: schema and
migrations, the store's own namespace (``pg_place``), row-level security, lexemes, values read back.
Nothing is imported here, so ``import chunkwise.store`` never needs psycopg."""
