"""Backend-neutral inspection for tests that run on SQLite and PostgreSQL: raw reads of a store's
tables (what is really stored, not what the retrieval code says) and its consistency checks."""
import sqlite3


def is_pg(db) -> bool:
    return str(db).startswith(("postgresql://", "postgres://"))


def query(db, sql, params=()):
    """Rows of one read statement (``?`` placeholders on both backends)."""
    if is_pg(db):
        import psycopg

        from psycopg.types.json import set_json_loads

        with psycopg.connect(str(db)) as con:
            set_json_loads(_json_text, con)  # jsonb (a record) as its JSON text, as SQLite returns it
            return [tuple(r) for r in con.execute(sql.replace("?", "%s"), params).fetchall()]
    con = sqlite3.connect(db)
    try:
        return con.execute(sql, params).fetchall()
    finally:
        con.close()


def _json_text(data) -> str:
    return data if isinstance(data, str) else bytes(data).decode("utf-8")


def execute(db, sql, params=()):
    """One write statement, committed."""
    if is_pg(db):
        import psycopg

        with psycopg.connect(str(db), autocommit=True) as con:
            con.execute(sql.replace("?", "%s"), params)
        return
    con = sqlite3.connect(db)
    try:
        con.execute(sql, params)
        con.commit()
    finally:
        con.close()


def chunk_ids(db) -> set[str]:
    return {r[0] for r in query(db, "SELECT chunk_id FROM chunks")}


def acl_rows(db):
    """chunk_id -> (AccessTags, quality) as stored."""
    from chunkwise.access import AccessTags

    if is_pg(db):
        return {cid: (AccessTags.parse(list(acl)), q) for cid, acl, q in query(db, "SELECT chunk_id, acl, quality FROM chunks")}
    return {cid: (AccessTags.from_column(acl), q) for cid, acl, q in query(db, "SELECT chunk_id, acl, quality FROM chunks")}


def key_to_chunk(db) -> dict:
    return dict(query(db, "SELECT key, chunk_id FROM chunks" if is_pg(db) else "SELECT rowid, chunk_id FROM chunks"))


def consistent(db) -> set[str]:
    """Assert the store is whole (no half-written document, indexes agree with the rows); its chunk ids."""
    per_doc = dict(query(db, "SELECT doc_id, chunk_count FROM documents"))
    actual = dict(query(db, "SELECT doc_id, count(*) FROM chunks GROUP BY doc_id"))
    assert {d: n for d, n in per_doc.items() if n} == actual, "a document was half written"
    if is_pg(db):
        stats = {tuple(a): (n, t) for a, n, t in query(  # a row per writer slot (pg_slots): their sums
            db, "SELECT acl, sum(rows), sum(total_len) FROM acl_stats GROUP BY acl"
                " HAVING sum(rows) <> 0 OR sum(total_len) <> 0")}
        real = {tuple(a): (n, t) for a, n, t in query(
            db, "SELECT acl, count(*), sum(lex_len) FROM chunks WHERE servable GROUP BY acl")}
        assert stats == real, "the per-tag-set statistics disagree with the rows"
        assert query(db, "SELECT count(*) FROM information_schema.columns WHERE table_schema = current_schema()"
                         " AND table_name = 'chunks' AND column_name = 'vector'")[0][0] == 0, "vectors are stored once"
        assert query(db, "SELECT count(*) FROM chunks WHERE servable <> (quality = 'ready' AND cardinality(acl) > 0)"
                     )[0][0] == 0
    else:
        assert query(db, "PRAGMA integrity_check")[0][0] == "ok"
        assert query(db, "SELECT count(*) FROM chunks_fts")[0][0] == sum(actual.values())
    return chunk_ids(db)


def count(db, table: str) -> int:
    return query(db, f"SELECT count(*) FROM {table}")[0][0]


def demote_to_review(db, key: int) -> None:
    """Put one stored chunk into review behind the store's back (as an older tool or a hand edit
    might), keeping the backend's own bookkeeping true: it must then never be served."""
    if is_pg(db):
        import psycopg

        with psycopg.connect(str(db)) as con:  # one transaction: the row and its tag set's statistics
            acl, length = con.execute("UPDATE chunks SET quality = 'review', servable = false WHERE key = %s"
                                      " RETURNING acl, lex_len", (key,)).fetchone()
            con.execute("UPDATE acl_stats SET rows = rows - 1, total_len = total_len - %s WHERE acl = %s AND slot ="
                        " (SELECT min(slot) FROM acl_stats WHERE acl = %s)", (length, acl, acl))
        return
    execute(db, "UPDATE chunks SET quality = 'review', acl_index = '' WHERE rowid = ?", (key,))
