"""Schema and recorded migrations. Each migration runs once, in order, inside a transaction, and is
recorded with its number; opening a newer store with older code fails with a clear message."""
from __future__ import annotations

MIGRATIONS: list[tuple[int, str, str]] = [
    (1, "documents, chunks, vectors, runs", """
CREATE TABLE documents (
    doc_id TEXT PRIMARY KEY,
    root TEXT NOT NULL,
    source_uri TEXT NOT NULL,
    source_version TEXT NOT NULL,
    inputs TEXT NOT NULL,            -- fingerprint of everything that decides the records
    title TEXT, author TEXT, updated_at TEXT,
    ingested_at TEXT NOT NULL,
    chunk_count INTEGER NOT NULL
);
CREATE INDEX documents_root ON documents(root);
CREATE TABLE chunks (
    rowid INTEGER PRIMARY KEY,
    chunk_id TEXT NOT NULL UNIQUE,
    doc_id TEXT NOT NULL REFERENCES documents(doc_id) ON DELETE CASCADE,
    chunk_index INTEGER NOT NULL,
    record TEXT NOT NULL,            -- the ChunkRecord as JSON, less the two texts kept in columns
    text TEXT NOT NULL,
    embed_text TEXT NOT NULL,
    embed_model TEXT NOT NULL,
    embed_key TEXT NOT NULL,
    acl TEXT NOT NULL,               -- space-separated tags, also indexed by FTS for filtering
    quality TEXT NOT NULL,
    size INTEGER NOT NULL
);
CREATE INDEX chunks_doc ON chunks(doc_id, chunk_index);
CREATE INDEX chunks_key ON chunks(embed_key);
CREATE TABLE vectors (
    embed_key TEXT PRIMARY KEY,
    model TEXT NOT NULL,
    dim INTEGER NOT NULL,
    vector BLOB NOT NULL             -- float32, little-endian
);
CREATE TABLE runs (
    run_id INTEGER PRIMARY KEY,
    started_at TEXT NOT NULL,
    finished_at TEXT,
    stats TEXT
);
-- External-content FTS5 (contentless tables cannot delete rows before SQLite 3.43).
CREATE VIRTUAL TABLE chunks_fts USING fts5(embed_text, acl, content='chunks', content_rowid='rowid');
CREATE TRIGGER chunks_ai AFTER INSERT ON chunks BEGIN
    INSERT INTO chunks_fts(rowid, embed_text, acl) VALUES (new.rowid, new.embed_text, new.acl);
END;
CREATE TRIGGER chunks_ad AFTER DELETE ON chunks BEGIN
    INSERT INTO chunks_fts(chunks_fts, rowid, embed_text, acl) VALUES ('delete', old.rowid, old.embed_text, old.acl);
END;
CREATE TRIGGER chunks_au AFTER UPDATE OF embed_text, acl ON chunks BEGIN
    INSERT INTO chunks_fts(chunks_fts, rowid, embed_text, acl) VALUES ('delete', old.rowid, old.embed_text, old.acl);
    INSERT INTO chunks_fts(rowid, embed_text, acl) VALUES (new.rowid, new.embed_text, new.acl);
END;
"""),
]

MIGRATIONS.append((2, "settings of the last ingest (config, embedder, tool version)", """
CREATE TABLE settings (key TEXT PRIMARY KEY, value TEXT NOT NULL);
"""))

# Access tags as FTS tokens, so the permission filter runs inside MATCH, before ranking. A tag is
# written as "g" + hex(utf-8) (one unicode61 token whatever characters the tag has); only chunks a
# reader may ever see (quality 'ready', at least one tag) get tokens, so review chunks and untagged
# chunks cannot match any query at all (fail closed). ``chunkwise_acl_index`` is registered on every
# connection by the store and fills existing rows here.
MIGRATIONS.append((3, "access tags indexed as FTS tokens (permission filter inside MATCH)", """
ALTER TABLE chunks ADD COLUMN acl_index TEXT NOT NULL DEFAULT '';
UPDATE chunks SET acl_index = chunkwise_acl_index(acl, quality);
DROP TRIGGER chunks_ai;
DROP TRIGGER chunks_ad;
DROP TRIGGER chunks_au;
DROP TABLE chunks_fts;
CREATE VIRTUAL TABLE chunks_fts USING fts5(embed_text, acl_index, content='chunks', content_rowid='rowid');
INSERT INTO chunks_fts(chunks_fts, rank) VALUES ('rank', 'bm25(1.0, 0.0)');
INSERT INTO chunks_fts(chunks_fts) VALUES ('rebuild');
CREATE TRIGGER chunks_ai AFTER INSERT ON chunks BEGIN
    INSERT INTO chunks_fts(rowid, embed_text, acl_index) VALUES (new.rowid, new.embed_text, new.acl_index);
END;
CREATE TRIGGER chunks_ad AFTER DELETE ON chunks BEGIN
    INSERT INTO chunks_fts(chunks_fts, rowid, embed_text, acl_index) VALUES ('delete', old.rowid, old.embed_text, old.acl_index);
END;
CREATE TRIGGER chunks_au AFTER UPDATE OF embed_text, acl_index ON chunks BEGIN
    INSERT INTO chunks_fts(chunks_fts, rowid, embed_text, acl_index) VALUES ('delete', old.rowid, old.embed_text, old.acl_index);
    INSERT INTO chunks_fts(rowid, embed_text, acl_index) VALUES (new.rowid, new.embed_text, new.acl_index);
END;
"""))

