"""The PostgreSQL store's reads: the Store protocol's reads, and the server-side search primitives
the retriever uses instead of loading rows into memory (``native_search``).

Every search query carries the permission filter itself (``servable AND acl && $groups``, GIN
index on ``acl``), so a row the caller may not see is never matched, counted or ordered:

- ``lexical_stats``: the permitted rows' count and mean length (a sum over ``acl_stats``);
- ``lexical_df``: per term, the permitted rows holding it (sums over the caller's tag sets,
  store/postgres/pg_bm25.py);
- ``lexical_top``: BM25 over those rows computed in the server (MaxScore over the postings of the
  caller's tag sets, store/postgres/pg_bm25.py), with the same formula and statistics as the
  SQLite engines; only the candidates for the top n leave it, with their term counts and lengths, and retrieve/server.py re-scores them in its own arithmetic, so the scores
  are the same numbers (see README "PostgreSQL"); ``lexical_postings`` returns every permitted
  posting of a term (``term_matches``);
- ``dense_candidates``: the permitted rows nearest a query vector, exact (a scan of the permitted
  rows of ``dense``, which carries each chunk's tags beside its vector: no join, no index can miss
  a row; store/postgres/pg_dense.py) when they are few or there is no index, else through the HNSW
  index with ``ef_search`` raised for the filter's selectivity (pgvector < 0.8 has no iterative
  scan; >= 0.8 gets ``hnsw.iterative_scan``), the walk widened when the filter leaves it short,
  falling back to exact when even the widest returns too few (or could not, for the caller's share
  of the rows: then no walk): the index's walk runs before the filter, but a walk is served only
  when it holds ``WALK_FILL`` of the caller's rows per neighbour wanted, so hidden rows can crowd
  the walk, not the results.

``snapshot`` runs a ranking's statements in one repeatable-read read-only transaction, so the
statistics and postings it combines describe one state of the store even while ingests write.
``as_caller(groups)`` is that transaction with the caller's groups set for the row-level security
policies (store/postgres/pg_security.py) of a secured store; every read that takes ``groups`` runs in it,
and the retriever runs a whole search (ranking, rows, version links, expansion) in one.
"""
from __future__ import annotations

import json
import math
import re
from contextlib import contextmanager, nullcontext
from typing import Iterable, Iterator, Sequence

from chunkwise.lexical import FIELDS
from chunkwise.store.base import (DocumentRow, Postings, ServableRows, StoreCounts, StoredChunk, VersionLink,
                                  servable_columns, tie_ranks)
from chunkwise.store.postgres import pg_bm25, pg_dense, pg_groups
from chunkwise.store.postgres.pg_slots import GENERATION
from chunkwise.store.postgres.pg_lexemes import in_fields, lexeme, per_field, tsquery
from chunkwise.store.postgres.pg_values import _groups, _record, _tags, as_array, pgvector_at_least  # noqa: F401
from chunkwise.store.postgres.pg_security import (GROUPS_SETTING, HAS_VECTORS, dense_permitted, hnsw_statement, permitted,
                                                  visible_document)

