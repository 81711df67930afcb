"""A store written before access tokens existed (schema 2) is upgraded in place and searchable."""
import sqlite3

from chunkwise.store import SQLiteStore
from chunkwise.store.schema import LATEST, MIGRATIONS
from chunkwise.store.sqlite import _statements
from chunkwise.store.sqlite_read import fts_match


def test_schema_2_store_is_upgraded_and_filters_inside_match(tmp_path):
    db = tmp_path / "old.db"
    con = sqlite3.connect(db, isolation_level=None)
    con.execute("CREATE TABLE migrations (number INTEGER PRIMARY KEY, name TEXT, applied_at TEXT)")
    for number, name, sql in MIGRATIONS[:2]:
        for st in _statements(sql):
            con.execute(st)
        con.execute("INSERT INTO migrations VALUES (?, ?, 'then')", (number, name))
    con.execute("INSERT INTO documents VALUES ('d', '/r', 'd.md', 'v', 'i', '', '', '', 't', 2)")
    rows = [("c1", 0, "rollback steps", "sre", "ready"), ("c2", 1, "rollback steps", "sre", "review"),
            ("c3", 2, "rollback steps", "finance", "ready")]
    for cid, i, text, acl, q in rows:
        con.execute("INSERT INTO chunks (chunk_id, doc_id, chunk_index, record, text, embed_text, embed_model, embed_key,"
                    " acl, quality, size) VALUES (?, 'd', ?, '{}', ?, ?, 'm', 'k', ?, ?, 2)", (cid, i, text, text, acl, q))
    con.close()
    with SQLiteStore(db) as store:
        assert max(n for (n,) in store.db.execute("SELECT number FROM migrations")) == LATEST
        found = store.db.execute("SELECT c.chunk_id FROM chunks_fts f JOIN chunks c ON c.rowid = f.rowid "
                                 "WHERE chunks_fts MATCH ?", (fts_match(["rollback"], ["sre"]),)).fetchall()
        assert found == [("c1",)]  # the review chunk and the finance chunk are not matched
