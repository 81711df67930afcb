"""The SQLite store's reads: the retriever's search primitives, the gate's counts, the manifest.

BM25 runs inside FTS5 with the access filter in the same ``MATCH`` (rows a caller may not see are
never ranked); the ``MATCH`` string is built here and nowhere else. Rows that can never be served
(``review``, or no tags) have an empty ``acl_index`` and so match no query at all.
"""
from __future__ import annotations

import json
import math
from contextlib import contextmanager
from typing import Iterable, Iterator, Sequence

from chunkwise.access import AccessTags, caller_groups
from chunkwise.lexical import B, FIELDS, K1
from chunkwise.store.base import (DocumentRow, Postings, ServableRows, StoreCounts, StoredChunk, VersionLink,
                                  servable_columns, tie_ranks)
from chunkwise.store.sqlite import limits, postings

_MATCHED_SQL = postings.matched_sql(len(FIELDS))
_CHUNK_SQL = """SELECT c.rowid, c.chunk_id, c.doc_id, c.chunk_index, c.record, c.text, c.embed_text, c.acl, c.quality,
    d.source_uri, d.source_version FROM chunks c JOIN documents d ON d.doc_id = c.doc_id"""


def decode_tags(value: str) -> tuple[str, ...]:
    """The ``acl`` column (encoded by ``access.AccessTags.column``) as a tuple of tags."""
    return AccessTags.from_column(value).tags


_COLUMNS = {"body": "lex_body", "title": "lex_title", "heading": "lex_heading"}


def _colset(fields: Sequence[str]) -> str:
    unknown = [f for f in fields if f not in _COLUMNS]
    if unknown or not fields:
        raise ValueError(f"lexical fields must be some of {', '.join(FIELDS)}, got {list(fields)}")
    return "{" + " ".join(_COLUMNS[f] for f in FIELDS if f in fields) + "}"


def _phrase(term: str, fields: Sequence[str]) -> str:
    return f'{_colset(fields)} : "' + term.replace('"', '""') + '"'


def fts_match(terms: Sequence[str], groups: Sequence[str], fields: Sequence[str] = FIELDS) -> str | None:
    """FTS5 MATCH expression: analysed terms (``chunkwise.lexical``) OR-ed (questions rarely share
    every word with the answer) in the given lexical fields, AND-ed with the caller's access tokens.
    ``None`` when there is no term or group."""
    tokens = caller_groups(groups).tokens()
    if not terms or not tokens:
        return None
    phrase = " OR ".join('"' + t.replace('"', '""') + '"' for t in terms)
    return f"{_colset(fields)} : ({phrase}) AND acl_index : ({' OR '.join(tokens)})"


def fts5_idf(n_rows: int, df: int) -> float:
    """FTS5's idf exactly as it computes it (a non-positive value becomes 1e-6)."""
    value = math.log((n_rows - df + 0.5) / (df + 0.5))
    return value if value > 0 else 1e-6


def fts5_term_frequency(score, idf_all, length_all, avgdl_all):
    """Invert FTS5's ``bm25()`` of a one-phrase query, weighted 1 on one column and 0 elsewhere,
    back to the term's count in that column (0 where it is absent).

    FTS5's score is ``idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * D / avgdl))`` with its *own*
    (whole-table) idf, row length D and mean length over all columns; given those, ``tf`` follows
    exactly (rounded: it is an integer). This is how the store gets per-row, per-field term counts
    while the access filter stays inside ``MATCH``."""
    import numpy as np

    x = -np.asarray(score, dtype=np.float64) / idf_all  # FTS5 reports bm25 negated
    k = K1 * (1 - B + B * np.asarray(length_all, dtype=np.float64) / avgdl_all)
    return np.maximum(np.rint(x * k / np.maximum(K1 + 1 - x, 1e-12)), 0.0)


def _varints(blob: bytes) -> list[int]:
    """SQLite varints (FTS5's docsize record: one token count per column)."""
    out, value, i = [], 0, 0
    n = len(blob)
    while i < n:
        byte = blob[i]
        i += 1
        value = (value << 7) | (byte & 0x7F)
        if not byte & 0x80:
            out.append(value)
            value = 0
    return out