# Permitted rows up to which an exact scan is cheaper than a filtered HNSW walk. The scan reads the
# caller's rows of ``dense`` alone (store/postgres/pg_dense.py): at 1M rows, client + server CPU per
# search 12-14 ms for 10k permitted rows, 23 ms for 20k, 49 ms for 51k (recall@10 1.000), against
# 40-60 ms for an ``ef_search`` 1,000 walk (51k rows: 60 ms, recall@10 0.957, p95 2.5x the scan's:
# the walks left short fall back to the scan); 200k rows: 321 ms (docs/_figures/s4-pgvec.md). Above
# it a caller still gets the exact scan when the widest walk cannot hold enough of its rows (``_nearest``).
EXACT_ROWS = 60_000
DISTANCE_SLACK = 1e-5  # > the float32 rounding between the server's cosine and the retriever's
SCORE_SLACK = 1e-6  # relative; > float32 rounding (6e-8) plus the server's float8 summation error
HNSW_MARGIN = 16  # extra neighbours asked of the index, for the same reason
MAX_EF_SEARCH = 1000  # pgvector's upper bound for hnsw.ef_search
# A walk is served only if it holds this many permitted rows per neighbour wanted: then the n-th lies
# in the first quarter of the walk, where HNSW's order holds. At 50k rows + 50k hidden, a caller of
# 5% of the rows (2.5% after) served from walks holding n + 16: recall@10 0.965; with 4n: 0.997
# (docs/_figures/pgfilter.md).
WALK_FILL = 4
# hnsw.ef_search per neighbour wanted, times the filter's selectivity (total / permitted rows): with
# 4, recall@10 of the filtered exact top 10 at 1M generated chunks (caller holds 3 of 20 groups) was
# 0.953 and 0.948 on two builds of the same data; with 8, 0.963 (dense p50 28 -> 42-47 ms, measured under load).
EF_PER_NEIGHBOUR = 8
# A search transaction's work_mem is raised to this (never lowered): a term's bitmap of matching rows
# over ~64k heap pages at the server default (4MB) turns lossy, and every row of a lossy page is
# re-tested against its (TOASTed) tsvector — 1.7 s instead of 0.18 s for such a term at 1M chunks.
SEARCH_WORK_MEM = "64MB"

_CHUNK_SQL = """SELECT c.key, c.chunk_id, c.doc_id, c.chunk_index, c.record, c.text, c.embed_text, c.acl, c.quality,
    d.source_uri, d.source_version FROM chunks c JOIN documents d ON d.doc_id = c.doc_id"""
_PERMITTED = permitted("c", "%(groups)s")
_DENSE_PERMITTED = dense_permitted("x", "%(groups)s")
# A timestamptz as the ISO text the pipeline writes (``2026-12-06T18:00:00Z``), whatever the session's time zone.
ISO_UTC = """to_char({} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"')"""


def _walk_rows(n: int) -> int:
    """The permitted rows an HNSW walk must hold to be served, for the ``n`` nearest."""
    return max(n + HNSW_MARGIN, WALK_FILL * n)