# Access tags as values (chunkwise.access): the ``acl`` column becomes a JSON array of canonical tags
# (a space-joined column read back split "hr managers" into "hr" and "managers"); the FTS tokens are
# rebuilt from it. Records whose tags break the grammar go to review (``chunkwise_acl_record``).
MIGRATIONS.append((4, "access tags as a JSON array of canonical tags", """
UPDATE chunks SET record = chunkwise_acl_record(record, acl, quality);
UPDATE chunks SET acl = chunkwise_acl_column(record), quality = json_extract(record, '$.quality');
UPDATE chunks SET acl_index = chunkwise_acl_index(acl, quality);
"""))

# Document identity (issue 10): a document is (root, path) — the folder it was ingested under and its
# path relative to it — and keeps its doc_id for life. Re-ingesting a sub-folder or one file of a
# root finds the same rows; a second folder with the same relative paths gets rows of its own.
MIGRATIONS.append((5, "roots and (root, path) document identity", """
CREATE TABLE roots (root TEXT PRIMARY KEY, added_at TEXT NOT NULL);
INSERT INTO roots SELECT DISTINCT root, datetime('now') FROM documents;
ALTER TABLE documents ADD COLUMN path TEXT NOT NULL DEFAULT '';
UPDATE documents SET path = source_uri;
CREATE UNIQUE INDEX documents_identity ON documents(root, path);
"""))

# Versions (issue 15): what links are derived from, per document (JSON, see enrich/versions.py), and
# the derived links, replaced whole at the end of every ingest run; deleting a document drops its
# links at once (the cascade), before the run re-derives them.
MIGRATIONS.append((6, "document versioning and version links", """
ALTER TABLE documents ADD COLUMN versioning TEXT NOT NULL DEFAULT '';
CREATE TABLE version_links (
    newer TEXT NOT NULL REFERENCES documents(doc_id) ON DELETE CASCADE,
    older TEXT NOT NULL REFERENCES documents(doc_id) ON DELETE CASCADE,
    how TEXT NOT NULL,               -- declared | detected
    similarity REAL NOT NULL,
    PRIMARY KEY (newer, older)
);
CREATE INDEX version_links_older ON version_links(older);
"""))

# One lexical analyzer (chunkwise.lexical: case and diacritics folded, Snowball English stems) for
# every engine: each chunk's analysed fields are kept in columns (body = its embedded text, title =
# its document's title, heading = its visible heading path; terms joined by one space) and FTS5 indexes
# them with the ``ascii`` tokenizer, which only splits them on that space, so FTS5 and the in-memory
# engine see the same terms. The access tokens keep their own column (never analysed). Every row is
# re-analysed here (``chunkwise_lexical``, registered on every connection) and the index rebuilt.
MIGRATIONS.append((7, "lexical fields analysed by chunkwise.lexical (stemmed body, title, heading)", """
ALTER TABLE chunks ADD COLUMN lex_body TEXT NOT NULL DEFAULT '';
ALTER TABLE chunks ADD COLUMN lex_title TEXT NOT NULL DEFAULT '';
ALTER TABLE chunks ADD COLUMN lex_heading TEXT NOT NULL DEFAULT '';
UPDATE chunks SET lex_body = chunkwise_lexical(record, embed_text, 'body'),
    lex_title = chunkwise_lexical(record, embed_text, 'title'), lex_heading = chunkwise_lexical(record, embed_text, 'heading');
DROP TRIGGER chunks_ai;
DROP TRIGGER chunks_ad;
DROP TRIGGER chunks_au;
DROP TABLE chunks_fts;
CREATE VIRTUAL TABLE chunks_fts USING fts5(lex_body, lex_title, lex_heading, acl_index, content='chunks',
    content_rowid='rowid', tokenize='ascii');
INSERT INTO chunks_fts(chunks_fts, rank) VALUES ('rank', 'bm25(1.0, 0.0, 0.0, 0.0)');
INSERT INTO chunks_fts(chunks_fts) VALUES ('rebuild');
CREATE TRIGGER chunks_ai AFTER INSERT ON chunks BEGIN
    INSERT INTO chunks_fts(rowid, lex_body, lex_title, lex_heading, acl_index)
    VALUES (new.rowid, new.lex_body, new.lex_title, new.lex_heading, new.acl_index);
END;
CREATE TRIGGER chunks_ad AFTER DELETE ON chunks BEGIN
    INSERT INTO chunks_fts(chunks_fts, rowid, lex_body, lex_title, lex_heading, acl_index)
    VALUES ('delete', old.rowid, old.lex_body, old.lex_title, old.lex_heading, old.acl_index);
END;
CREATE TRIGGER chunks_au AFTER UPDATE OF lex_body, lex_title, lex_heading, acl_index ON chunks BEGIN
    INSERT INTO chunks_fts(chunks_fts, rowid, lex_body, lex_title, lex_heading, acl_index)
    VALUES ('delete', old.rowid, old.lex_body, old.lex_title, old.lex_heading, old.acl_index);
    INSERT INTO chunks_fts(rowid, lex_body, lex_title, lex_heading, acl_index)
    VALUES (new.rowid, new.lex_body, new.lex_title, new.lex_heading, new.acl_index);
END;
"""))

