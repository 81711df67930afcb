"""PostgreSQL schema and recorded migrations: the SQLite store's semantics (store/sqlite/schema.py) in
server types. Numbered on their own (a PostgreSQL store never held the SQLite history); each runs
once, in order, in one transaction under an advisory lock, so two processes opening a new database
at once apply it exactly once.

What differs from SQLite, and why:
- ``chunks.acl`` is a ``text[]`` of canonical tags with a GIN index; ``servable`` (ready and
  tagged) is a column, so every search says ``servable AND acl && $groups`` inside its query.
- The lexical index is the analyzer's terms of every field as a ``tsvector`` (GIN, ``@@`` finds the
  rows holding a term) plus their counts per field (``lex_tf``) and the body's length (``lex_len``):
  BM25F is computed from the *permitted* rows' statistics, exactly as the SQLite engines do (see
  store/postgres/postgres_read.py).
- ``acl_stats`` keeps, per distinct tag set, the servable rows and their summed length, updated in
  each document's transaction: a caller's row count and mean length are one small sum, always
  consistent with the rows.
- ``postings`` and ``term_df`` (migration 9, store/postgres/pg_bm25.py): each servable row's terms by
  (lexeme, tag set, key), and per (lexeme, tag set) the rows and upper bounds, kept by triggers;
  BM25's top k reads only the postings it needs of the tag sets the caller may see.
- ``generation``, ``acl_stats`` and ``term_df`` hold one row per writer slot (migration 11,
  store/postgres/pg_slots.py): concurrent writers update different rows; readers add them up.
- Each vector is stored once, by embed key, in ``vectors`` (chunks with the same embedded text
  share it; migration 7 dropped the copy every chunk carried). The HNSW index (``vectors_hnsw``) is
  built on it for the store's one dimension once vectors exist
  (``postgres.PostgresStore._ensure_hnsw``); a search walks it for the nearest keys and joins them
  to the permitted chunks (``pg_security.hnsw_statement``). Migration 10 adds ``dense``: each
  servable chunk's tags and vector in one row (a second copy, kept by triggers), so the exact scan
  of a caller's rows reads those rows only (store/postgres/pg_dense.py).
- A chunk's record (its metadata) is ``jsonb`` with a GIN index (``jsonb_path_ops``: ``record @>
  '{"heading_path": ["Runbook"]}'``); times are ``timestamptz``; a document's ``updated_at`` stays
  the text its author wrote, and ``updated`` is that text read as a time when it is an ISO date
  (indexed, for date filters), NULL otherwise.
"""
from __future__ import annotations

from chunkwise.store.postgres import pg_bm25, pg_dense, pg_slots

