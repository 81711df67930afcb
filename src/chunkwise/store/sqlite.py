"""SQLite store: WAL, foreign keys, recorded migrations, one transaction per document.

SQL lives here and nowhere else, so another backend can implement the same small surface:
``document_state``, ``records_of``, ``write_document``, ``remove_missing``, ``missing_vectors``,
``put_vectors``, ``gc_vectors``, runs.
"""
from __future__ import annotations

import json
import sqlite3
import struct
from contextlib import contextmanager
from pathlib import Path
from typing import Iterable, Iterator, Sequence

from chunkwise.access import AccessTags, acl_index
from chunkwise.errors import ChunkwiseError, ConfigError
from chunkwise.store.schema import LATEST, MIGRATIONS


class StoreBusy(ChunkwiseError):
    """Another ingest holds the write lock."""


class SQLiteStore:
    def __init__(self, path: str | Path, timeout: float = 30.0) -> None:
        self.path = str(path)
        self.db = sqlite3.connect(self.path, timeout=timeout, isolation_level=None)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA foreign_keys=ON")
        self.db.execute("PRAGMA synchronous=NORMAL")
        self.db.create_function("chunkwise_acl_index", 2, acl_index, deterministic=True)
        self.db.create_function("chunkwise_acl_record", 3, migrate_acl_record, deterministic=True)
        self.db.create_function("chunkwise_acl_column", 1, lambda rec: AccessTags.from_column(
            json.dumps(json.loads(rec).get("acl") or [], ensure_ascii=False)).column(), deterministic=True)
        self._migrate()

    def close(self) -> None:
        self.db.close()

    def __enter__(self) -> "SQLiteStore":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # -- schema --------------------------------------------------------------------------------
    def _migrate(self) -> None:
        self.db.execute("CREATE TABLE IF NOT EXISTS migrations (number INTEGER PRIMARY KEY, name TEXT, applied_at TEXT)")
        done = {n for (n,) in self.db.execute("SELECT number FROM migrations")}
        if done and max(done) > LATEST:
            raise ConfigError(f"{self.path} was written by a newer chunkwise (schema {max(done)} > {LATEST}); upgrade chunkwise")
        if all(number in done for number, _, _ in MIGRATIONS):
            return
        # Two processes may open a new or older store at once: the list of applied migrations is
        # read again inside the write lock, so each migration runs exactly once.
        with self.atomic():
            done = {n for (n,) in self.db.execute("SELECT number FROM migrations")}
            for number, name, sql in MIGRATIONS:
                if number in done:
                    continue
                for statement in _statements(sql):
                    self.db.execute(statement)
                self.db.execute("INSERT INTO migrations VALUES (?, ?, datetime('now'))", (number, name))

    @contextmanager
    def atomic(self) -> Iterator[sqlite3.Connection]:
        """One write transaction; taken eagerly (BEGIN IMMEDIATE) so a second writer waits, then fails
        with a clear message instead of corrupting anything."""
        try:
            self.db.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as exc:
            if "locked" in str(exc) or "busy" in str(exc):
                raise StoreBusy(f"{self.path} is being written by another ingest; retry when it finishes") from exc
            raise
        try:
            yield self.db
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        else:
            self.db.execute("COMMIT")

    # -- reads ---------------------------------------------------------------------------------
    def document_state(self, doc_id: str) -> tuple[str, str, int] | None:
        row = self.db.execute("SELECT source_version, inputs, chunk_count FROM documents WHERE doc_id = ?", (doc_id,)).fetchone()
        return tuple(row) if row else None

    def document_states(self, root: str) -> dict[str, tuple[str, str, int]]:
        """(source_version, inputs, chunk_count) of every document under ``root``, in one query."""
        rows = self.db.execute("SELECT doc_id, source_version, inputs, chunk_count FROM documents WHERE root = ?", (root,))
        return {d: (v, i, n) for d, v, i, n in rows}

    def records_of(self, doc_id: str) -> dict[str, dict]:
        rows = self.db.execute("SELECT chunk_id, record, text, embed_text FROM chunks WHERE doc_id = ?", (doc_id,))
        return {cid: {**json.loads(rec), "text": text, "embed_text": embed} for cid, rec, text, embed in rows}

    def missing_vectors(self, keys: Iterable[str]) -> set[str]:
        keys = set(keys)
        if not keys:
            return set()
        have: set[str] = set()
        ordered = sorted(keys)
        for i in range(0, len(ordered), 500):
            part = ordered[i : i + 500]
            have.update(k for (k,) in self.db.execute(
                f"SELECT embed_key FROM vectors WHERE embed_key IN ({','.join('?' * len(part))})", part))
        return keys - have

    def count(self, table: str = "chunks") -> int:
        if table not in ("chunks", "documents", "vectors"):
            raise ValueError(table)
        return self.db.execute(f"SELECT count(*) FROM {table}").fetchone()[0]

    # -- lexical search primitives (FTS5) -------------------------------------------------------
    def fts_row_sizes(self) -> Iterator[tuple[int, int, int]]:
        """``(rowid, tokens in embed_text, tokens in all columns)`` of every FTS row, from FTS5's own
        per-row sizes (so lengths are counted by the tokenizer that indexed them)."""
        for rowid, blob in self.db.execute("SELECT id, sz FROM chunks_fts_docsize"):
            sizes = _varints(blob)
            yield rowid, (sizes[0] if sizes else 0), sum(sizes)

    def servable_tags(self) -> Iterator[tuple[int, str]]:
        """``(rowid, acl column)`` of every row that may be served to someone."""
        return iter(self.db.execute("SELECT rowid, acl FROM chunks WHERE acl_index != '' ORDER BY rowid"))

    def fts_count(self, match: str) -> int:
        return self.db.execute("SELECT count(*) FROM chunks_fts WHERE chunks_fts MATCH ?", (match,)).fetchone()[0]

    def fts_scored(self, match: str) -> list[tuple[int, float]]:
        """``(rowid, FTS5 rank)`` of every row matching; the rank is FTS5's ``bm25(1.0, 0.0)``."""
        return self.db.execute("SELECT rowid, rank FROM chunks_fts WHERE chunks_fts MATCH ?", (match,)).fetchall()

    def vector(self, embed_key: str) -> list[float] | None:
        row = self.db.execute("SELECT dim, vector FROM vectors WHERE embed_key = ?", (embed_key,)).fetchone()
        return list(struct.unpack(f"<{row[0]}f", row[1])) if row else None

    # -- writes (call inside atomic()) ----------------------------------------------------------
    def write_document(self, doc_row: dict, added: Sequence[dict], updated: Sequence[dict], removed: Sequence[str]) -> None:
        db = self.db
        db.execute(
            "INSERT INTO documents VALUES (:doc_id, :root, :source_uri, :source_version, :inputs, :title, :author,"
            " :updated_at, :ingested_at, :chunk_count) ON CONFLICT(doc_id) DO UPDATE SET root=excluded.root,"
            " source_uri=excluded.source_uri, source_version=excluded.source_version, inputs=excluded.inputs,"
            " title=excluded.title, author=excluded.author, updated_at=excluded.updated_at,"
            " ingested_at=excluded.ingested_at, chunk_count=excluded.chunk_count", doc_row)
        for i in range(0, len(removed), 500):
            part = list(removed[i : i + 500])
            db.execute(f"DELETE FROM chunks WHERE chunk_id IN ({','.join('?' * len(part))})", part)
        db.executemany(
            "INSERT INTO chunks (chunk_id, doc_id, chunk_index, record, text, embed_text, embed_model, embed_key,"
            " acl, quality, size, acl_index) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)", [_row(r) for r in added])
        db.executemany(
            "UPDATE chunks SET doc_id=?, chunk_index=?, record=?, text=?, embed_text=?, embed_model=?, embed_key=?,"
            " acl=?, quality=?, size=?, acl_index=? WHERE chunk_id=?", [(*_row(r)[1:], r["chunk_id"]) for r in updated])

    def put_vectors(self, model: str, items: Sequence[tuple[str, Sequence[float]]]) -> None:
        self.db.executemany(
            "INSERT OR REPLACE INTO vectors VALUES (?, ?, ?, ?)",
            [(key, model, len(vec), struct.pack(f"<{len(vec)}f", *vec)) for key, vec in items])

    def remove_missing(self, root: str, seen: set[str]) -> int:
        """Delete documents under ``root`` that this run did not see; returns the chunks removed."""
        gone = [d for (d,) in self.db.execute("SELECT doc_id FROM documents WHERE root = ?", (root,)) if d not in seen]
        removed = 0
        for doc_id in gone:
            removed += self.db.execute("SELECT count(*) FROM chunks WHERE doc_id = ?", (doc_id,)).fetchone()[0]
            self.db.execute("DELETE FROM documents WHERE doc_id = ?", (doc_id,))
        return removed

    def gc_vectors(self) -> int:
        cur = self.db.execute("DELETE FROM vectors WHERE embed_key NOT IN (SELECT embed_key FROM chunks)")
        return cur.rowcount

    def put_settings(self, values: dict[str, str]) -> None:
        self.db.executemany("INSERT OR REPLACE INTO settings VALUES (?, ?)", list(values.items()))

    def settings(self) -> dict[str, str]:
        return dict(self.db.execute("SELECT key, value FROM settings"))

    def start_run(self, now: str) -> int:
        return self.db.execute("INSERT INTO runs (started_at) VALUES (?)", (now,)).lastrowid

    def finish_run(self, run_id: int, now: str, stats: dict) -> None:
        self.db.execute("UPDATE runs SET finished_at = ?, stats = ? WHERE run_id = ?", (now, json.dumps(stats), run_id))


