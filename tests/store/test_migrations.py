"""A store written before access tokens existed (schema 2) is upgraded in place and searchable."""
import sqlite3

import pytest

from chunkwise.store import SQLiteStore
from chunkwise.store.sqlite.schema import LATEST, MIGRATIONS
from chunkwise.store.sqlite.sqlite import _statements
from chunkwise.store.sqlite.sqlite_read import fts_match


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


@pytest.mark.parametrize("written_at", [5, 6])
def test_store_is_reanalysed_with_stems_and_fields(tmp_path, written_at):
    """Schema 7 (chunkwise.lexical): a store at schema 5 (through 6, versions) or 6 gets analysed
    fields and a rebuilt index; a search for "page" then finds "paged", in the text and in the
    title, filtered as before, and schema 6's version links are kept."""
    import json

    from chunkwise.access import AccessTags
    from chunkwise.lexical import LexicalFields, analyze

    db = tmp_path / f"at{written_at}.db"
    con = sqlite3.connect(db, isolation_level=None)
    con.create_function("chunkwise_acl_index", 2, lambda a, q: "", deterministic=True)
    con.execute("CREATE TABLE migrations (number INTEGER PRIMARY KEY, name TEXT, applied_at TEXT)")
    for number, name, sql in [m for m in MIGRATIONS if m[0] <= written_at]:
        if number == 4:
            continue  # rewrites records with functions of its own; nothing to convert in an empty store
        for st in _statements(sql):
            con.execute(st)
        con.execute("INSERT INTO migrations VALUES (?, ?, 'then')", (number, name))
    con.execute("INSERT INTO migrations VALUES (4, 'tags', 'then')")
    con.execute("INSERT INTO documents (doc_id, root, source_uri, source_version, inputs, ingested_at, chunk_count, path)"
                " VALUES ('d', '/r', 'd.md', 'v', 'i', 't', 3, 'd.md')")
    rows = [("c1", 0, "We paged the owner.", ["sre"], "ready", "Ops", ["Escalation"]),
            ("c2", 1, "Nothing relevant here.", ["sre"], "ready", "Paging guide", []),
            ("c3", 2, "Paged twice.", ["finance"], "ready", "", [])]
    for cid, i, text, acl, q, title, path in rows:
        tags = AccessTags.parse(acl)
        con.execute("INSERT INTO chunks (chunk_id, doc_id, chunk_index, record, text, embed_text, embed_model, embed_key,"
                    " acl, quality, size, acl_index) VALUES (?, 'd', ?, ?, ?, ?, 'm', 'k', ?, ?, 2, ?)",
                    (cid, i, json.dumps({"title": title, "heading_path": path}), text, text, tags.column(), q,
                     tags.index(q)))
    if written_at == 6:
        con.execute("INSERT INTO documents (doc_id, root, source_uri, source_version, inputs, ingested_at, chunk_count,"
                    " path, versioning) VALUES ('d0', '/r', 'd0.md', 'v', 'i', 't', 0, 'd0.md', '{}')")
        con.execute("INSERT INTO version_links VALUES ('d', 'd0', 'declared', 1.0)")
    con.close()
    with SQLiteStore(db) as store:
        assert max(n for (n,) in store.db.execute("SELECT number FROM migrations")) == LATEST
        page = analyze("page")[0]
        found = store.term_matches(page, ["sre"])
        ids = {next(store.chunks(keys=[int(k)])).record["chunk_id"]: tuple(tf) for k, tf in zip(found.keys, found.tf)}
        assert ids == {"c1": (1.0, 0.0, 0.0), "c2": (0.0, 1.0, 0.0)}  # not finance's c3
        assert store.servable_rows(lexical=True).lexical[0] == LexicalFields.of("We paged the owner.", "Ops", ["Escalation"])
        assert store.term_count(analyze("escalation")[0], ["sre"], ("heading",)) == 1
        links = store.db.execute("SELECT newer, older, how FROM version_links").fetchall()
        assert links == ([("d", "d0", "declared")] if written_at == 6 else [])


def test_postgres_store_at_schema_2_is_reanalysed_with_stems_and_fields(pg_url):
    """PostgreSQL migration 3: rows written before the analyzer had stems and fields (lexemes of the
    embedded text unstemmed) get the analysed body/title/heading, a tsvector of all three and
    per-field counts, and the per-tag-set lengths are summed again (body lengths)."""
    import json

    import psycopg

    from chunkwise.lexical import LexicalFields, analyze
    from chunkwise.store.postgres.pg_schema import MIGRATIONS as PG
    from chunkwise.store.postgres.postgres import PostgresStore

    with psycopg.connect(pg_url, autocommit=True) as con:
        con.execute("CREATE TABLE migrations (number INTEGER PRIMARY KEY, name TEXT, applied_at TIMESTAMPTZ NOT NULL"
                    " DEFAULT now())")
        for number, name, sql in PG[:2]:
            con.execute(sql)
            con.execute("INSERT INTO migrations (number, name) VALUES (%s, %s)", (number, name))
        con.execute("INSERT INTO documents (doc_id, root, path, source_uri, source_version, inputs, ingested_at,"
                    " chunk_count) VALUES ('d', '/r', 'd.md', 'd.md', 'v', 'i', '2026-01-01T00:00:00Z', 2)")
        for i, (text, title, path, acl) in enumerate([("We paged the owner.", "Ops", ["Escalation"], ["sre"]),
                                                      ("Nothing relevant here.", "Paging guide", [], ["sre"])]):
            words = text.lower().replace(".", "").split()  # what schema 2 kept: unstemmed words
            con.execute("INSERT INTO chunks (chunk_id, doc_id, chunk_index, record, text, embed_text, embed_model,"
                        " embed_key, acl, quality, size, servable, lex, lex_tf, lex_len) VALUES (%s, 'd', %s, %s, %s,"
                        " %s, 'm', 'k', %s, 'ready', 2, true, array_to_tsvector(%s::text[]), %s, %s)",
                        (f"c{i}", i, json.dumps({"title": title, "heading_path": path}), text, text, acl,
                         sorted(set(words)), json.dumps({w: words.count(w) for w in words}), len(words)))
        con.execute("INSERT INTO acl_stats VALUES ('{sre}', 2, 7)")
    with PostgresStore(pg_url) as store:
        page = analyze("page")[0]
        found = store.term_matches(page, ["sre"])
        ids = {next(store.chunks(keys=[int(k)])).record["chunk_id"]: tuple(tf) for k, tf in zip(found.keys, found.tf)}
        assert ids == {"c0": (1.0, 0.0, 0.0), "c1": (0.0, 1.0, 0.0)}  # "paged" and "Paging" both found as "page"
        assert store.servable_rows(lexical=True).lexical[0] == LexicalFields.of("We paged the owner.", "Ops", ["Escalation"])
        assert store.term_count(analyze("escalation")[0], ["sre"], ("heading",)) == 1
        body = len(analyze("We paged the owner.")) + len(analyze("Nothing relevant here."))
        assert store.lexical_stats(["sre"]) == (2, body / 2)
