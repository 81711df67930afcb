"""The dense-search table of the PostgreSQL store: one row per servable chunk with a vector, carrying
the chunk's access tags (``dense.acl``, GIN-indexed) next to its vector, and nothing else (its key:
a row of 1.6 KB at 384 dimensions, five to a page; the embed key is found through ``chunks``).

Why: a caller who may see a small share of the store gets the exact scan of its rows (the HNSW walk
of pgvector < 0.8 holds at most ``hnsw.ef_search`` <= 1,000 rows, too few of such a caller's). That
scan read each permitted chunk (a wide row: text, tsvector, term counts), joined it to ``vectors``
by its text key and read the vector there: 13-16 us of CPU per permitted row at a million chunks
(docs/_figures/s3-pgfilter.md). Here the permitted rows are found in ``dense`` alone (its tag index)
and their distances computed from the same row, with no join: only the few rows inside the top-n cut
touch ``chunks`` (their chunk ids, for the order of ties, and the permission check again).

The rows are kept by triggers on ``chunks`` and ``vectors`` (like BM25's postings, pg_bm25.py), in
the writing statement's transaction, so no write path can forget them: a chunk that becomes
servable with a vector gets its row, one whose tags, servability or embed key change gets it
replaced, a deleted chunk loses it (the foreign key's cascade), and a vector written or replaced
after its chunks refreshes their rows. ``DRIFT_SQL`` counts the rows that disagree with the chunks
and vectors (the tests' oracle); ``STALE_SQL`` counts the same by key, for ``chunkwise check``.

Row-level security: the policy on ``dense`` is the chunk's own rule (servable rows sharing a tag
with the caller: ``dense`` holds only servable rows, with the chunk's tags), so a reader never sees
the vector of a chunk it may not read (pg_security.POLICIES).

The vector is stored twice (``vectors`` once per embed key, for the HNSW index, and here once per
servable chunk): at 384 dimensions 1.5 KB per chunk, the price of reading a caller's rows without
touching anyone else's.
"""
from __future__ import annotations

# Fills `dense` from scratch (the migration, and bulk loads that switch its triggers off).
FILL_SQL = """INSERT INTO dense SELECT c.key, c.acl, v.vector FROM chunks c JOIN vectors v ON v.embed_key = c.embed_key
 WHERE c.servable ORDER BY c.key"""
ACL_INDEX_SQL = "CREATE INDEX dense_acl ON dense USING gin (acl)"

MIGRATION = f"""
CREATE TABLE dense (
    key BIGINT PRIMARY KEY REFERENCES chunks(key) ON DELETE CASCADE,
    acl TEXT[] NOT NULL,
    vector VECTOR NOT NULL
);
{FILL_SQL};
{ACL_INDEX_SQL};
CREATE FUNCTION chunkwise_dense_chunk() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'UPDATE' THEN
    DELETE FROM dense WHERE key = OLD.key;
  END IF;
  IF NEW.servable THEN
    INSERT INTO dense SELECT NEW.key, NEW.acl, v.vector FROM vectors v WHERE v.embed_key = NEW.embed_key;
  END IF;
  RETURN NULL;
END $$;
CREATE TRIGGER dense_chunk_insert AFTER INSERT ON chunks FOR EACH ROW WHEN (NEW.servable)
    EXECUTE FUNCTION chunkwise_dense_chunk();
CREATE TRIGGER dense_chunk_update AFTER UPDATE OF acl, servable, embed_key ON chunks FOR EACH ROW
    WHEN (OLD.acl IS DISTINCT FROM NEW.acl OR OLD.servable IS DISTINCT FROM NEW.servable
          OR OLD.embed_key IS DISTINCT FROM NEW.embed_key)
    EXECUTE FUNCTION chunkwise_dense_chunk();
CREATE FUNCTION chunkwise_dense_vector() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM dense d USING chunks c WHERE c.embed_key = OLD.embed_key AND d.key = c.key;
  IF TG_OP = 'UPDATE' THEN
    INSERT INTO dense SELECT c.key, c.acl, NEW.vector FROM chunks c WHERE c.embed_key = NEW.embed_key AND c.servable;
  END IF;
  RETURN NULL;
END $$;
CREATE FUNCTION chunkwise_dense_new_vector() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO dense SELECT c.key, c.acl, NEW.vector FROM chunks c
   WHERE c.embed_key = NEW.embed_key AND c.servable ON CONFLICT (key) DO UPDATE SET vector = excluded.vector;
  RETURN NULL;
END $$;
CREATE TRIGGER dense_vector_insert AFTER INSERT ON vectors FOR EACH ROW EXECUTE FUNCTION chunkwise_dense_new_vector();
CREATE TRIGGER dense_vector_update AFTER UPDATE ON vectors FOR EACH ROW
    WHEN (OLD.vector IS DISTINCT FROM NEW.vector OR OLD.embed_key IS DISTINCT FROM NEW.embed_key)
    EXECUTE FUNCTION chunkwise_dense_vector();
CREATE TRIGGER dense_vector_delete AFTER DELETE ON vectors FOR EACH ROW EXECUTE FUNCTION chunkwise_dense_vector();
ANALYZE dense;
"""