def _row(r: dict) -> tuple:
    # The texts live in their own columns (FTS indexes embed_text); the JSON holds everything else.
    meta = {k: v for k, v in r.items() if k not in ("text", "embed_text")}
    tags = AccessTags.parse(r["acl"], f"chunk {r['chunk_id']}")
    return (r["chunk_id"], r["doc_id"], r["chunk_index"], json.dumps(meta, ensure_ascii=False, sort_keys=True),
            r["text"], r["embed_text"], r["embed_model"], r["embed_key"], tags.column(), r["quality"], r["size"],
            tags.index(r["quality"]))


def _statements(sql: str) -> list[str]:
    """Split a migration into statements, keeping trigger bodies (which contain ';') whole."""
    out, buf = [], []
    for line in sql.strip().splitlines():
        buf.append(line)
        joined = "\n".join(buf).strip()
        if joined.endswith(";") and (not joined.upper().startswith("CREATE TRIGGER") or joined.upper().endswith("END;")):
            out.append(joined)
            buf = []
    if "\n".join(buf).strip():
        out.append("\n".join(buf).strip())
    return out


def migrate_acl_record(record: str, acl: str, quality: str) -> str:
    """Schema 4: a stored record with its tags in the grammar of ``chunkwise.access`` (from the
    record's list, else the old space-joined column). Tags that do not follow the grammar leave the
    chunk with no tags, in ``review``."""
    from chunkwise.access import AccessTagError

    rec = json.loads(record)
    rec.setdefault("quality", quality)
    try:
        rec["acl"] = list(AccessTags.parse(list(rec["acl"] if "acl" in rec else acl.split())).tags)
    except AccessTagError:
        rec["acl"], rec["quality"] = [], "review"
        rec["reasons"] = sorted(set(rec.get("reasons") or []) | {"unreadable_acl"})
    return json.dumps(rec, ensure_ascii=False, sort_keys=True)


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