class PostgresReads:
    db: object
    location: str
    pgvector_version: str
    filtered_reads = False  # row-level security applies to this connection's role (a pg-secure reader)
    _caller: tuple[str, ...] | None = None  # the groups of the caller transaction we are in
    _narrow: tuple[str, ...] | None = None  # those of them some servable row carries (pg_groups)
    _memo: dict | None = None  # the caller's tag sets and term statistics, read once per caller transaction

    def _tags(self, groups) -> list[str]:
        """The groups a filter says: inside this caller's transaction, those of them the store uses
        (store/postgres/pg_groups.py); elsewhere the caller's canonical groups."""
        tags = _groups(groups)
        return list(self._narrow) if self._caller is not None and tuple(tags) == self._caller else tags

    def _term_stats(self, groups, lexemes: list[str], fields: Sequence[str] = FIELDS) -> tuple[list[int], dict]:
        """(the caller's tag sets, ``pg_bm25.term_stats`` of ``lexemes``), remembered for the caller
        transaction: a search asks for the document frequencies, then scores with the same ones."""
        memo = self._memo if self._memo is not None else {}
        if "sets" not in memo:
            memo["sets"] = pg_bm25.caller_sets(self.db, self._tags(groups))
        known = memo.setdefault(tuple(fields), {})
        missing = [lx for lx in dict.fromkeys(lexemes) if lx not in known]
        if missing:
            known.update(pg_bm25.term_stats(self.db, missing, memo["sets"], fields))
        return memo["sets"], {lx: known[lx] for lx in lexemes}

    def _chunk(self, row) -> StoredChunk:
        key, cid, doc, index, record, text, embed_text, acl, quality, uri, version = row
        rec = {**_record(record), "chunk_id": cid, "doc_id": doc, "chunk_index": index, "text": text,
               "embed_text": embed_text}
        return StoredChunk(key, rec, _tags(acl), quality, uri, version)

    def _holding(self, tsquery_sql: str) -> str:
        """SQL from FROM to WHERE (the caller adds the conditions): the chunks ``c`` holding a
        lexeme. A reader under row-level security finds them through ``chunkwise_matching`` (both
        GIN indexes; its own ``lex @@`` would have to test every permitted row); the policy and the
        caller's filter still apply to ``c``."""
        if self.filtered_reads:
            return f"FROM chunkwise_matching({tsquery_sql}) AS m(key) JOIN chunks c ON c.key = m.key WHERE"
        return f"FROM chunks c WHERE c.lex @@ {tsquery_sql} AND"

    def _joined(self, tsquery_sql: str) -> str:
        """``_holding`` as a join to the rows of a term list on its left."""
        if self.filtered_reads:
            return f"CROSS JOIN LATERAL chunkwise_matching({tsquery_sql}) AS m(key) JOIN chunks c ON c.key = m.key"
        return f"JOIN chunks c ON c.lex @@ {tsquery_sql}"

    # -- retrieval primitives (the Store protocol) -----------------------------------------------
    def lexical_row_sizes(self) -> Iterator[tuple[int, int]]:
        """``(key, terms in the body)`` of every row."""
        yield from self.db.execute("SELECT key, lex_len FROM chunks ORDER BY key")

    def term_count(self, term: str, groups: Sequence[str] | None = None, fields: Sequence[str] = FIELDS) -> int:
        args = {"q": tsquery(term), "l": lexeme(term)}
        if groups is None:
            return self.db.execute("SELECT count(*) FROM chunks c WHERE c.lex @@ %(q)s::tsquery"
                                   + in_fields(fields, "%(l)s"), args).fetchone()[0]
        args["groups"] = self._tags(groups)
        with self.as_caller(groups):
            return self.db.execute(f"SELECT count(*) {self._holding('%(q)s::tsquery')} {_PERMITTED}"
                                   + in_fields(fields, "%(l)s"), args).fetchone()[0]

    def term_matches(self, term: str, groups: Sequence[str], fields: Sequence[str] = FIELDS) -> Postings:
        """The permitted rows holding ``term`` in one of ``fields``, with body lengths and per-field counts."""
        return self.lexical_postings([term], groups, fields)[term]

    def servable_rows(self, *, texts: bool = False, vectors: bool = False, lexical: bool = False,
                      ranks: bool = False) -> ServableRows:
        sql = ("SELECT c.key, c.acl, c.embed_text, c.lex_body, c.lex_title, c.lex_heading"
               + (", v.vector FROM chunks c JOIN vectors v ON v.embed_key = c.embed_key" if vectors else " FROM chunks c")
               + " WHERE c.servable ORDER BY c.key")
        with self.snapshot() if ranks else nullcontext():  # the tie order read from the same state
            keys, tags, out_texts, fields, rows = servable_columns(self.db.execute(sql), _tags, vectors=vectors,
                                                                   lexical=lexical)
            order = ([r for (r,) in self.db.execute('SELECT key FROM chunks ORDER BY chunk_id COLLATE "C"')]
                     if ranks else None)
        matrix = None
        if vectors and rows:
            import numpy as np

            matrix = np.vstack([as_array(v) for v in rows])
        return ServableRows(keys, tags, out_texts if texts else None, matrix, fields if lexical else None,
                            tie_ranks(keys, order) if ranks else None)

    def chunks(self, *, doc_id: str | None = None, keys: Sequence[int] | None = None) -> Iterator[StoredChunk]:
        if keys is not None:
            if doc_id is not None:
                raise ValueError("chunks: a doc_id or keys, not both")
            rows = self.db.execute(_CHUNK_SQL + " WHERE c.key = ANY(%s)", ([int(k) for k in keys],))
            return iter({r[0]: self._chunk(r) for r in rows}.values())
        if doc_id is None:
            return (self._chunk(r) for r in self.db.execute(_CHUNK_SQL + ' ORDER BY d.source_uri COLLATE "C", c.chunk_index'))
        rows = [self._chunk(r) for r in self.db.execute(_CHUNK_SQL + " WHERE c.doc_id = %s ORDER BY c.chunk_index", (doc_id,))]
        if self.filtered_reads and rows:  # the chunks it may not see stand in as positions (``_hidden``)
            rows = sorted([*rows, *self._hidden(doc_id, rows[0])], key=lambda c: c.record["chunk_index"])
        return iter(rows)

    def chunk_ids(self, keys: Sequence[int]) -> dict[int, str]:
        return dict(self.db.execute("SELECT key, chunk_id FROM chunks WHERE key = ANY(%s)", ([int(k) for k in keys],)))

    def generation(self) -> int | None:
        """Grows with every statement that changes chunks or vectors (schema migration 8); None for a
        reader the store's owner has not granted it to (secured before the table existed)."""
        if not self.db.execute("SELECT has_table_privilege('generation', 'SELECT')").fetchone()[0]:
            return None
        return int(self.db.execute(GENERATION).fetchone()[0])  # a row per writer slot (pg_slots)

    def _visible_records(self, doc_id: str, groups) -> dict[str, dict]:
        """The records of ``doc_id`` that ``groups`` may be served: the permission filter is in the
        query, so a document the caller may not see gives the same empty answer by the same path
        as one that does not exist."""
        rows = self.db.execute(f"SELECT c.chunk_id, c.record, c.text, c.embed_text FROM chunks c"
                               f" WHERE c.doc_id = %(doc)s AND {_PERMITTED}", {"doc": doc_id, "groups": self._tags(groups)})
        return {cid: {**_record(rec), "text": text, "embed_text": embed} for cid, rec, text, embed in rows}

    def count(self, doc_id: str | None = None, groups: Sequence[str] | None = None) -> int:
        """With ``groups``: the permission filter is in the query, the same path as ``records_of``'s."""
        if doc_id is None:
            if groups is not None:
                raise ValueError("count: groups need a doc_id")
            return self.db.execute("SELECT count(*) FROM chunks").fetchone()[0]
        if groups is None:
            return int(self.db.execute("SELECT count(*) FROM chunks WHERE doc_id = %s", (doc_id,)).fetchone()[0])
        return int(self.db.execute(f"SELECT count(*) FROM chunks c WHERE c.doc_id = %(doc)s AND {_PERMITTED}",
                                   {"doc": doc_id, "groups": self._tags(groups)}).fetchone()[0])

    def _hidden(self, doc_id: str, seen: StoredChunk) -> list[StoredChunk]:
        """Stand-ins for the chunks of ``doc_id`` the caller may not see (``chunkwise_hidden_chunks``:
        their positions, their section when a visible chunk shares it; no text, no tags, never
        permitted), so expansion stops at them or refuses their section as on the owner's connection."""
        out = []
        for index, section in self.db.execute("SELECT chunk_index, section_id FROM chunkwise_hidden_chunks(%s)", (doc_id,)):
            rec = {"chunk_id": f"hidden:{index}", "doc_id": doc_id, "chunk_index": index, "start_char": 0,
                   "end_char": 0, "text": "", "embed_text": "", "section_id": section}
            out.append(StoredChunk(-1 - index, rec, (), "hidden", seen.source_uri, seen.doc_version))
        return out

    def has_vectors(self) -> bool:
        """Store-wide: a reader under row-level security asks ``chunkwise_has_vectors()`` (the same
        answer as the owner's); any other role reads the table, as it may without policies."""
        if self.filtered_reads:
            return bool(self.db.execute("SELECT chunkwise_has_vectors()").fetchone()[0])
        return self.db.execute(f"SELECT {HAS_VECTORS}").fetchone()[0]

    # -- server-side search (native_search) ------------------------------------------------------
    @contextmanager
    def snapshot(self):
        """The statements inside see one consistent state of the store (repeatable read, read only)."""
        if self._caller is not None:  # a caller transaction is one already
            yield self
            return
        with self.db.transaction():
            self.db.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
            yield self

    @contextmanager
    def as_caller(self, groups):
        """The reads inside are a caller's holding ``groups``: one repeatable-read, read-only
        transaction (a savepoint in one already open) whose transaction-local ``chunkwise.groups``
        is the JSON array of the canonical groups, so a secured store's policies show exactly the
        rows those groups may see (no groups: none), and whose work_mem is at least
        ``SEARCH_WORK_MEM``. Nested with the same groups it adds nothing;
        with others it is a bug and raises."""
        tags = tuple(_groups(groups))
        if self._caller is not None:
            if tags != self._caller:
                raise ValueError(f"already reading as groups {list(self._caller)}, not {list(tags)}")
            yield self
            return
        from psycopg.pq import TransactionStatus

        fresh = self.db.info.transaction_status == TransactionStatus.IDLE
        with self.db.transaction():
            if fresh:
                self.db.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
            self.db.execute("SELECT set_config(%s, %s, true), CASE WHEN pg_size_bytes(current_setting('work_mem'))"
                            " < pg_size_bytes(%s) THEN set_config('work_mem', %s, true) END",
                            (GROUPS_SETTING, json.dumps(list(tags), ensure_ascii=False), SEARCH_WORK_MEM, SEARCH_WORK_MEM))
            self._caller, self._narrow, self._memo = tags, tuple(pg_groups.narrowed(self.db, tags)), {}
            if self._narrow != tags:  # the policies too see only the groups that tag something
                self.db.execute("SELECT set_config(%s, %s, true)",
                                (GROUPS_SETTING, json.dumps(list(self._narrow), ensure_ascii=False)))
            try:
                yield self
            finally:
                self._caller = self._narrow = self._memo = None
                if not fresh:  # the setting would outlive the savepoint, into the enclosing transaction
                    self.db.execute("SELECT set_config(%s, '', true)", (GROUPS_SETTING,))

    def lexical_stats(self, groups) -> tuple[int, float]:
        """(rows, mean text length in terms) of the servable rows ``groups`` may see."""
        with self.as_caller(groups):
            # the caller's tag sets in the same round trip: the search asks for them next (_term_stats)
            n, total, sets = self.db.execute(
                f"SELECT coalesce(sum(rows), 0), coalesce(sum(total_len), 0), ({pg_bm25.SETS_SQL}) FROM acl_stats"
                " WHERE acl && %s", (self._tags(groups), self._tags(groups))).fetchone()
            if self._memo is not None:
                self._memo.setdefault("sets", list(sets))
        return int(n), (float(total) / int(n)) if n else 1.0

    def lexical_df(self, terms: Sequence[str], groups, fields: Sequence[str] = FIELDS) -> dict[str, int]:
        """Permitted rows holding each term in one of ``fields`` (the document frequencies a caller's
        BM25 uses): sums over the tag sets the caller may see (store/postgres/pg_bm25.py)."""
        terms = list(dict.fromkeys(terms))
        if not terms:
            return {}
        with self.as_caller(groups):
            _, stats = self._term_stats(groups, [lexeme(t) for t in terms], fields)
        return {t: stats[lexeme(t)][0] for t in terms}

    def lexical_postings(self, terms: Sequence[str], groups, fields: Sequence[str] = FIELDS) -> dict[str, Postings]:
        """Per term, the permitted rows holding it in one of ``fields`` with their body lengths and the
        term's count per field (``Postings``), in one statement."""
        import numpy as np

        terms = list(dict.fromkeys(terms))
        found: dict[str, list] = {t: [] for t in terms}
        if not terms:
            return {}
        with self.as_caller(groups):
            rows = self.db.execute(
                f"WITH p AS MATERIALIZED (SELECT t.i, c.key, c.lex_len, c.lex_tf -> t.lexeme AS tf"
                f" FROM unnest(%(qs)s::text[], %(ls)s::text[]) WITH ORDINALITY AS t(q, lexeme, i)"
                f" {self._joined('t.q::tsquery')} WHERE {_PERMITTED})"
                f" SELECT i, key, lex_len, {per_field('tf', 'int')} FROM p WHERE true{in_fields(fields, '', 'tf')}",
                {"qs": [tsquery(t) for t in terms], "ls": [lexeme(t) for t in terms], "groups": self._tags(groups)}).fetchall()
        for i, *row in rows:
            found[terms[i - 1]].append(row)
        out = {}
        for t, got in found.items():
            if not got:
                out[t] = Postings.empty()
                continue
            a = np.asarray(got, dtype=np.float64)
            out[t] = Postings(a[:, 0].astype(np.int64), a[:, 1], a[:, 2:])
        return out

    def lexical_top(self, terms: Sequence[str], idf: Sequence[float], groups, avgdl: float, n: int, k1: float,
                    b: float, fields: Sequence[str] = FIELDS, weights: Sequence[float] = (1.0, 1.0, 1.0)
                    ) -> tuple[int, dict[int, tuple[int, dict[str, tuple[int, ...]]]]]:
        """BM25F scored inside the server: (rows holding any of ``terms`` in one of ``fields`` that
        ``groups`` may see, the candidates for the top ``n``: key -> (body length, term -> its count
        per field in ``FIELDS`` order)). A term's count in a row is its per-field counts weighted by
        ``weights`` (``FieldWeights.vector()``). Only the candidates leave the server: every row whose
        server-side score (float8, any summation order) is within a relative ``SCORE_SLACK`` of the
        ``n``-th best, so the caller, re-scoring them with its own arithmetic, finds exactly its own
        top ``n`` (ties included) among them."""
        terms = list(terms)
        if not terms or n < 1:
            return 0, {}
        with self.as_caller(groups):
            lexemes = [lexeme(t) for t in terms]
            sets, stats = self._term_stats(groups, lexemes)
            if not sets:
                return 0, {}
            matched, rows = pg_bm25.top(self.db, lexemes, idf, stats, sets, avgdl,
                                        n, k1, b, fields, weights, SCORE_SLACK)
        out: dict[int, tuple[int, dict[str, tuple[int, ...]]]] = {}
        for key, i, length, *tf in rows:
            out.setdefault(key, (length, {}))[1][terms[i - 1]] = tuple(tf)
        return matched, out

    def dense_candidates(self, vector, groups, n: int):
        """(keys, float32 matrix) of the permitted rows nearest ``vector`` (cosine), every row within
        ``DISTANCE_SLACK`` of the ``n``-th nearest included (so the caller, re-scoring them with its
        own float32 arithmetic, finds the same top ``n`` whatever the server's rounding, and an exact
        tie straddling the ``n``-th place is whole for the chunk id order to cut): on the exact path
        by the query itself; through HNSW by asking for ``n + HNSW_MARGIN`` neighbours, twice as many
        while the last one returned is still tied with the ``n``-th, up to ``MAX_EF_SEARCH``, then
        the exact scan (also when the filter leaves the index's candidates short)."""
        import numpy as np

        query = np.asarray(vector, dtype=np.float32).reshape(-1)
        with self.as_caller(groups):
            rows = self._nearest(query, groups, n)
        if not rows:
            return [], np.zeros((0, query.shape[0]), np.float32)
        return [r[0] for r in rows], np.vstack([as_array(r[1]) for r in rows])

    def _nearest(self, query, groups, n: int) -> list:
        """``dense_candidates``' rows (the caller's transaction is open). The store's servable total
        (it sizes ``ef_search``) comes, for a reader under row-level security (whose ``acl_stats``
        shows only its own tag sets), from ``chunkwise_servable_rows()``: the owner's number."""
        args = {"groups": self._tags(groups), "q": query, "n": int(n)}
        allowed, total = self.db.execute(
            "SELECT (SELECT coalesce(sum(rows), 0) FROM acl_stats WHERE acl && %(groups)s), chunkwise_servable_rows()"
            if self.filtered_reads else
            "SELECT coalesce(sum(rows) FILTER (WHERE acl && %(groups)s), 0), coalesce(sum(rows), 0) FROM acl_stats",
            args).fetchone()
        if not allowed or n < 1:
            return []
        dim = self._hnsw_dim()
        rows = None
        # The index only when its widest walk may hold the rows a walk must hold to be served (its
        # share of the caller's rows at least ``_walk_rows(n)``): else that walk is wasted work.
        if dim == query.shape[0] and allowed > EXACT_ROWS and MAX_EF_SEARCH * allowed >= _walk_rows(n) * total:
            rows = self._hnsw_whole_ties(args, dim, n, allowed, total)
        if rows is None:  # the exact scan of the caller's rows of ``dense`` (store/postgres/pg_dense.py)
            rows = self.db.execute(pg_dense.EXACT.format(dense=_DENSE_PERMITTED, permitted=_PERMITTED),
                                   {**args, "last": n - 1, "slack": DISTANCE_SLACK}).fetchall()
        return rows

    def _hnsw_whole_ties(self, args: dict, dim: int, n: int, permitted: int, total: int) -> list | None:
        """HNSW's candidates with the tie at the ``n``-th place whole, or None (scan exactly). The
        walk starts at the ``ef_search`` the filter's selectivity asks for; when the filter leaves
        its candidates short (the query's neighbourhood is crowded with rows the caller may not
        see), it is widened (x4) up to ``MAX_EF_SEARCH`` before giving up: a caller of many rows
        gets a wider walk, not a scan of all its rows. A walk is short unless it holds all the
        rows asked for (``WALK_FILL`` per neighbour wanted, at least ``n + HNSW_MARGIN``), not just
        ``n``: then the ``n``-th lies in the head of the walk, where the index's order is reliable;
        with fewer, the caller's rows sit in its tail, where HNSW misses many (recall@10 0.94 for a
        caller of 2% of 50k rows served from walks holding 10 of the caller's rows or more)."""
        limit, widen = _walk_rows(n), 1
        while True:
            ef = min(MAX_EF_SEARCH, widen * max(40, math.ceil(EF_PER_NEIGHBOUR * limit * total / permitted)))
            rows = self._hnsw({**args, "n": limit}, dim, limit, ef)
            if len(rows) < min(limit, permitted):  # not only n: the walk must fill the request
                if ef >= MAX_EF_SEARCH:
                    return None  # the filter left the widest walk's candidates short
                widen *= 4
                continue
            if len(rows) > n and rows[-1][2] > rows[n - 1][2] + DISTANCE_SLACK:
                return [r[:2] for r in rows]  # the last row is past the n-th's tie: none was cut off
            if limit >= MAX_EF_SEARCH:
                return None  # more rows tied with the n-th than the index can return
            limit = min(2 * limit, MAX_EF_SEARCH)

    def _hnsw(self, args: dict, dim: int, n: int, ef: int) -> list:
        """(key, vector, distance) of the ``n`` nearest permitted rows among the ``ef`` the index
        walks (``hnsw.ef_search``; a zero vector: distance 1)."""
        with self.db.transaction():
            self.db.execute(f"SET LOCAL hnsw.ef_search = {int(ef)}")
            if pgvector_at_least(self.pgvector_version, (0, 8)):
                self.db.execute("SET LOCAL hnsw.iterative_scan = strict_order")
            if self.filtered_reads:  # the same statement, planned with the groups (pg_security); the
                # policy filters every row it returns too (the join back to chunks, by primary key)
                return self.db.execute(
                    "SELECT n.key, n.vector, n.distance FROM chunkwise_nearest(%(q)s, %(dim)s, %(n)s)"
                    " WITH ORDINALITY AS n(key, vector, distance, i) JOIN chunks c ON c.key = n.key ORDER BY n.i",
                    {**args, "dim": int(dim)}).fetchall()
            return self.db.execute(hnsw_statement("chunks", "vectors", str(int(dim)), q="%(q)s", groups="%(groups)s",
                                                  n="%(n)s", walk="%(walk)s"), {**args, "walk": max(int(ef), n)}).fetchall()

    def _hnsw_dim(self) -> int | None:
        row = self.db.execute("SELECT pg_get_indexdef(indexrelid) FROM pg_index i JOIN pg_class c ON c.oid ="
                              " i.indexrelid WHERE c.relname = 'vectors_hnsw'").fetchone()
        found = re.search(r"vector\((\d+)\)", row[0]) if row else None
        return int(found.group(1)) if found else None

    # -- gate and manifest -----------------------------------------------------------------------
    def counts(self) -> StoreCounts:
        def one(sql: str) -> int:
            return self.db.execute(sql).fetchone()[0]

        reasons: dict[str, int] = {}
        for (rec,) in self.db.execute("SELECT record FROM chunks WHERE quality != 'ready'"):
            for reason in _record(rec).get("reasons") or ():
                reasons[reason] = reasons.get(reason, 0) + 1
        models = sorted(m for (m,) in self.db.execute("SELECT DISTINCT embed_model FROM chunks"))
        missing = 0
        if models and models != ["none"]:
            missing = one("SELECT count(*) FROM chunks c WHERE NOT EXISTS (SELECT 1 FROM vectors v"
                          " WHERE v.embed_key = c.embed_key)")
        return StoreCounts(
            chunks=self.count(),
            ready=one("SELECT count(*) FROM chunks WHERE quality = 'ready'"),
            servable=one("SELECT count(*) FROM chunks WHERE servable"),
            duplicate_ids=one("SELECT count(*) - count(DISTINCT chunk_id) FROM chunks"),
            empty_text=one("SELECT count(*) FROM chunks WHERE trim(text) = ''"),
            missing_acl=one("SELECT count(*) FROM chunks WHERE cardinality(acl) = 0"),
            review_reasons=reasons,
            embed_models=models,
            missing_vectors=missing,
            orphan_vectors=one("SELECT count(*) FROM vectors v WHERE NOT EXISTS (SELECT 1 FROM chunks c"
                               " WHERE c.embed_key = v.embed_key)"),
            vectors=one("SELECT count(*) FROM vectors"),
            stale_search_rows=one(pg_dense.STALE_SQL),
        )

    def documents(self, doc_ids: Iterable[str] | None = None) -> list[DocumentRow]:
        where = "" if doc_ids is None else " WHERE doc_id = ANY(%s)"
        rows = self.db.execute("SELECT doc_id, root, path, source_uri, source_version, inputs, title, author,"
                               f" updated_at, {ISO_UTC.format('ingested_at')}, chunk_count, versioning FROM documents"
                               + where + ' ORDER BY doc_id COLLATE "C"', None if doc_ids is None else (sorted(set(doc_ids)),))
        return [DocumentRow(*(("" if v is None else v) for v in r[:-2]), r[-2], r[-1] or "") for r in rows]

    def version_links(self, doc_ids, groups) -> list[VersionLink]:
        """Links with an end in ``doc_ids`` whose two documents ``groups`` may both see (some
        servable chunk of each shares a tag with them: the GIN-indexed filter of every search)."""
        where, args = [], {}
        if doc_ids is not None:
            args["ids"] = sorted(set(doc_ids))
            if not args["ids"]:
                return []
            where.append("(l.newer = ANY(%(ids)s) OR l.older = ANY(%(ids)s))")
        if groups is not None:
            args["groups"] = self._tags(groups)
            if not args["groups"]:
                return []
            where += [visible_document("l.newer", "%(groups)s"), visible_document("l.older", "%(groups)s")]
        sql = "SELECT l.newer, l.older, l.how, l.similarity FROM version_links l"
        if where:
            sql += " WHERE " + " AND ".join(where)
        sql += ' ORDER BY l.newer COLLATE "C", l.older COLLATE "C"'
        if groups is None:  # the gate and the manifest (the owner's view)
            rows = self.db.execute(sql, args).fetchall()
        else:
            with self.as_caller(groups):
                rows = self.db.execute(sql, args).fetchall()
        return [VersionLink(n, o, h, float(s)) for n, o, h, s in rows]
