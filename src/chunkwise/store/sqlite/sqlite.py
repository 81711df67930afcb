"""SQLite store: WAL, foreign keys, recorded migrations, one short transaction per document.

Implements ``store.base.Store``; the reads the retriever and the gate need are in ``sqlite_read``.
Opening checks what the path is before SQLite touches it: a folder, a file that is not SQLite, or
another application's SQLite database are refused with one line (and nothing is added to them);
``readonly=True`` opens without writing (search works on a read-only file) unless the schema must
be upgraded first.
"""
from __future__ import annotations

import json
import os
import sqlite3
import struct
import urllib.parse
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterable, Iterator, Mapping, Sequence

from chunkwise.access import AccessTags, acl_index
from chunkwise.errors import InputError, StoreBusy, StoreError, StoreWriteError
from chunkwise.store.base import Capabilities, DocumentDiff, LocalRanker, DocumentRow, DocumentState, VersionLink
from chunkwise.store.sqlite.fts import PendingIndex
from chunkwise.store.sqlite.schema import LATEST, MIGRATIONS
from chunkwise.store.sqlite.sqlite_read import ReadMixin
from chunkwise.store.sqlite.rows import SQLiteRows, chunk_row, migrate_lexical, vector_blob
from chunkwise.store.writing import DocumentWrites, document_values

_MAGIC = b"SQLite format 3\x00"
_OURS = {"migrations", "documents", "chunks"}


_GROW = "UPDATE generation SET value = value + 1"  # before inserting chunks or vectors (updates, deletes: triggers)
_BATCH_CACHE = -64 * 1024  # the page cache in KiB (negative) while batch() writes