class ReadMixin:
    db: object
    path: str
    filtered_reads = False  # a SQLite file has no roles: whoever may open it reads every row

    @contextmanager
    def as_caller(self, groups):
        """One read snapshot for every read inside: SQLite has no row-level security (every query
        carries the filter), but a search reads the store many times (sizes, postings, chunks,
        versions) and an ingest may commit between two of them; in one WAL read transaction they
        all see the same rows."""
        caller_groups(groups)
        with self._snapshot():
            yield self

    def _chunk(self, row) -> StoredChunk:
        key, cid, doc, index, record, text, embed_text, acl, quality, uri, version = row
        # The columns are authoritative; the JSON holds the rest of the record.
        rec = {**json.loads(record), "chunk_id": cid, "doc_id": doc, "chunk_index": index, "text": text,
               "embed_text": embed_text}
        return StoredChunk(key, rec, decode_tags(acl), quality, uri, version)

    # -- retrieval primitives --------------------------------------------------------------------
    def lexical_row_sizes(self) -> Iterator[tuple[int, int]]:
        """``(key, terms in the body)`` of every row, from FTS5's own per-row sizes."""
        for rowid, blob in self.db.execute("SELECT id, sz FROM chunks_fts_docsize"):
            sizes = _varints(blob)
            yield rowid, (sizes[0] if sizes else 0)

    def term_count(self, term: str, groups: Sequence[str] | None = None, fields: Sequence[str] = FIELDS) -> int:
        """Rows holding ``term`` in one of ``fields``: all of them, or (``groups``) those the groups may see."""
        match = fts_match([term], groups, fields) if groups is not None else _phrase(term, fields)
        if match is None:
            return 0
        return self.db.execute("SELECT count(*) FROM chunks_fts WHERE chunks_fts MATCH ?", (match,)).fetchone()[0]

    def term_rows(self, term: str, fields: Sequence[str] = FIELDS):
        """Keys (int64 array) of every row holding ``term`` in one of ``fields``, servable or not: for
        a caller that filters them itself before counting (``retrieve.fts``, many groups)."""
        import numpy as np

        rows = self.db.execute("SELECT rowid FROM chunks_fts WHERE chunks_fts MATCH ?", (_phrase(term, fields),))
        return np.fromiter((r for (r,) in rows), dtype=np.int64)

    @contextmanager
    def _snapshot(self):
        """One read transaction (WAL: a consistent view) unless one is already open."""
        if self.db.in_transaction:
            yield
            return
        self.db.execute("BEGIN")
        try:
            yield
        finally:
            self.db.execute("COMMIT")

    def term_matches(self, term: str, groups: Sequence[str] | None, fields: Sequence[str] = FIELDS) -> Postings:
        """The permitted rows holding ``term`` in one of ``fields`` (the filter inside ``MATCH``), with
        their body lengths and per-field term counts. FTS5 gives no counts directly: its ``bm25()``
        weighted 1 on one column is inverted (``fts5_term_frequency``) with the whole-table statistics
        it used, all read in one snapshot. ``groups=None``: every row holding the term, servable or
        not, for a caller that filters them itself before scoring (``retrieve.fts``, many groups)."""
        match = fts_match([term], groups, fields) if groups is not None else _phrase(term, fields)
        if match is None:
            return Postings.empty()
        with self._snapshot():
            row = self.db.execute(_MATCHED_SQL, (match,)).fetchone()  # one step: see store/sqlite/postings.py
            if not row[0]:
                return Postings.empty()
            n_all, total_all = self._fts_totals()
            df_all = self.term_count(term, None, fields)
            decoded = postings.decode(row, len(FIELDS))
            if decoded is None:  # a docsize record the bulk decoder refuses: read row by row
                decoded = self._matched_rows(match)
        keys, body, length_all, scores = decoded
        tf = fts5_term_frequency(scores, fts5_idf(n_all, df_all), length_all[:, None], total_all / max(n_all, 1))
        return Postings(keys, body, tf)

    def _matched_rows(self, match: str):
        """``postings.decode``'s result read one row at a time, each docsize record decoded alone."""
        import numpy as np

        calls = ", ".join("bm25(chunks_fts, " + ", ".join("1.0" if j == i else "0.0" for j in range(4)) + ")"
                          for i in range(len(FIELDS)))
        rows = self.db.execute(f"SELECT chunks_fts.rowid, d.sz, {calls} FROM chunks_fts JOIN chunks_fts_docsize d"
                               " ON d.id = chunks_fts.rowid WHERE chunks_fts MATCH ?", (match,)).fetchall()
        sizes = [_varints(r[1]) for r in rows]
        keys = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
        body = np.fromiter((s[0] if s else 0 for s in sizes), dtype=np.float64, count=len(rows))
        length_all = np.fromiter((sum(s) for s in sizes), dtype=np.float64, count=len(rows))
        scores = np.asarray([r[2:] for r in rows], dtype=np.float64).reshape(len(rows), len(FIELDS))
        return keys, body, length_all, scores

    def _fts_totals(self) -> tuple[int, int]:
        """(rows, tokens in all columns) of the whole FTS5 table: its averages record (id 1)."""
        row = self.db.execute("SELECT block FROM chunks_fts_data WHERE id = 1").fetchone()
        values = _varints(row[0]) if row else []
        return (values[0], sum(values[1:])) if values else (0, 0)

    def servable_rows(self, *, texts: bool = False, vectors: bool = False, lexical: bool = False,
                      ranks: bool = False) -> ServableRows:
        sql = ("SELECT c.rowid, c.acl, c.embed_text, c.lex_body, c.lex_title, c.lex_heading" + (", v.vector" if vectors else "")
               + " FROM chunks c" + (" LEFT JOIN vectors v ON v.embed_key = c.embed_key" if vectors else "")
               + " WHERE c.acl_index != '' ORDER BY c.rowid")
        with self._snapshot():
            keys, tags, out_texts, fields, blobs = servable_columns(self.db.execute(sql), decode_tags, vectors=vectors,
                                                                    lexical=lexical)
            # The table is read in rowid order (sequential pages); the tie order comes from the
            # chunk_id index alone (a covering scan), in the same snapshot.
            order = [r for (r,) in self.db.execute("SELECT rowid FROM chunks ORDER BY chunk_id")] if ranks else None
        matrix = None
        if vectors and blobs:
            import numpy as np

            matrix = np.frombuffer(b"".join(blobs), dtype="<f4").reshape(len(blobs), -1)
        return ServableRows(keys, tags, out_texts if texts else None, matrix, fields if lexical else None,
                            tie_ranks(keys, order) if ranks else None)

    def chunks(self, *, doc_id: str | None = None, keys: Sequence[int] | None = None) -> Iterator[StoredChunk]:
        if keys is not None:
            if doc_id is not None:
                raise ValueError("chunks: a doc_id or keys, not both")
            return iter(self._chunks_by_key(keys).values())
        if doc_id is not None:
            return iter([self._chunk(r) for r in self.db.execute(
                _CHUNK_SQL + " WHERE c.doc_id = ? ORDER BY c.chunk_index", (doc_id,))])
        return (self._chunk(r) for r in self.db.execute(_CHUNK_SQL + " ORDER BY d.source_uri, c.chunk_index"))

    def _chunks_by_key(self, keys: Sequence[int]) -> dict[int, StoredChunk]:
        keys = list(keys)
        out: dict[int, StoredChunk] = {}
        for i in range(0, len(keys), 500):
            part = keys[i : i + 500]
            out.update((r[0], self._chunk(r)) for r in self.db.execute(
                _CHUNK_SQL + f" WHERE c.rowid IN ({','.join('?' * len(part))})", part))
        return out

    def chunk_ids(self, keys: Sequence[int]) -> dict[int, str]:
        keys = [int(k) for k in keys]
        out: dict[int, str] = {}
        for i in range(0, len(keys), 500):
            part = keys[i : i + 500]
            out.update(self.db.execute(f"SELECT rowid, chunk_id FROM chunks WHERE rowid IN ({','.join('?' * len(part))})",
                                       part))
        return out

    def _visible_records(self, doc_id: str, groups) -> dict[str, dict]:
        """The records of ``doc_id`` that ``groups`` may be served, found through ``chunk_access``
        (one seek of (tag, doc_id) per tag of the caller): only permitted rows are visited, so a
        document the caller may not see is read exactly like one that does not exist."""
        tags = list(caller_groups(groups).tags)
        found: dict[str, dict] = {}
        for i in range(0, len(tags), 500):
            part = tags[i : i + 500]
            rows = self.db.execute("SELECT c.chunk_id, c.record, c.text, c.embed_text FROM chunks c WHERE c.rowid IN"
                                   f" (SELECT chunk FROM chunk_access WHERE doc_id = ? AND tag IN ({','.join('?' * len(part))}))",
                                   [doc_id, *part])
            found.update((cid, {**json.loads(rec), "text": text, "embed_text": embed}) for cid, rec, text, embed in rows)
        return found

    def count(self, doc_id: str | None = None, groups: Sequence[str] | None = None) -> int:
        """With ``groups``: counted in ``chunk_access`` (its (tag, doc_id) index only): hidden rows are
        never visited, as in ``records_of(doc_id, groups)``."""
        if doc_id is None:
            if groups is not None:
                raise ValueError("count: groups need a doc_id")
            return self.db.execute("SELECT count(*) FROM chunks").fetchone()[0]
        if groups is None:
            return self.db.execute("SELECT count(*) FROM chunks WHERE doc_id = ?", (doc_id,)).fetchone()[0]
        tags = list(caller_groups(groups).tags)
        seen: set[int] = set()
        for i in range(0, len(tags), 500):
            part = tags[i : i + 500]
            seen.update(r for (r,) in self.db.execute(
                f"SELECT chunk FROM chunk_access WHERE doc_id = ? AND tag IN ({','.join('?' * len(part))})", [doc_id, *part]))
        return len(seen)

    def generation(self) -> int:
        """Grows with every committed change of chunks or vectors (schema migration 9)."""
        return self.db.execute("SELECT value FROM generation").fetchone()[0]

    def time_limit(self, seconds: float):
        return limits.time_limit(self.db, seconds)

    def has_vectors(self) -> bool:
        return self.db.execute("SELECT 1 FROM chunks c JOIN vectors v ON v.embed_key = c.embed_key"
                               " WHERE c.acl_index != '' LIMIT 1").fetchone() is not None

    # -- gate and manifest -----------------------------------------------------------------------
    def counts(self) -> StoreCounts:
        q = self.db.execute
        reasons: dict[str, int] = {}
        for (rec,) in q("SELECT record FROM chunks WHERE quality != 'ready'"):
            for reason in json.loads(rec).get("reasons") or ():
                reasons[reason] = reasons.get(reason, 0) + 1
        models = sorted(m for (m,) in q("SELECT DISTINCT embed_model FROM chunks"))
        missing = 0
        if models and models != ["none"]:
            missing = q("SELECT count(*) FROM chunks WHERE embed_key NOT IN (SELECT embed_key FROM vectors)").fetchone()[0]
        # One pass over the chunks for the per-row counts (ingest counts after every run that writes, in
        # the single writer: a scan per count took 0.045 s of CPU on 10,812 chunks, one scan 0.014 s).
        chunks, ready, servable, empty_text, missing_acl = q(
            "SELECT count(*), coalesce(sum(quality = 'ready'), 0), coalesce(sum(acl_index != ''), 0),"
            " coalesce(sum(trim(text) = ''), 0), coalesce(sum(acl IN ('', '[]')), 0) FROM chunks").fetchone()
        return StoreCounts(
            chunks=chunks,
            ready=ready,
            servable=servable,
            duplicate_ids=q("SELECT count(*) - count(DISTINCT chunk_id) FROM chunks").fetchone()[0],
            empty_text=empty_text,
            missing_acl=missing_acl,
            review_reasons=reasons,
            embed_models=models,
            missing_vectors=missing,
            orphan_vectors=q("SELECT count(*) FROM vectors WHERE embed_key NOT IN (SELECT embed_key FROM chunks)"
                             ).fetchone()[0],
            vectors=q("SELECT count(*) FROM vectors").fetchone()[0],
        )

    def documents(self, doc_ids: Iterable[str] | None = None) -> list[DocumentRow]:
        sql = ("SELECT doc_id, root, path, source_uri, source_version, inputs, title, author,"
               " updated_at, ingested_at, chunk_count, versioning FROM documents")
        if doc_ids is None:
            rows = self.db.execute(sql + " ORDER BY doc_id")
        else:
            ids, rows = sorted(set(doc_ids)), []
            for i in range(0, len(ids), 500):
                part = ids[i : i + 500]
                rows += self.db.execute(f"{sql} WHERE doc_id IN ({','.join('?' * len(part))}) ORDER BY doc_id", part)
        return [DocumentRow(*(("" if v is None else v) for v in r[:-2]), r[-2], r[-1] or "") for r in rows]

    def version_links(self, doc_ids, groups) -> list[VersionLink]:
        if doc_ids is not None:
            ids = sorted(set(doc_ids))
            found = {}
            for i in range(0, len(ids), 400):
                found.update(((x.newer, x.older), x) for x in self._version_links(ids[i : i + 400], groups))
            return [found[k] for k in sorted(found)]
        return self._version_links(None, groups)

    def _version_links(self, ids, groups) -> list[VersionLink]:
        sql, args = "SELECT l.newer, l.older, l.how, l.similarity FROM version_links l", []
        where = []
        if ids is not None:
            if not ids:
                return []
            marks = ",".join("?" * len(ids))
            where.append(f"(l.newer IN ({marks}) OR l.older IN ({marks}))")
            args += ids + ids
        if groups is not None:
            tags = list(caller_groups(groups).tags)
            if not tags:
                return []
            # A document is visible to the groups when some servable chunk of it shares a tag with them.
            seen = ("EXISTS (SELECT 1 FROM chunks c, json_each(c.acl) t WHERE c.doc_id = l.{end} AND c.acl_index != ''"
                    f" AND t.value IN ({','.join('?' * len(tags))}))")
            where += [seen.format(end="newer"), seen.format(end="older")]
            args += tags + tags
        if where:
            sql += " WHERE " + " AND ".join(where)
        rows = self.db.execute(sql + " ORDER BY l.newer, l.older", args)
        return [VersionLink(n, o, h, s) for n, o, h, s in rows]
