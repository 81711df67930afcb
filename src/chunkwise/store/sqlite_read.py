"""The SQLite store's reads: the retriever's search primitives, the gate's counts, the manifest.

BM25 runs inside FTS5 with the access filter in the same ``MATCH`` (rows a caller may not see are
never ranked); the ``MATCH`` string is built here and nowhere else. Rows that can never be served
(``review``, or no tags) have an empty ``acl_index`` and so match no query at all.
"""
from __future__ import annotations

import json
from typing import Iterator, Sequence

from chunkwise.access import AccessTags, caller_groups
from chunkwise.store.base import DocumentRow, ServableRows, StoreCounts, StoredChunk, VersionLink

_CHUNK_SQL = """SELECT c.rowid, c.chunk_id, c.doc_id, c.chunk_index, c.record, c.text, c.embed_text, c.acl, c.quality,
    d.source_uri, d.source_version FROM chunks c JOIN documents d ON d.doc_id = c.doc_id"""


def decode_tags(value: str) -> tuple[str, ...]:
    """The ``acl`` column (encoded by ``access.AccessTags.column``) as a tuple of tags."""
    return AccessTags.from_column(value).tags


def _phrase(term: str) -> str:
    return 'embed_text : "' + term.replace('"', '""') + '"'


def fts_match(terms: Sequence[str], groups: Sequence[str]) -> str | None:
    """FTS5 MATCH expression: terms OR-ed (questions rarely share every word with the answer) in the
    text column, AND-ed with the caller's access tokens. ``None`` when there is no term or group."""
    tokens = caller_groups(groups).tokens()
    if not terms or not tokens:
        return None
    phrase = " OR ".join('"' + t.replace('"', '""') + '"' for t in terms)
    return f"embed_text : ({phrase}) AND acl_index : ({' OR '.join(tokens)})"


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

    def _chunk(self, row) -> StoredChunk:
        key, cid, doc, index, record, text, embed_text, acl, quality, uri, version = row
        # The columns are authoritative; the JSON holds the rest of the record.
        rec = {**json.loads(record), "chunk_id": cid, "doc_id": doc, "chunk_index": index, "text": text,
               "embed_text": embed_text}
        return StoredChunk(key, rec, decode_tags(acl), quality, uri, version)

    # -- retrieval primitives --------------------------------------------------------------------
    def lexical_row_sizes(self) -> Iterator[tuple[int, int, int]]:
        """``(key, tokens in the text, tokens in all indexed columns)`` of every row, from FTS5's own
        per-row sizes (lengths counted by the tokenizer that indexed them)."""
        for rowid, blob in self.db.execute("SELECT id, sz FROM chunks_fts_docsize"):
            sizes = _varints(blob)
            yield rowid, (sizes[0] if sizes else 0), sum(sizes)

    def term_count(self, term: str, groups: Sequence[str] | None = None) -> int:
        """Rows holding ``term``: all of them, or (``groups``) those the groups may see."""
        return self.db.execute("SELECT count(*) FROM chunks_fts WHERE chunks_fts MATCH ?",
                               (fts_match([term], groups) if groups is not None else _phrase(term),)).fetchone()[0]

    def term_matches(self, term: str, groups: Sequence[str]) -> list[tuple[int, float]]:
        """``(key, FTS5 rank)`` of the rows holding ``term`` that the groups may see (the filter inside
        ``MATCH``); the rank is FTS5's whole-table ``bm25(1.0, 0.0)`` (retrieve/fts.py turns it back
        into the term count and re-scores with the caller's own statistics)."""
        match = fts_match([term], groups)
        if match is None:
            return []
        return self.db.execute("SELECT rowid, rank FROM chunks_fts WHERE chunks_fts MATCH ?", (match,)).fetchall()

    def servable_rows(self, *, texts: bool = False, vectors: bool = False) -> ServableRows:
        sql = ("SELECT c.rowid, c.acl, c.embed_text" + (", v.vector" if vectors else "")
               + " FROM chunks c" + (" LEFT JOIN vectors v ON v.embed_key = c.embed_key" if vectors else "")
               + " WHERE c.acl_index != '' ORDER BY c.rowid")
        keys, tags, out_texts, blobs = [], [], [], []
        for row in self.db.execute(sql):
            if vectors and row[3] is None:
                continue  # a chunk whose vector is missing cannot be ranked by similarity
            keys.append(row[0])
            tags.append(decode_tags(row[1]))
            out_texts.append(row[2])
            if vectors:
                blobs.append(row[3])
        matrix = None
        if vectors and blobs:
            import numpy as np

            matrix = np.frombuffer(b"".join(blobs), dtype="<f4").reshape(len(blobs), -1)
        return ServableRows(keys, tags, out_texts if texts else None, matrix)

    def chunks_by_key(self, keys: Sequence[int]) -> dict[int, StoredChunk]:
        keys = list(keys)
        out: dict[int, StoredChunk] = {}
        for i in range(0, len(keys), 500):
            part = keys[i : i + 500]
            out.update((r[0], self._chunk(r)) for r in self.db.execute(
                _CHUNK_SQL + f" WHERE c.rowid IN ({','.join('?' * len(part))})", part))
        return out

    def document_chunks(self, doc_id: str) -> list[StoredChunk]:
        return [self._chunk(r) for r in self.db.execute(_CHUNK_SQL + " WHERE c.doc_id = ? ORDER BY c.chunk_index",
                                                        (doc_id,))]

    def document_version(self, doc_id: str) -> str | None:
        row = self.db.execute("SELECT source_version FROM documents WHERE doc_id = ?", (doc_id,)).fetchone()
        return row[0] if row else None

    def has_vectors(self) -> bool:
        return self.db.execute("SELECT 1 FROM chunks c JOIN vectors v ON v.embed_key = c.embed_key"
                               " WHERE c.acl_index != '' LIMIT 1").fetchone() is not None

    def access_tags(self) -> set[str]:
        return {t for (acl,) in self.db.execute("SELECT DISTINCT acl FROM chunks") for t in decode_tags(acl)}

    def iter_chunks(self) -> Iterator[StoredChunk]:
        return (self._chunk(r) for r in self.db.execute(_CHUNK_SQL + " ORDER BY d.source_uri, c.chunk_index"))

    # -- gate and manifest -----------------------------------------------------------------------
    def count(self) -> int:
        return self.db.execute("SELECT count(*) FROM chunks").fetchone()[0]

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
        return StoreCounts(
            chunks=self.count(),
            ready=q("SELECT count(*) FROM chunks WHERE quality = 'ready'").fetchone()[0],
            servable=q("SELECT count(*) FROM chunks WHERE acl_index != ''").fetchone()[0],
            duplicate_ids=q("SELECT count(*) - count(DISTINCT chunk_id) FROM chunks").fetchone()[0],
            empty_text=q("SELECT count(*) FROM chunks WHERE trim(text) = ''").fetchone()[0],
            missing_acl=q("SELECT count(*) FROM chunks WHERE acl IN ('', '[]')").fetchone()[0],
            review_reasons=reasons,
            embed_models=models,
            missing_vectors=missing,
            orphan_vectors=q("SELECT count(*) FROM vectors WHERE embed_key NOT IN (SELECT embed_key FROM chunks)"
                             ).fetchone()[0],
            vectors=q("SELECT count(*) FROM vectors").fetchone()[0],
        )

    def embed_texts(self) -> Iterator[str]:
        return (t for (t,) in self.db.execute("SELECT embed_text FROM chunks"))

    def documents(self) -> list[DocumentRow]:
        rows = self.db.execute("SELECT doc_id, root, path, source_uri, source_version, inputs, title, author,"
                               " updated_at, ingested_at, chunk_count, versioning FROM documents ORDER BY doc_id")
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
