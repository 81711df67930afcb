"""The full-text rows of new chunks, written in bulk before their transaction commits.

Why not a trigger per inserted row (schema 7-9): every statement inside a transaction opens a
statement savepoint, and SQLite 3.40's FTS5 writes its pending terms to disk as a new segment at
every savepoint. ``executemany`` runs one statement per row, so the ``AFTER INSERT`` trigger made
one tiny segment per chunk, which FTS5 then merged over and over: 40% of the single writer's SQL
time on small files (2,000 Markdown files, 10,812 chunks: 0.96 s of CPU with the trigger, 0.59 s
with one ``INSERT ... SELECT`` per commit; ``'rebuild'`` of the whole index takes 0.06 s).

The rule that keeps the index exact: chunk rows inserted in the open transaction and not yet
indexed are exactly those with a rowid above ``above`` (a new row's rowid is one more than the
largest). They are indexed (``flush``) before every commit and before any statement that deletes
or updates chunks (whose triggers remove the old row's terms, which must be there). A rolled-back
savepoint or transaction puts ``above`` back where it was. So a committed state is always fully
indexed, and readers (another connection, or this one after the batch) never see the difference.

The permission index ``chunk_access`` (schema 8: one row per tag of a servable chunk) is derived from
the same pending rows at the same moments, by the same rule (schema 11 dropped its per-row insert
trigger: ~20% of the writer's SQL time on small files, a trigger program and a ``json_each`` per
row). Its delete and update triggers stay: they run only after a flush, so they always find the
rows they remove. One flush writes both, so they are pending, rolled back and committed together.
"""
from __future__ import annotations

import sqlite3

_INDEX = ("INSERT INTO chunks_fts(rowid, lex_body, lex_title, lex_heading, acl_index) "
          "SELECT rowid, lex_body, lex_title, lex_heading, acl_index FROM chunks WHERE rowid > ?")
# What the trigger of schema 8 did per row (``WHEN new.acl_index != ''``), for every pending row at once.
_ACCESS = ("INSERT OR IGNORE INTO chunk_access SELECT t.value, c.doc_id, c.rowid FROM chunks c, json_each(c.acl) t "
           "WHERE c.rowid > ? AND c.acl_index != ''")


class PendingIndex:
    """The open transaction's chunks awaiting their FTS and ``chunk_access`` rows (see the module doc)."""

    __slots__ = ("db", "above")

    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db
        self.above: int | None = None  # None: nothing pending

    def inserting(self) -> None:
        """Called before chunk rows are inserted: rows from here on are pending."""
        if self.above is None:
            self.above = self.db.execute("SELECT coalesce(max(rowid), 0) FROM chunks").fetchone()[0]

    def flush(self) -> None:
        """Index the pending rows (before a commit, a delete or an update of chunks)."""
        if self.above is not None:
            self.db.execute(_INDEX, (self.above,))
            self.db.execute(_ACCESS, (self.above,))
            self.above = None

    def restore(self, above: int | None) -> None:
        """Back to what was pending when a savepoint began (it was rolled back)."""
        self.above = above

    def forget(self) -> None:
        """The transaction was rolled back whole: nothing it inserted exists."""
        self.above = None