class SQLiteStore(DocumentWrites, ReadMixin):
    # one writer at a time (documents are written by the ingesting process); no roles: every row is read
    capabilities = Capabilities("sqlite", native_search=False, parallel_writes=False, filtered_reads=False,
                                row_codec=SQLiteRows, batched_writes=True)

    @property
    def ranker(self) -> LocalRanker:
        """FTS5 term lookups and the servable rows for in-memory indexes (``sqlite_read``)."""
        return self

    def __init__(self, path: str | Path, *, readonly: bool = False, create: bool = True, timeout: float = 60.0) -> None:
        self.path = self.location = os.fspath(path)
        self.opens_with = os.path.abspath(self.path)  # what another process opens (its own working folder)
        self.readonly = readonly
        self._wrote = False  # chunks or vectors written through this connection (_finish_run's scan)
        self._timeout = timeout
        _inspect(self.path, readonly=readonly, create=create)
        self.db = self._connect(readonly)
        self._fts = PendingIndex(self.db)  # new chunks' FTS rows, written before each commit (sqlite/fts.py)
        try:
            self._check_foreign()
            if readonly and self._tables() and self._pending():
                if not os.access(self.path, os.W_OK):
                    raise StoreError(f"{self.path} was written by an older chunkwise and is read-only here; "
                                     f"run chunkwise ingest on it once (with write access) to upgrade it")
                self.db.close()
                self.db = self._connect(False)
                self._fts = PendingIndex(self.db)
                self.readonly = False
            if self.readonly and not self._tables():
                raise StoreError(f"{self.path} is not a chunkwise store (an empty file); create one with "
                                 f"chunkwise ingest PATH --db {self.path}")
            if not self.readonly:
                self._migrate()
            else:
                self._check_version()
        except BaseException:
            self.db.close()
            raise

    def _connect(self, readonly: bool) -> sqlite3.Connection:
        try:
            if readonly:
                db = self._connect_readonly()
            else:
                db = sqlite3.connect(self.path, timeout=self._timeout, isolation_level=None)
            db.execute("PRAGMA foreign_keys=ON")
            if not readonly:
                db.execute("PRAGMA journal_mode=WAL")
                db.execute("PRAGMA synchronous=NORMAL")
        except sqlite3.DatabaseError as exc:
            raise _translate(exc, self.path) from exc
        db.create_function("chunkwise_acl_index", 2, acl_index, deterministic=True)
        db.create_function("chunkwise_acl_record", 3, migrate_acl_record, deterministic=True)
        db.create_function("chunkwise_lexical", 3, migrate_lexical, deterministic=True)
        db.create_function("chunkwise_acl_column", 1, lambda rec: AccessTags.from_column(
            json.dumps(json.loads(rec).get("acl") or [], ensure_ascii=False)).column(), deterministic=True)
        return db

    def _connect_readonly(self) -> sqlite3.Connection:
        """``mode=ro``; when even that cannot work (a WAL store whose folder and files are read-only:
        SQLite cannot create its shared-memory file) and no write is pending in a -wal file, the
        file is opened as immutable — nobody can be writing it."""
        base = "file:" + urllib.parse.quote(os.path.abspath(self.path))
        try:
            db = sqlite3.connect(base + "?mode=ro", uri=True, timeout=self._timeout, isolation_level=None)
            db.execute("SELECT count(*) FROM sqlite_master").fetchone()
            return db
        except sqlite3.OperationalError:
            wal = Path(self.path + "-wal")
            if wal.exists() and wal.stat().st_size:
                raise
            return sqlite3.connect(base + "?immutable=1", uri=True, timeout=self._timeout, isolation_level=None)

    def close(self) -> None:
        self.db.close()

    def __enter__(self) -> "SQLiteStore":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # -- schema --------------------------------------------------------------------------------
    def _tables(self) -> set[str]:
        try:
            return {n for (n,) in self.db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        except sqlite3.DatabaseError as exc:
            raise _translate(exc, self.path) from exc

    def _check_foreign(self) -> None:
        tables = self._tables()
        if tables and not (_OURS <= tables or tables == {"migrations"}):
            shown = ", ".join(sorted(tables)[:5]) + (", ..." if len(tables) > 5 else "")
            raise StoreError(f"{self.path} is an SQLite database of another application (tables: {shown}), not a "
                             f"chunkwise store; chunkwise leaves it untouched: choose another --db path")

    def _applied(self) -> set[int]:
        if "migrations" not in self._tables():
            return set()
        return {n for (n,) in self.db.execute("SELECT number FROM migrations")}

    def _pending(self) -> bool:
        done = self._applied()
        return not all(number in done for number, _, _ in MIGRATIONS)

    def _check_version(self) -> None:
        done = self._applied()
        if done and max(done) > LATEST:
            raise StoreError(f"{self.path} was written by a newer chunkwise (schema {max(done)} > {LATEST}); "
                             f"upgrade chunkwise")

    def _migrate(self) -> None:
        self._check_version()
        if not self._pending():
            return
        # Two processes may open a new or older store at once: the list of applied migrations is
        # read again inside the write lock, so each migration runs exactly once.
        with self.atomic():
            self.db.execute("CREATE TABLE IF NOT EXISTS migrations (number INTEGER PRIMARY KEY, name TEXT, applied_at TEXT)")
            done = self._applied()
            for number, name, sql in MIGRATIONS:
                if number in done:
                    continue
                for statement in _statements(sql):
                    self.db.execute(statement)
                self.db.execute("INSERT INTO migrations VALUES (?, ?, datetime('now'))", (number, name))

    @contextmanager
    def batch(self) -> Iterator[Callable[[], None]]:
        """Group the writes made inside into few transactions: each ``atomic()`` in it is a savepoint
        (a failed document still rolls back alone) of one transaction that lasts until ``commit()``
        (called when the write stage would wait, or every few hundred documents) or the block's end.
        Why: one commit per small document is most of the single writer's cost (WAL frames, FTS5
        segments). The page cache is ``_BATCH_CACHE`` meanwhile (default 2 MiB): chunk id, embed key
        and vector key take inserts at random places, and evicted pages were read again (~9% of the
        writer's CPU on 2,000 small files, a 66 MB store); it grows as pages are used, then shrinks."""
        self._batching = True
        before = self.db.execute("PRAGMA cache_size").fetchone()[0]
        self.db.execute(f"PRAGMA cache_size={_BATCH_CACHE}")
        try:
            yield self.commit
        finally:
            self._batching = False
            try:
                self.commit()
            finally:  # also when it fails
                self.db.execute(f"PRAGMA cache_size={int(before)}")

    def commit(self) -> None:
        """End the transaction a ``batch()`` holds open (nothing open: nothing to do). A failure rolls
        back every document written since the last commit, not only the one being written, so it is
        ``StoreWriteError`` (fatal to the run), never a per-document error such as ``StoreBusy``."""
        if self.db.in_transaction:
            try:
                self._fts.flush()
                self.db.execute("COMMIT")
            except sqlite3.OperationalError as exc:
                self._rollback()
                raise StoreWriteError(f"cannot write {self.path}: {exc} (a full disk, a file size limit, a reader holding"
                                      f" a store without WAL?); every document since the last commit was rolled back") from exc

    @contextmanager
    def atomic(self) -> Iterator[sqlite3.Connection]:
        """One write transaction; taken eagerly (BEGIN IMMEDIATE) so a second writer waits (up to
        the timeout), then fails with a clear message instead of corrupting anything. In a
        ``batch()``: a savepoint of the batch's transaction."""
        if self.readonly:
            raise StoreError(f"{self.path} was opened read-only; writing needs chunkwise ingest")
        if getattr(self, "_batching", False):
            yield from self._savepoint()
            return
        try:
            self.db.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as exc:
            raise _translate(exc, self.path) from exc
        try:
            yield self.db
        except sqlite3.OperationalError as exc:
            self._rollback()
            raise _translate(exc, self.path) from exc
        except BaseException:
            self._rollback()
            raise
        else:
            try:
                self._fts.flush()
                self.db.execute("COMMIT")
            except sqlite3.OperationalError as exc:
                self._rollback()
                raise _translate(exc, self.path) from exc

    def _savepoint(self) -> Iterator[sqlite3.Connection]:
        try:
            if not self.db.in_transaction:
                self.db.execute("BEGIN IMMEDIATE")
            self.db.execute("SAVEPOINT doc")
        except sqlite3.OperationalError as exc:
            raise _translate(exc, self.path) from exc
        pending = self._fts.above
        try:
            yield self.db
        except BaseException as exc:
            if self.db.in_transaction:  # SQLite rolls the whole transaction back itself on a full disk
                self.db.execute("ROLLBACK TO doc")
                self.db.execute("RELEASE doc")
                self._fts.restore(pending)
            else:
                self._fts.forget()
            if isinstance(exc, sqlite3.OperationalError):
                raise _translate(exc, self.path) from exc
            raise
        self.db.execute("RELEASE doc")

    def _rollback(self) -> None:
        """Undo the open transaction, if SQLite has not already (it rolls back by itself on a full
        disk or an I/O error: a second ROLLBACK would raise and hide the first error)."""
        self._fts.forget()
        if self.db.in_transaction:
            self.db.execute("ROLLBACK")

    # -- documents and identity ----------------------------------------------------------------
    def roots(self) -> list[str]:
        return [r for (r,) in self.db.execute("SELECT root FROM roots ORDER BY root")]

    def add_root(self, path: str) -> None:
        """Register ``path``; roots inside it are folded into it: their documents keep their ids and
        get paths relative to the new root, so the same file is never held twice."""
        with self.atomic() as db:
            if db.execute("SELECT 1 FROM roots WHERE root = ?", (path,)).fetchone():
                return
            for (inner,) in db.execute("SELECT root FROM roots").fetchall():
                if _inside(inner, path):
                    rel = Path(inner).relative_to(path).as_posix()
                    db.execute("UPDATE documents SET root = ?, path = ? || '/' || path WHERE root = ?", (path, rel, inner))
                    db.execute("DELETE FROM roots WHERE root = ?", (inner,))
            db.execute("INSERT INTO roots VALUES (?, datetime('now'))", (path,))

    def document_states(self, root: str, prefix: str = "") -> dict[str, DocumentState]:
        rows = self.db.execute("SELECT path, doc_id, source_version, inputs, chunk_count FROM documents WHERE root = ?"
                               " AND substr(path, 1, ?) = ?", (root, len(prefix), prefix))
        return {p: DocumentState(d, v, i, n, p) for p, d, v, i, n in rows}

    def doc_id_owner(self, doc_id: str) -> tuple[str, str] | None:
        row = self.db.execute("SELECT root, path FROM documents WHERE doc_id = ?", (doc_id,)).fetchone()
        return tuple(row) if row else None

    def records_of(self, doc_id: str, groups: Sequence[str] | None = None) -> dict[str, dict]:
        if groups is not None:
            return self._visible_records(doc_id, groups)
        rows = self.db.execute("SELECT chunk_id, record, text, embed_text FROM chunks WHERE doc_id = ?", (doc_id,))
        return {cid: {**json.loads(rec), "text": text, "embed_text": embed} for cid, rec, text, embed in rows}

    def chunk_keys_of(self, doc_id: str) -> dict[str, str]:
        return dict(self.db.execute("SELECT chunk_id, embed_key FROM chunks WHERE doc_id = ?", (doc_id,)))

    def records_among(self, doc_id: str, chunk_ids: Sequence[str]) -> dict[str, dict]:
        out: dict[str, dict] = {}
        ids = list(chunk_ids)
        for i in range(0, len(ids), 500):
            part = ids[i : i + 500]
            rows = self.db.execute(f"SELECT chunk_id, record, text, embed_text FROM chunks WHERE doc_id = ? AND chunk_id IN"
                                   f" ({','.join('?' * len(part))})", [doc_id, *part])
            out.update((cid, {**json.loads(rec), "text": text, "embed_text": embed}) for cid, rec, text, embed in rows)
        return out

    # -- the shared writes' primitives (store/writing.py) ----------------------------------------
    def _lock_document(self, doc: DocumentRow) -> None:
        """Nothing to take: ``atomic``'s BEGIN IMMEDIATE already holds the one write lock."""

    def _lock_roots(self) -> None:
        """Nothing to take either: one writer at a time."""

    def _state_at(self, root: str, path: str) -> DocumentState | None:
        row = self.db.execute("SELECT doc_id, source_version, inputs, chunk_count FROM documents WHERE root = ? AND path = ?",
                              (root, path)).fetchone()
        return DocumentState(row[0], row[1], row[2], row[3], path) if row else None

    def _delete_document(self, doc_id: str) -> int:
        used = self.db.execute("SELECT embed_key FROM chunks WHERE doc_id = ?", (doc_id,)).fetchall()
        self._wrote = True
        self._fts.flush()  # the delete trigger removes indexed terms: every row must be indexed first
        self.db.execute("DELETE FROM documents WHERE doc_id = ?", (doc_id,))  # chunks and links cascade
        self._drop_unused({k for (k,) in used})
        return len(used)

    def _replace_links(self, links: Sequence[VersionLink]) -> None:
        self.db.execute("DELETE FROM version_links")
        self.db.executemany("INSERT INTO version_links VALUES (?, ?, ?, ?)",
                            [(link.newer, link.older, link.how, float(link.similarity)) for link in links])

    def _apply(self, doc: DocumentRow | None, diff: DocumentDiff) -> None:
        db = self.db
        self._wrote = True
        if doc is not None:
            db.execute(
                "INSERT INTO documents (doc_id, root, path, source_uri, source_version, inputs, title, author, updated_at,"
                " ingested_at, chunk_count, versioning) VALUES (:doc_id, :root, :path, :source_uri, :source_version,"
                " :inputs, :title, :author, :updated_at, :ingested_at, :chunk_count, :versioning) ON CONFLICT(doc_id)"
                " DO UPDATE SET root=excluded.root, path=excluded.path, source_uri=excluded.source_uri,"
                " source_version=excluded.source_version, inputs=excluded.inputs, title=excluded.title,"
                " author=excluded.author, updated_at=excluded.updated_at, ingested_at=excluded.ingested_at,"
                " chunk_count=excluded.chunk_count, versioning=excluded.versioning", document_values(doc))
        removed = list(diff.removed)
        if removed or diff.updated:  # their triggers remove indexed terms: every row must be indexed first
            self._fts.flush()
        for i in range(0, len(removed), 500):
            part = removed[i : i + 500]
            db.execute(f"DELETE FROM chunks WHERE chunk_id IN ({','.join('?' * len(part))})", part)
        rows = [chunk_row(r, diff.lexical.get(r["chunk_id"])) for r in diff.added]
        if rows or diff.rows:
            self._fts.inserting()
            db.execute(_GROW)  # (schema 10: per statement, not per row)
            db.executemany(
                "INSERT INTO chunks (chunk_id, doc_id, chunk_index, record, text, embed_text, embed_model, embed_key,"
                " acl, quality, size, acl_index, lex_body, lex_title, lex_heading) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                [*diff.rows, *rows] if rows else diff.rows)
        if diff.updated:
            db.executemany(
                "UPDATE chunks SET doc_id=?, chunk_index=?, record=?, text=?, embed_text=?, embed_model=?, embed_key=?,"
                " acl=?, quality=?, size=?, acl_index=?, lex_body=?, lex_title=?, lex_heading=? WHERE chunk_id=?",
                [(*chunk_row(r, diff.lexical.get(r["chunk_id"]))[1:], r["chunk_id"]) for r in diff.updated])
        if diff.vectors:  # the generation grew above if chunks were inserted: once per document is enough
            self._put_vectors(diff.vector_model, diff.vectors.items(), grown=bool(rows or diff.rows))

    # -- vectors -------------------------------------------------------------------------------
    def vectors(self, keys: Iterable[str], *, values: bool = True) -> dict[str, list[float] | None]:
        """``values`` False: the stored keys are read, never their blobs."""
        if not values:
            ordered, held = sorted(set(keys)), {}
            for i in range(0, len(ordered), 500):
                part = ordered[i : i + 500]
                held.update((k, None) for (k,) in self.db.execute(
                    f"SELECT embed_key FROM vectors WHERE embed_key IN ({','.join('?' * len(part))})", part))
            return held
        return {k: list(struct.unpack(f"<{dim}f", blob)) for k, (dim, blob) in self._vector_rows(set(keys)).items()}

    def _vector_rows(self, keys: set[str]) -> dict[str, tuple[int, bytes]]:
        ordered, out = sorted(keys), {}
        for i in range(0, len(ordered), 500):
            part = ordered[i : i + 500]
            out.update((k, (d, v)) for k, d, v in self.db.execute(
                f"SELECT embed_key, dim, vector FROM vectors WHERE embed_key IN ({','.join('?' * len(part))})", part))
        return out

    def _drop_unused(self, keys: set[str]) -> None:
        """Inside a document's transaction: delete the vectors of ``keys`` (what its old chunks used)
        that no chunk uses any more, so a run killed between two documents leaves no vector behind
        (the gate fails on vectors no chunk uses)."""
        ordered = sorted(keys)
        for i in range(0, len(ordered), 500):
            part = ordered[i : i + 500]
            self.db.execute(f"DELETE FROM vectors WHERE embed_key IN ({','.join('?' * len(part))}) AND NOT EXISTS"
                            " (SELECT 1 FROM chunks WHERE chunks.embed_key = vectors.embed_key)", part)

    def put_vectors(self, model: str, items: Sequence[tuple[str, Sequence[float]]]) -> None:
        with self.atomic():
            self._put_vectors(model, items)

    def _put_vectors(self, model: str, items: Iterable[tuple[str, Sequence[float]]], grown: bool = False) -> None:
        rows = [(key, model, len(vec), vector_blob(vec)) for key, vec in items]
        if rows:
            self._wrote = True
            if not grown:  # ``grown``: this statement's transaction already grew the generation
                self.db.execute(_GROW)
            self.db.executemany("INSERT OR REPLACE INTO vectors VALUES (?, ?, ?, ?)", rows)

    # -- settings and runs ---------------------------------------------------------------------
    def settings(self) -> dict[str, str]:
        return dict(self.db.execute("SELECT key, value FROM settings"))

    def _start_run(self, now: str) -> int:
        with self.atomic() as db:
            return db.execute("INSERT INTO runs (started_at) VALUES (?)", (now,)).lastrowid

    def _finish_run(self, run_id: int, now: str, stats: dict, settings: Mapping[str, str]) -> int:
        with self.atomic() as db:
            # A store that wrote no chunk and no vector since it was opened (a no-op re-ingest) skips
            # the scan of every vector: what it could drop was left by a run that crashed before
            # this point, and the next run that writes collects it.
            dropped = db.execute("DELETE FROM vectors WHERE embed_key NOT IN (SELECT embed_key FROM chunks)"
                                 ).rowcount if self._wrote else 0
            db.executemany("INSERT OR REPLACE INTO settings VALUES (?, ?)", list(settings.items()))
            db.execute("UPDATE runs SET finished_at = ?, stats = ? WHERE run_id = ?", (now, json.dumps(stats), run_id))
            return dropped


def _inside(inner: str, outer: str) -> bool:
    return inner != outer and Path(inner).is_relative_to(outer)


def _inspect(path: str, *, readonly: bool, create: bool) -> None:
    """Refuse paths SQLite would mishandle, before it touches (or creates) anything."""
    p = Path(path)
    if p.is_dir():
        raise StoreError(f"--db {path} is a folder; give the store's file, e.g. --db {p / 'index.db'}")
    if p.exists() and not p.is_file():
        raise StoreError(f"--db {path} is not a regular file (a device, pipe or socket); give the store's file, "
                         f"e.g. --db index.db")
    if not p.exists():
        if not create:
            raise InputError(f"{path}: no such store; create it with chunkwise ingest PATH --db {path}")
        if not p.parent.is_dir():
            raise StoreError(f"--db {path}: folder {p.parent} does not exist; create it first")
        if not os.access(p.parent, os.W_OK):
            raise StoreError(f"--db {path}: folder {p.parent} is not writable; choose a --db path you can write")
        return
    try:
        with open(p, "rb") as fh:
            head = fh.read(len(_MAGIC))
    except OSError as exc:
        raise StoreError(f"--db {path}: cannot read it ({exc.strerror or exc})") from exc
    if head and head != _MAGIC:
        raise StoreError(f"{path} is not a chunkwise store (not an SQLite database); choose another --db path")
    if not readonly and not os.access(p, os.W_OK):
        raise StoreError(f"{path} is read-only; ingest must write the store (search and check can read it as is)")


def _translate(exc: sqlite3.Error, path: str) -> Exception:
    """SQLite's messages, as one line that says what to do."""
    msg = str(exc)
    if "locked" in msg or "busy" in msg:
        return StoreBusy(f"{path} is busy: another ingest is writing it; retry when it finishes")
    if "readonly" in msg or "read-only" in msg:
        return StoreError(f"{path} is read-only; ingest must write the store (search and check can read it as is)")
    if "not a database" in msg or "malformed" in msg:
        return StoreError(f"{path} is not a usable chunkwise store ({msg}); choose another --db path")
    if "disk is full" in msg or "disk I/O error" in msg:
        return StoreWriteError(f"cannot write {path}: {msg} (is the disk full or a file size limit reached?); what was "
                               f"written since the last commit was rolled back: run ingest again to write it")
    if "unable to open" in msg:
        return StoreError(f"--db {path}: cannot open it ({msg}); check the path and its folder's permissions")
    return exc


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