# The exact nearest rows of a caller (``%(groups)s``: its tags; ``%(q)s`` the query): (key, distance)
# of every permitted row from ``dense`` alone, then the vectors and chunk ids of those within
# ``%(slack)s`` of the ``%(last)s``-th (0-based) nearest, ties in chunk id order. A zero vector's
# distance is NaN in pgvector; the retriever scores it 0 (distance 1). The rows inside the cut are
# checked against the chunks' own rule again (``permitted``), so a stale ``dense`` row could only
# hide a chunk, never show one.
EXACT = """WITH s AS MATERIALIZED (SELECT x.key, coalesce(nullif(x.vector <=> %(q)s, 'NaN'), 1) AS d
  FROM dense x WHERE {dense}),
 cut AS (SELECT d FROM s ORDER BY d LIMIT 1 OFFSET %(last)s)
SELECT s.key, x.vector FROM s JOIN dense x ON x.key = s.key JOIN chunks c ON c.key = s.key
 WHERE s.d <= coalesce((SELECT d FROM cut), 'Infinity'::float8) + %(slack)s AND {permitted}
 ORDER BY s.d, c.chunk_id COLLATE "C\""""

# Rows of ``dense`` that disagree with the chunks and vectors (missing, extra or stale): 0 in a sound store.
DRIFT_SQL = """SELECT count(*) FROM (
  (SELECT c.key, c.acl, v.vector::text FROM chunks c JOIN vectors v ON v.embed_key = c.embed_key WHERE c.servable
   EXCEPT ALL SELECT key, acl, vector::text FROM dense)
  UNION ALL
  (SELECT key, acl, vector::text FROM dense
   EXCEPT ALL SELECT c.key, c.acl, v.vector::text FROM chunks c JOIN vectors v ON v.embed_key = c.embed_key
    WHERE c.servable)) d"""

# ``DRIFT_SQL`` by joins on the keys (no vector cast to text: ``chunkwise check`` runs it on a whole
# store), one count per key: servable chunks with a vector whose row is missing or differs, plus rows
# of no such chunk. The second count joins keys only (``chunks`` to the ``vectors`` primary key, an
# index-only scan, then an anti-join on ``dense``'s): a row's vector is read by the first count
# alone, the one that must compare it. Before, the second count probed ``vectors`` once per row: at
# 1M rows 21 of the statement's 48 s against 4 s now (BENCHMARKS, "stale-rows count at 1M").
STALE_SQL = """SELECT
 (SELECT count(*) FROM chunks c JOIN vectors v ON v.embed_key = c.embed_key LEFT JOIN dense d ON d.key = c.key
   WHERE c.servable AND (d.key IS NULL OR d.acl IS DISTINCT FROM c.acl OR d.vector <> v.vector))
 + (SELECT count(*) FROM dense d WHERE NOT EXISTS (SELECT 1 FROM chunks c JOIN vectors v ON v.embed_key = c.embed_key
   WHERE c.key = d.key AND c.servable))"""