MIGRATIONS: list[tuple[int, str, str]] = [
    (1, "documents, chunks, vectors, runs, settings, roots, access statistics", """
CREATE EXTENSION IF NOT EXISTS vector;
CREATE TABLE roots (root TEXT PRIMARY KEY, added_at TIMESTAMPTZ NOT NULL DEFAULT now());
CREATE TABLE documents (
    doc_id TEXT PRIMARY KEY,
    root TEXT NOT NULL,
    path TEXT NOT NULL,
    source_uri TEXT NOT NULL,
    source_version TEXT NOT NULL,
    inputs TEXT NOT NULL,
    title TEXT, author TEXT, updated_at TEXT,
    ingested_at TEXT NOT NULL,
    chunk_count INTEGER NOT NULL,
    UNIQUE (root, path)
);
CREATE TABLE chunks (
    key BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    chunk_id TEXT NOT NULL UNIQUE,
    doc_id TEXT NOT NULL REFERENCES documents(doc_id) ON DELETE CASCADE,
    chunk_index INTEGER NOT NULL,
    record TEXT NOT NULL,
    text TEXT NOT NULL,
    embed_text TEXT NOT NULL,
    embed_model TEXT NOT NULL,
    embed_key TEXT NOT NULL,
    acl TEXT[] NOT NULL,
    quality TEXT NOT NULL,
    size INTEGER NOT NULL,
    servable BOOLEAN NOT NULL,
    lex TSVECTOR NOT NULL,
    lex_tf JSONB NOT NULL,
    lex_len INTEGER NOT NULL,
    vector VECTOR
);
CREATE INDEX chunks_doc ON chunks (doc_id, chunk_index);
CREATE INDEX chunks_embed_key ON chunks (embed_key);
CREATE INDEX chunks_acl ON chunks USING gin (acl) WHERE servable;
CREATE INDEX chunks_lex ON chunks USING gin (lex);
CREATE TABLE vectors (
    embed_key TEXT PRIMARY KEY,
    model TEXT NOT NULL,
    dim INTEGER NOT NULL,
    vector VECTOR NOT NULL
);
CREATE TABLE runs (
    run_id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    started_at TEXT NOT NULL,
    finished_at TEXT,
    stats TEXT
);
CREATE TABLE settings (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE acl_stats (
    acl TEXT[] PRIMARY KEY,
    rows BIGINT NOT NULL,
    total_len BIGINT NOT NULL
);
"""),
    # Versions (issue 15; SQLite migration 6): what links are derived from, per document (JSON, see
    # enrich/versions.py), and the derived links, replaced whole by ``relink_versions``; deleting a
    # document drops its links at once (the cascade).
    (2, "document versioning and version links", """
ALTER TABLE documents ADD COLUMN versioning TEXT NOT NULL DEFAULT '';
CREATE TABLE version_links (
    newer TEXT NOT NULL REFERENCES documents(doc_id) ON DELETE CASCADE,
    older TEXT NOT NULL REFERENCES documents(doc_id) ON DELETE CASCADE,
    how TEXT NOT NULL,
    similarity DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (newer, older)
);
CREATE INDEX version_links_older ON version_links (older);
"""),
    # The lexical analyzer with stems and fields (SQLite migration 7): each chunk's analysed body,
    # title and heading (``chunkwise.lexical.LexicalFields``, what SQLite keeps and FTS5 indexes);
    # ``lex`` (the tsvector, lexemes taken verbatim by ``array_to_tsvector``, never re-parsed) holds
    # every field's terms, ``lex_tf`` each lexeme's counts per field ([body, title, heading]),
    # ``lex_len`` the body's length. The rows are re-analysed in Python (``PostgresStore._reanalyse``).
    (3, "lexical fields analysed by chunkwise.lexical (stemmed body, title, heading)", """
ALTER TABLE chunks ADD COLUMN lex_body TEXT NOT NULL DEFAULT '';
ALTER TABLE chunks ADD COLUMN lex_title TEXT NOT NULL DEFAULT '';
ALTER TABLE chunks ADD COLUMN lex_heading TEXT NOT NULL DEFAULT '';
"""),
    # Row-level security (issue 12; store/postgres/pg_security.py): the caller-groups function, the two
    # store-wide facts a reader may ask (SECURITY DEFINER) and the policies, created in Python
    # (``pg_security.install``: the definitions live there once). Inert until ``chunkwise pg-secure``
    # enables RLS on the tables; a secured store gets them re-applied after every migration.
    (4, "row-level security policies and functions (inert until chunkwise pg-secure)", ""),
    # A reader's lexical match through the GIN indexes (``chunkwise_matching``): the functions again.
    (5, "row-level security: the indexed lexical match for readers", ""),
    # A reader's nearest neighbours through the HNSW index (``chunkwise_nearest``): the functions again.
    (6, "row-level security: the indexed nearest-neighbour search for readers", ""),
    # What a DBA expects (issue 28): metadata as jsonb with a GIN index, times as timestamptz, each
    # vector once (the HNSW index moves to ``vectors``; the reader's functions are re-created for it).
    # ``documents.updated`` is filled in Python (``PostgresStore._fill_updated``: ISO dates only).
    (7, "jsonb records, timestamptz times, each vector stored once", """
DROP INDEX IF EXISTS chunks_hnsw;
ALTER TABLE chunks DROP COLUMN vector;
ALTER TABLE chunks ALTER COLUMN record TYPE JSONB USING record::jsonb;
CREATE INDEX chunks_record ON chunks USING gin (record jsonb_path_ops);
ALTER TABLE documents ALTER COLUMN ingested_at TYPE TIMESTAMPTZ USING ingested_at::timestamptz;
ALTER TABLE documents ADD COLUMN updated TIMESTAMPTZ;
CREATE INDEX documents_updated ON documents (updated);
ALTER TABLE runs ALTER COLUMN started_at TYPE TIMESTAMPTZ USING started_at::timestamptz;
ALTER TABLE runs ALTER COLUMN finished_at TYPE TIMESTAMPTZ USING finished_at::timestamptz;
ALTER TABLE runs ALTER COLUMN stats TYPE JSONB USING stats::jsonb;
"""),
    # The store's generation (SQLite migration 9), bumped once per statement that changes chunks or
    # vectors; readers may read it (pg_security.PLAIN_TABLES).
    (8, "the store generation (grows with every change of chunks or vectors)", """
CREATE TABLE generation (id INTEGER PRIMARY KEY CHECK (id = 1), value BIGINT NOT NULL);
INSERT INTO generation VALUES (1, 1);
CREATE FUNCTION chunkwise_bump_generation() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN UPDATE generation SET value = value + 1; RETURN NULL; END $$;
CREATE TRIGGER generation_chunks AFTER INSERT OR UPDATE OR DELETE ON chunks
    FOR EACH STATEMENT EXECUTE FUNCTION chunkwise_bump_generation();
CREATE TRIGGER generation_vectors AFTER INSERT OR UPDATE OR DELETE ON vectors
    FOR EACH STATEMENT EXECUTE FUNCTION chunkwise_bump_generation();
"""),
    # BM25 that scales (issue 26): postings by (lexeme, tag set, key) and per-tag-set term statistics,
    # kept by triggers on ``chunks``, filled from the rows already stored (store/postgres/pg_bm25.py); the
    # reader's policies on the new tables (pg_security.install).
    (9, "postings and per-tag-set term statistics for BM25", pg_bm25.MIGRATION),
    # Filtered dense search at scale (issue 25 item 10): each servable chunk's tags next to its vector
    # (store/postgres/pg_dense.py), kept by triggers; a caller's exact scan reads only its own rows of it.
    (10, "dense: each servable chunk's tags and vector, for the exact scan of a caller's rows", pg_dense.MIGRATION),
    # Parallel writers that do not take turns (issue 26, Ray on PostgreSQL): the rows every write
    # updates (generation, acl_stats, term_df) one per writer slot (store/postgres/pg_slots.py).
    (11, "writer slots: generation, tag-set statistics and term statistics per concurrent writer", pg_slots.MIGRATION),
]
REANALYSE = 3  # the migration after whose SQL every row is re-analysed
ROW_SECURITY = (4, 5, 6, 7, 9, 10)  # the migrations whose work is pg_security.install
DATES = 7  # the migration after whose SQL every document's ``updated`` is read from ``updated_at``

LATEST = MIGRATIONS[-1][0]