# Documents by access tag (issue 25): one row per (tag, document, servable chunk), kept by triggers
# from the chunks table (only rows that may be served at all: ``acl_index`` not empty). Reading one
# document as a caller seeks (tag, doc_id) for each of the caller's tags, so a document the caller
# may not see is found empty without one of its rows being read: it costs what an absent one costs.
MIGRATIONS.append((8, "servable chunks by access tag and document (the permission filter inside document reads)", """
CREATE TABLE chunk_access (
    tag TEXT NOT NULL,
    doc_id TEXT NOT NULL,
    chunk INTEGER NOT NULL,
    PRIMARY KEY (tag, doc_id, chunk)
) WITHOUT ROWID;
CREATE INDEX chunk_access_chunk ON chunk_access(chunk);
INSERT OR IGNORE INTO chunk_access SELECT t.value, c.doc_id, c.rowid FROM chunks c, json_each(c.acl) t
    WHERE c.acl_index != '';
CREATE TRIGGER chunk_access_ai AFTER INSERT ON chunks WHEN new.acl_index != '' BEGIN
    INSERT OR IGNORE INTO chunk_access SELECT t.value, new.doc_id, new.rowid FROM json_each(new.acl) t;
END;
CREATE TRIGGER chunk_access_ad AFTER DELETE ON chunks BEGIN
    DELETE FROM chunk_access WHERE chunk = old.rowid;
END;
CREATE TRIGGER chunk_access_au AFTER UPDATE OF acl, acl_index, doc_id ON chunks BEGIN
    DELETE FROM chunk_access WHERE chunk = old.rowid;
    INSERT OR IGNORE INTO chunk_access SELECT t.value, new.doc_id, new.rowid FROM json_each(new.acl) t
        WHERE new.acl_index != '';
END;
"""))

# The store's generation (issue 24): a number that grows with every committed change of chunks or
# vectors, so a long-lived reader (``chunkwise serve``) sees in one cheap read, inside its snapshot,
# whether what it holds in memory (the dense index) is older than the store.
MIGRATIONS.append((9, "the store generation (grows with every change of chunks or vectors)", """
CREATE TABLE generation (id INTEGER PRIMARY KEY CHECK (id = 1), value INTEGER NOT NULL);
INSERT INTO generation VALUES (1, 1);
CREATE TRIGGER generation_chunks_ai AFTER INSERT ON chunks BEGIN UPDATE generation SET value = value + 1; END;
CREATE TRIGGER generation_chunks_ad AFTER DELETE ON chunks BEGIN UPDATE generation SET value = value + 1; END;
CREATE TRIGGER generation_chunks_au AFTER UPDATE ON chunks BEGIN UPDATE generation SET value = value + 1; END;
CREATE TRIGGER generation_vectors_ai AFTER INSERT ON vectors BEGIN UPDATE generation SET value = value + 1; END;
CREATE TRIGGER generation_vectors_ad AFTER DELETE ON vectors BEGIN UPDATE generation SET value = value + 1; END;
CREATE TRIGGER generation_vectors_au AFTER UPDATE ON vectors BEGIN UPDATE generation SET value = value + 1; END;
"""))

# The FTS rows of inserted chunks are written by the store, in bulk, before each commit
# (``store/sqlite/fts.py``): the per-row trigger made FTS5 write a segment per chunk (a statement
# savepoint flushes its pending terms) and merge them again, 40% of ingest's SQL time on small files.
# Deletes and updates keep their triggers (the store indexes pending rows before either runs). The
# generation, likewise, grows once per statement that inserts chunks or vectors (the store's
# ``_apply`` and ``_put_vectors``, the only two), not once per row: it needs only to grow.
MIGRATIONS.append((10, "FTS rows and the generation of inserted chunks written per statement by the store", """
DROP TRIGGER chunks_ai;
DROP TRIGGER generation_chunks_ai;
DROP TRIGGER generation_vectors_ai;
"""))

# The permission index's rows of inserted chunks are written by the store too, with their FTS rows
# and at the same moments (``store/sqlite/fts.py``): the per-row trigger ran a trigger program and a
# ``json_each`` for every chunk, ~20% of the single writer's SQL time on small files. Rows already in
# ``chunk_access`` stay; its delete and update triggers are unchanged (the store indexes pending rows
# before it deletes or updates chunks, so they find what they remove).
MIGRATIONS.append((11, "chunk_access rows of inserted chunks written per commit by the store", """
DROP TRIGGER chunk_access_ai;
"""))

LATEST = MIGRATIONS[-1][0]
