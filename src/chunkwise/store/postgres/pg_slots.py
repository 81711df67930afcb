"""Writer slots: the rows every write transaction updates, split so that parallel writers (Ray's
write actors, several ingest processes) do not wait for one another (migration 11).

Why: a document's transaction bumps the store's ``generation``, its tag set's ``acl_stats`` and, by
the postings trigger (store/postgres/pg_bm25.py), the ``term_df`` row of each of its (lexeme, tag
set): rows every other document of the same tag set updates too. A row updated by an open
transaction is locked until it commits, so two writers took turns for the whole of their write
(measured: ~half of a writer's active time in ``Lock:transactionid`` waits, 1,000 generated
Markdown files, two writers), and Ray's parallel writers were no faster than one.

Each of these rows is now one per (key, slot). A write transaction claims a slot first
(``CLAIM``: the lowest of ``SLOTS`` whose transaction-scoped advisory lock is free, remembered in
the transaction-local setting ``chunkwise.slot``), and the triggers and the statistics it writes
go to that slot's rows: concurrent writers hold different slots, and a lone writer always holds
slot 0, so a store written by one process at a time keeps exactly one row per key, as before.
Readers add the slots up: the generation is ``sum(value)`` (it still grows with every commit, and
is read in the same snapshot as the rows), a tag set's rows and length are sums, and a term's
document frequency per tag set is a sum whose bounds (largest counts, shortest body) are the
slots' largest and shortest (store/postgres/pg_bm25.py ``term_stats``). A slot's row may hold a
negative count (a document written in one slot, deleted in another); only the sums mean anything.
"""
from __future__ import annotations

from chunkwise.store.postgres.pg_bm25 import postings_function

SLOTS = 8  # concurrent writers that never wait for one another; more share a slot (and take turns)
_SLOT_LOCK = 0x63686E6B  # the first key of the two-key advisory locks the slots are claimed with

# SQL: claim a slot for this transaction (see the module doc); returns it.
CLAIM = "SELECT chunkwise_claim_slot()"

# The postings trigger's term_df statements (store/postgres/pg_bm25.py), into this transaction's slot: a
# deleted row's terms are a negative count (the bounds of a new row neutral: no counts, no shortest body).
_UNCOUNT = """    INSERT INTO term_df AS t (lexeme, set_id, slot, df, m0, m1, m2, min_len)
    SELECT lexeme, set_id, chunkwise_slot(), -count(*), 0, 0, 0, 2147483647 FROM p GROUP BY 1, 2 ORDER BY 1, 2
    ON CONFLICT (lexeme, set_id, slot) DO UPDATE SET df = t.df + excluded.df;"""
_COUNT = """    INSERT INTO term_df AS t (lexeme, set_id, slot, df, m0, m1, m2, min_len)
    SELECT lexeme, set_id, chunkwise_slot(), count(*), max(f0), max(f1), max(f2), min(len) FROM p
     GROUP BY 1, 2 ORDER BY 1, 2
    ON CONFLICT (lexeme, set_id, slot) DO UPDATE SET df = t.df + excluded.df,
       m0 = greatest(t.m0, excluded.m0), m1 = greatest(t.m1, excluded.m1),
       m2 = greatest(t.m2, excluded.m2), min_len = least(t.min_len, excluded.min_len);"""

MIGRATION = f"""
CREATE FUNCTION chunkwise_slot() RETURNS smallint LANGUAGE sql STABLE AS
$$ SELECT coalesce(nullif(current_setting('chunkwise.slot', true), ''), '0')::smallint $$;
CREATE FUNCTION chunkwise_claim_slot() RETURNS smallint LANGUAGE plpgsql AS $$
DECLARE s smallint;
BEGIN
  FOR s IN 0..{SLOTS - 1} LOOP
    IF pg_try_advisory_xact_lock({_SLOT_LOCK}, s) THEN
      PERFORM set_config('chunkwise.slot', s::text, true);
      RETURN s;
    END IF;
  END LOOP;
  s := pg_backend_pid() % {SLOTS};
  PERFORM set_config('chunkwise.slot', s::text, true);
  RETURN s;
END $$;
ALTER TABLE generation DROP CONSTRAINT IF EXISTS generation_id_check;
CREATE OR REPLACE FUNCTION chunkwise_bump_generation() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO generation AS g (id, value) VALUES (1 + chunkwise_slot(), 1) ON CONFLICT (id) DO UPDATE SET value = g.value + 1;
  RETURN NULL;
END $$;
ALTER TABLE acl_stats ADD COLUMN slot SMALLINT NOT NULL DEFAULT 0;
ALTER TABLE acl_stats DROP CONSTRAINT acl_stats_pkey;
ALTER TABLE acl_stats ADD PRIMARY KEY (acl, slot);
ALTER TABLE term_df ADD COLUMN slot SMALLINT NOT NULL DEFAULT 0;
ALTER TABLE term_df DROP CONSTRAINT term_df_pkey;
ALTER TABLE term_df ADD PRIMARY KEY (lexeme, set_id, slot);
""" + postings_function("CREATE OR REPLACE", _UNCOUNT, _COUNT)

# SQL: add one transaction's change of a tag set's statistics to this transaction's slot, and drop
# the slot's rows that hold nothing (rows and length both zero: a slot's sums may be negative).
BUMP_STATS = ("INSERT INTO acl_stats AS a (acl, slot, rows, total_len) VALUES (%s, chunkwise_slot(), %s, %s)"
              " ON CONFLICT (acl, slot) DO UPDATE SET rows = a.rows + excluded.rows,"
              " total_len = a.total_len + excluded.total_len")
DROP_EMPTY_STATS = "DELETE FROM acl_stats WHERE slot = chunkwise_slot() AND rows = 0 AND total_len = 0"
GENERATION = "SELECT coalesce(sum(value), 0) FROM generation"
# The same before migration 11 (one row per tag set): only where a test stops the migrations early.
UNSLOTTED_STATS = ("INSERT INTO acl_stats AS a (acl, rows, total_len) VALUES (%s, %s, %s) ON CONFLICT (acl) DO UPDATE"
                   " SET rows = a.rows + excluded.rows, total_len = a.total_len + excluded.total_len",
                   "DELETE FROM acl_stats WHERE rows = 0")
