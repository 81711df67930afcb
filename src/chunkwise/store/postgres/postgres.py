"""PostgreSQL + pgvector store (``--db postgresql://...``; the ``pg`` extra: psycopg 3, pgvector).

Implements ``store.base.Store`` with the SQLite store's semantics; the reads and the server-side
search primitives are in ``postgres_read``. Writes are one transaction per document holding
transaction-scoped advisory locks on the document's (root, path) and on its id, so any number of
ingest processes, on any machines, can write one database: two writers of the same document take
turns (the second one's set difference sees the first one's rows), writers of different documents
never wait for each other. ``add_root`` and ``remove_missing`` take an exclusive lock that
document writes share. A lock not granted within the store's timeout is ``StoreBusy``.
"""
from __future__ import annotations

import hashlib
import json
import os
import urllib.parse
from contextlib import contextmanager
from typing import Iterable, Mapping, Sequence

import chunkwise.store.postgres.pg_limits as pg_limits
import chunkwise.store.postgres.pg_security as pg_security
from chunkwise.access import READY
from chunkwise.errors import DependencyError, InputError, StoreBusy, StoreError, StoreWriteError
from chunkwise.store.base import Capabilities, DocumentDiff, ServerRanker, DocumentRow, DocumentState, VersionLink
from chunkwise.store.postgres.pg_schema import DATES, LATEST, MIGRATIONS, REANALYSE, ROW_SECURITY
from chunkwise.store.postgres.pg_lexemes import lexical
from chunkwise.store.postgres.pg_place import place
from chunkwise.store.postgres.pg_slots import BUMP_STATS, CLAIM, DROP_EMPTY_STATS, UNSLOTTED_STATS
from chunkwise.store.postgres.postgres_read import PostgresReads, as_array
from chunkwise.store.writing import DocumentWrites, chunk_meta, document_values

_HINT = "install the PostgreSQL extra: pip install 'chunkwise[pg]'"
_MIGRATION_LOCK = 0x6368756E6B01  # advisory lock keys: constants of this application
_ROOTS_LOCK = 0x6368756E6B02
_OURS = {"migrations", "documents", "chunks"}


def redact(url: str) -> str:
    """The URL without its password, for messages."""
    parts = urllib.parse.urlsplit(url)
    if parts.password is None:
        return url
    netloc = parts.netloc.replace(":" + parts.password + "@", ":***@", 1)
    return urllib.parse.urlunsplit(parts._replace(netloc=netloc))


def _lock_key(*parts: str) -> int:
    digest = hashlib.sha256("\x1f".join(parts).encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big", signed=True)


def _driver():
    try:
        import psycopg
        import pgvector.psycopg  # noqa: F401
    except ImportError as exc:
        raise DependencyError(f"PostgreSQL stores need psycopg 3 and pgvector ({exc.name or 'psycopg'} is missing); {_HINT}") from None
    return psycopg


class PostgresStore(DocumentWrites, PostgresReads):
    # per-document transactions under advisory locks: Ray write actors add throughput (``parallel_writes``)

    @property
    def ranker(self) -> ServerRanker:
        """BM25F and nearest neighbours inside the server (``postgres_read``)."""
        return self

    def __init__(self, url: str, *, readonly: bool = False, create: bool = True, timeout: float = 60.0) -> None:
        psycopg = _driver()
        self.location = redact(url)
        self.opens_with = url  # what another process connects with (credentials included): never shown
        self.readonly = readonly
        self._timeout = timeout
        self._errors = psycopg.errors
        try:
            self.db = psycopg.connect(url, autocommit=True, connect_timeout=max(1, int(min(timeout, 10))))
        except psycopg.OperationalError as exc:
            reason = " ".join(str(exc).split()) or type(exc).__name__
            raise StoreError(f"cannot connect to {self.location}: {reason[:300]}; start the server, create the "
                             f"database, or fix the --db URL (README: PostgreSQL)") from None
        try:
            self.db.execute("SELECT set_config('lock_timeout', %s, false)", (f"{max(1, int(timeout * 1000))}ms",))
            self.place = place(self.db, create=create and not readonly, errors=psycopg.errors)  # its own schema
            self._check_foreign()
            if not create and "migrations" not in self._tables():
                raise StoreError(f"{self.location}: no chunkwise store in this database; create it with chunkwise "
                                 f"ingest PATH --db URL")
            self._migrate()
            self.filtered_reads = bool(self.db.execute("SELECT row_security_active('chunks')").fetchone()[0])
            self.capabilities = Capabilities("postgresql", native_search=True, parallel_writes=True,
                                             filtered_reads=self.filtered_reads)
            if self.filtered_reads and not pg_security.reader_ready(self.db):
                raise StoreError(f"{self.location}: role {self._role()} is under this store's row-level security but "
                                 f"is not one of its readers (it cannot run the search functions); make it one: "
                                 f"chunkwise pg-secure --db OWNER_URL --reader ROLE")
            if not readonly:
                self._check_writable()
            # writer slots (migration 11; absent only where a test stops the migrations before it)
            self._claim = CLAIM if self.db.execute("SELECT to_regproc('chunkwise_claim_slot')").fetchone()[0] else None
            from pgvector.psycopg import register_vector

            register_vector(self.db)
            self.pgvector_version = self.db.execute(
                "SELECT extversion FROM pg_extension WHERE extname = 'vector'").fetchone()[0]
        except BaseException:
            self.db.close()
            raise

    def close(self) -> None:
        self.db.close()

    def time_limit(self, seconds: float):
        return pg_limits.time_limit(self.db, seconds, self._errors)

    def __enter__(self) -> "PostgresStore":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # -- schema --------------------------------------------------------------------------------
    def _tables(self) -> set[str]:
        return {n for (n,) in self.db.execute(
            "SELECT tablename FROM pg_tables WHERE schemaname = current_schema()")}

    def _check_foreign(self) -> None:
        tables = self._tables()
        if tables and not (_OURS <= tables or tables == {"migrations"}):
            shown = ", ".join(sorted(tables)[:5]) + (", ..." if len(tables) > 5 else "")
            raise StoreError(f"{self.location} holds tables of another application ({shown}), not a chunkwise store; "
                             f"chunkwise leaves it untouched: give it a database (or schema) of its own")

    def _applied(self) -> set[int]:
        if "migrations" not in self._tables():
            return set()
        if not self._may("migrations", "SELECT"):
            raise StoreError(f"{self.location}: role {self._role()} may not read this store; its owner can make it a "
                             f"reader: chunkwise pg-secure --db OWNER_URL --reader {self._role()}")
        return {n for (n,) in self.db.execute("SELECT number FROM migrations")}

    def _migrate(self) -> None:
        done = self._applied()
        if done and max(done) > LATEST:
            raise StoreError(f"{self.location} was written by a newer chunkwise (schema {max(done)} > {LATEST}); "
                             f"upgrade chunkwise")
        if all(number in done for number, _, _ in MIGRATIONS):
            return
        if done and not self._may("migrations", "INSERT"):
            raise StoreError(f"{self.location} is at schema {max(done)} and this chunkwise needs {LATEST}, but role "
                             f"{self._role()} may only read it: open it once as its owner (chunkwise ingest or "
                             f"chunkwise pg-secure with the owner's --db) to migrate it")
        with self._transaction():
            self.db.execute("SELECT pg_advisory_xact_lock(%s)", (_MIGRATION_LOCK,))
            self.db.execute("CREATE TABLE IF NOT EXISTS migrations (number INTEGER PRIMARY KEY, name TEXT,"
                            " applied_at TIMESTAMPTZ NOT NULL DEFAULT now())")
            done = self._applied()
            for number, name, sql in MIGRATIONS:
                if number not in done:
                    if sql:
                        self.db.execute(sql)
                    if number == REANALYSE:
                        self._reanalyse()
                    if number == DATES:
                        self._fill_updated()
                        self._ensure_hnsw()  # the index moved to ``vectors``: dense search walks it at once
                    if number in ROW_SECURITY:
                        pg_security.install(self.db)
                    self.db.execute("INSERT INTO migrations (number, name) VALUES (%s, %s)", (number, name))
            pg_security.reapply(self.db)  # a secured store stays secured whatever a migration rebuilt

    def _role(self) -> str:
        return self.db.execute("SELECT current_user").fetchone()[0]

    def _may(self, table: str, privilege: str) -> bool:
        return bool(self.db.execute("SELECT has_table_privilege(%s, %s)", (table, privilege)).fetchone()[0])

    def _check_writable(self) -> None:
        """A role that may only read (a ``pg-secure`` reader) is refused before any write is tried."""
        if not self._may("chunks", "INSERT"):
            why = "row-level security is on and it is a reader" if self.filtered_reads else "it has no write privilege"
            raise StoreError(f"{self.location}: role {self._role()} may only read this store ({why}); write with the "
                             f"store's owner role in --db (search and serve work with the reader)")

    def _reanalyse(self) -> None:
        """Migration 3: every row's lexical columns from ``chunkwise.lexical`` (stems, the title and
        heading fields; SQL cannot run the analyzer), then the per-tag-set lengths they sum to."""
        rows = self.db.execute("SELECT key, record, embed_text FROM chunks").fetchall()
        updates = []
        for key, record, embed_text in rows:
            record = record if isinstance(record, dict) else json.loads(record)
            fields, terms, tf, length = lexical({**record, "embed_text": embed_text})
            updates.append((terms, _jsonb(tf), length, *fields.values(), key))
        with self.db.cursor() as cur:
            cur.executemany("UPDATE chunks SET lex = array_to_tsvector(%s::text[]), lex_tf = %s, lex_len = %s,"
                            " lex_body = %s, lex_title = %s, lex_heading = %s WHERE key = %s", updates)
        self.db.execute("DELETE FROM acl_stats")
        self.db.execute("INSERT INTO acl_stats (acl, rows, total_len) SELECT acl, count(*), sum(lex_len) FROM chunks"
                        " WHERE servable GROUP BY acl")

    def _fill_updated(self) -> None:
        """Migration 7: each document's ``updated`` from its ``updated_at`` (ISO dates only)."""
        rows = [(updated_time(text), doc_id) for doc_id, text in
                self.db.execute("SELECT doc_id, updated_at FROM documents WHERE updated_at IS NOT NULL").fetchall()]
        with self.db.cursor() as cur:
            cur.executemany("UPDATE documents SET updated = %s WHERE doc_id = %s", [r for r in rows if r[0]])

    @contextmanager
    def _transaction(self):
        """One transaction; a lock wait past the timeout, a deadlock or a serialisation failure
        becomes ``StoreBusy`` (nothing was written: the transaction rolled back)."""
        errors = self._errors
        try:
            with self.db.transaction():
                yield self.db
        except (errors.LockNotAvailable, errors.DeadlockDetected, errors.SerializationFailure) as exc:
            raise StoreBusy(f"{self.location} is busy: another ingest holds this document or the store's roots "
                            f"({type(exc).__name__}); retry when it finishes") from None
        except errors.ReadOnlySqlTransaction:
            raise StoreError(f"{self.location}: the server refused a write (read-only transaction or replica); "
                             f"ingest needs a writable primary") from None
        except (errors.DiskFull, errors.OutOfMemory) as exc:  # class 53: insufficient resources
            raise StoreWriteError(f"cannot write {self.location}: the server is out of space or memory "
                                  f"({' '.join(str(exc).split())[:200]}); what was written since the last commit "
                                  f"was rolled back: run ingest again to write it") from None
        except errors.InsufficientPrivilege as exc:
            raise StoreError(f"{self.location}: permission denied ({' '.join(str(exc).split())[:200]}); "
                             f"grant the ingest role write access") from None

    @contextmanager
    def atomic(self):
        if self.readonly:
            raise StoreError(f"{self.location} was opened read-only; writing needs chunkwise ingest")
        with self._transaction() as db:
            if self._claim:  # this transaction's writer slot (pg_slots): parallel writers never take turns
                db.execute(self._claim)
            yield db

    # -- documents and identity ----------------------------------------------------------------
    def roots(self) -> list[str]:
        return [r for (r,) in self.db.execute("SELECT root FROM roots ORDER BY root COLLATE \"C\"")]

    def add_root(self, path: str) -> None:
        with self.atomic() as db:
            db.execute("SELECT pg_advisory_xact_lock(%s)", (_ROOTS_LOCK,))
            if db.execute("SELECT 1 FROM roots WHERE root = %s", (path,)).fetchone():
                return
            for (inner,) in db.execute("SELECT root FROM roots").fetchall():
                if _inside(inner, path):
                    rel = os.path.relpath(inner, path).replace(os.sep, "/")
                    db.execute("UPDATE documents SET root = %s, path = %s || '/' || path WHERE root = %s",
                               (path, rel, inner))
                    db.execute("DELETE FROM roots WHERE root = %s", (inner,))
            db.execute("INSERT INTO roots (root) VALUES (%s)", (path,))

    def document_states(self, root: str, prefix: str = "") -> dict[str, DocumentState]:
        rows = self.db.execute("SELECT path, doc_id, source_version, inputs, chunk_count FROM documents"
                               " WHERE root = %s AND left(path, %s) = %s", (root, len(prefix), prefix))
        return {p: DocumentState(d, v, i, n, p) for p, d, v, i, n in rows}

    def doc_id_owner(self, doc_id: str) -> tuple[str, str] | None:
        row = self.db.execute("SELECT root, path FROM documents WHERE doc_id = %s", (doc_id,)).fetchone()
        return tuple(row) if row else None

    def records_of(self, doc_id: str, groups: Sequence[str] | None = None) -> dict[str, dict]:
        if groups is not None:
            return self._visible_records(doc_id, groups)
        rows = self.db.execute("SELECT chunk_id, record, text, embed_text FROM chunks WHERE doc_id = %s", (doc_id,))
        return {cid: {**rec, "text": text, "embed_text": embed} for cid, rec, text, embed in rows}

    def chunk_keys_of(self, doc_id: str) -> dict[str, str]:
        return dict(self.db.execute("SELECT chunk_id, embed_key FROM chunks WHERE doc_id = %s", (doc_id,)))

    def records_among(self, doc_id: str, chunk_ids: Sequence[str]) -> dict[str, dict]:
        rows = self.db.execute("SELECT chunk_id, record, text, embed_text FROM chunks WHERE doc_id = %s"
                               " AND chunk_id = ANY(%s)", (doc_id, list(chunk_ids)))
        return {cid: {**rec, "text": text, "embed_text": embed} for cid, rec, text, embed in rows}

    # -- the shared writes' primitives (store/writing.py) ----------------------------------------
    def _lock_document(self, doc: DocumentRow) -> None:
        """Share the roots lock, then hold the document's (root, path) and its id, in a fixed order."""
        self.db.execute("SELECT pg_advisory_xact_lock_shared(%s)", (_ROOTS_LOCK,))
        for key in sorted({_lock_key("path", doc.root, doc.path), _lock_key("doc", doc.doc_id)}):
            self.db.execute("SELECT pg_advisory_xact_lock(%s)", (key,))

    def _lock_roots(self) -> None:
        self.db.execute("SELECT pg_advisory_xact_lock(%s)", (_ROOTS_LOCK,))

    def _state_at(self, root: str, path: str) -> DocumentState | None:
        row = self.db.execute("SELECT doc_id, source_version, inputs, chunk_count FROM documents"
                              " WHERE root = %s AND path = %s", (root, path)).fetchone()
        return DocumentState(row[0], row[1], row[2], row[3], path) if row else None

    def _replace_links(self, links: Sequence[VersionLink]) -> None:
        self.db.execute("DELETE FROM version_links")
        with self.db.cursor() as cur:
            cur.executemany("INSERT INTO version_links (newer, older, how, similarity) VALUES (%s, %s, %s, %s)",
                            [(link.newer, link.older, link.how, float(link.similarity)) for link in links])

    def _apply(self, doc: DocumentRow | None, diff: DocumentDiff) -> None:
        db = self.db
        if doc is not None:
            self._put_document(doc)
        self._apply_chunks(diff)

    def _put_document(self, doc: DocumentRow) -> None:
        values = document_values(doc)
        values["updated"] = updated_time(doc.updated_at)
        self.db.execute(
            "INSERT INTO documents (doc_id, root, path, source_uri, source_version, inputs, title, author, updated_at,"
            " updated, ingested_at, chunk_count, versioning) VALUES (%(doc_id)s, %(root)s, %(path)s, %(source_uri)s,"
            " %(source_version)s, %(inputs)s, %(title)s, %(author)s, %(updated_at)s, %(updated)s,"
            " %(ingested_at)s::timestamptz, %(chunk_count)s, %(versioning)s)"
            " ON CONFLICT (doc_id) DO UPDATE SET root=excluded.root, path=excluded.path, source_uri=excluded.source_uri,"
            " source_version=excluded.source_version, inputs=excluded.inputs, title=excluded.title,"
            " author=excluded.author, updated_at=excluded.updated_at, updated=excluded.updated,"
            " ingested_at=excluded.ingested_at, chunk_count=excluded.chunk_count, versioning=excluded.versioning", values)

    def _apply_chunks(self, diff: DocumentDiff) -> None:
        db = self.db
        if diff.vectors:
            self._put_vectors(diff.vector_model, diff.vectors.items())
        delta: dict = {}
        if diff.removed:
            for acl, servable, length in db.execute(
                    "DELETE FROM chunks WHERE chunk_id = ANY(%s) RETURNING acl, servable, lex_len", (list(diff.removed),)):
                _count(delta, acl, servable, length, -1)
        if diff.updated:
            ids = [r["chunk_id"] for r in diff.updated]
            for acl, servable, length in db.execute(
                    "SELECT acl, servable, lex_len FROM chunks WHERE chunk_id = ANY(%s)", (ids,)):
                _count(delta, acl, servable, length, -1)
        rows = [_row(r) for r in (*diff.added, *diff.updated)]
        added, updated = rows[: len(diff.added)], rows[len(diff.added):]
        with db.cursor() as cur:
            if added:
                cur.executemany(
                    "INSERT INTO chunks (chunk_id, doc_id, chunk_index, record, text, embed_text, embed_model, embed_key,"
                    " acl, quality, size, servable, lex, lex_tf, lex_len, lex_body, lex_title, lex_heading)"
                    " VALUES (%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,array_to_tsvector(%s::text[]),%s,%s,%s,%s,%s)",
                    added)
            if updated:
                cur.executemany(
                    "UPDATE chunks SET doc_id=%s, chunk_index=%s, record=%s, text=%s, embed_text=%s, embed_model=%s,"
                    " embed_key=%s, acl=%s, quality=%s, size=%s, servable=%s, lex=array_to_tsvector(%s::text[]),"
                    " lex_tf=%s, lex_len=%s, lex_body=%s, lex_title=%s, lex_heading=%s WHERE chunk_id=%s",
                    [(*r[1:], r[0]) for r in updated])
        for r in rows:
            _count(delta, r[8], r[11], r[14], +1)
        self._bump_stats(delta)

    def _bump_stats(self, delta: dict) -> None:
        """Add one transaction's change to the per-tag-set statistics, in a fixed order (two writers
        bumping the same sets never deadlock)."""
        items = sorted((acl, n, total) for acl, (n, total) in delta.items() if n or total)
        bump, drop = (BUMP_STATS, DROP_EMPTY_STATS) if self._claim else UNSLOTTED_STATS
        with self.db.cursor() as cur:
            cur.executemany(bump, [(list(acl), n, total) for acl, n, total in items])
        if items:
            self.db.execute(drop)

    def _delete_document(self, doc_id: str) -> int:
        delta: dict = {}
        removed, keys = 0, set()
        for acl, servable, length, key in self.db.execute(
                "DELETE FROM chunks WHERE doc_id = %s RETURNING acl, servable, lex_len, embed_key", (doc_id,)):
            removed += 1
            keys.add(key)
            _count(delta, acl, servable, length, -1)
        self.db.execute("DELETE FROM documents WHERE doc_id = %s", (doc_id,))
        self._bump_stats(delta)
        self._drop_unused(keys)
        return removed

    def _drop_unused(self, keys: set[str]) -> None:
        """Inside a document's transaction: delete the vectors of ``keys`` (what its old chunks used)
        that no chunk uses any more, so a run killed between two documents leaves no vector behind.
        A concurrent writer that counted on one of them re-embeds it (``EmbedStage.repair``)."""
        if keys:
            self.db.execute("DELETE FROM vectors v WHERE v.embed_key = ANY(%s) AND NOT EXISTS"
                            " (SELECT 1 FROM chunks c WHERE c.embed_key = v.embed_key)", (sorted(keys),))

    # -- vectors -------------------------------------------------------------------------------
    def vectors(self, keys: Iterable[str], *, values: bool = True) -> dict[str, list[float] | None]:
        if not values:
            return {k: None for (k,) in self.db.execute("SELECT embed_key FROM vectors WHERE embed_key = ANY(%s)",
                                                         (list(set(keys)),))}
        rows = self.db.execute("SELECT embed_key, vector FROM vectors WHERE embed_key = ANY(%s)", (list(set(keys)),))
        return {k: [float(x) for x in as_array(v)] for k, v in rows}

    def put_vectors(self, model: str, items: Sequence[tuple[str, Sequence[float]]]) -> None:
        with self.atomic():
            self._put_vectors(model, items)

    def _put_vectors(self, model: str, items: Iterable[tuple[str, Sequence[float]]]) -> None:
        import numpy as np

        rows = [(key, model, len(vec), np.asarray(vec, dtype=np.float32)) for key, vec in items]
        with self.db.cursor() as cur:
            cur.executemany("INSERT INTO vectors (embed_key, model, dim, vector) VALUES (%s, %s, %s, %s)"
                            " ON CONFLICT (embed_key) DO UPDATE SET model = excluded.model, dim = excluded.dim,"
                            " vector = excluded.vector", rows)
        dims = {r[2] for r in rows}
        if dims and self._hnsw_dim() not in (None, *dims):
            self.db.execute("DROP INDEX IF EXISTS vectors_hnsw")  # another model's vectors: rebuilt by _finish_run

    def _ensure_hnsw(self) -> None:
        """An HNSW index (cosine) over the store's vectors, for its one dimension.
        Built after a run's writes (bulk building beats inserting into a live graph); later writes
        keep it up to date."""
        dims = [d for (d,) in self.db.execute("SELECT DISTINCT dim FROM vectors LIMIT 2")]
        if len(dims) != 1 or self._hnsw_dim() == dims[0]:
            return
        self.db.execute("DROP INDEX IF EXISTS vectors_hnsw")
        self.db.execute(f"CREATE INDEX vectors_hnsw ON vectors USING hnsw ((vector::vector({int(dims[0])}))"
                        f" vector_cosine_ops)")

    # -- row-level security (store/postgres/pg_security.py; chunkwise pg-secure) --------------------------
    def row_security(self, *, reader: str | None = None, revoke: str | None = None,
                     off: bool = False) -> pg_security.RowSecurity:
        """The store's row-level security after making ``reader`` a reader (securing the store),
        revoking ``revoke``, or turning it ``off``; nothing asked: as it is. One transaction,
        under the migration lock."""
        if reader is not None or revoke is not None or off:
            with self.atomic() as db:
                db.execute("SELECT pg_advisory_xact_lock(%s)", (_MIGRATION_LOCK,))
                pg_security.change(db, self.location, reader=reader, revoke_role=revoke, off=off)
        return pg_security.status(self.db)

    # -- settings and runs ---------------------------------------------------------------------
    def settings(self) -> dict[str, str]:
        return dict(self.db.execute("SELECT key, value FROM settings").fetchall())

    def _start_run(self, now: str) -> int:
        with self.atomic() as db:
            return db.execute("INSERT INTO runs (started_at) VALUES (%s::timestamptz) RETURNING run_id",
                              (now,)).fetchone()[0]

    def _finish_run(self, run_id: int, now: str, stats: dict, settings: Mapping[str, str]) -> int:
        with self.atomic() as db:
            dropped = db.execute("DELETE FROM vectors v WHERE NOT EXISTS (SELECT 1 FROM chunks c"
                                 " WHERE c.embed_key = v.embed_key)").rowcount
            with db.cursor() as cur:
                cur.executemany("INSERT INTO settings VALUES (%s, %s) ON CONFLICT (key) DO UPDATE SET value ="
                                " excluded.value", list(settings.items()))
            db.execute("UPDATE runs SET finished_at = %s::timestamptz, stats = %s WHERE run_id = %s",
                       (now, _jsonb(stats), run_id))
            db.execute("SELECT pg_advisory_xact_lock(%s)", (_MIGRATION_LOCK,))
            self._ensure_hnsw()
            return dropped


def _inside(inner: str, outer: str) -> bool:
    from pathlib import Path

    return inner != outer and Path(inner).is_relative_to(outer)


def _count(delta: dict, acl, servable: bool, length: int, sign: int) -> None:
    """Add (sign=1) or take away one row from its tag set's (rows, total length); unservable rows
    are not counted (no caller ever sees them)."""
    if servable:
        n, total = delta.get(tuple(acl), (0, 0))
        delta[tuple(acl)] = (n + sign, total + sign * length)


def _row(r: dict) -> tuple:
    """A record as the chunks row: the texts in their own columns, the rest as JSON, the tags as
    an array, and the analysed fields (``chunkwise.lexical``: body, title, heading)."""
    meta, tags = chunk_meta(r)
    for name in ("text", "embed_text"):
        if "\x00" in r[name]:
            raise InputError(f"chunk {r['chunk_id']}: its {name} holds a NUL character, which PostgreSQL text cannot "
                             f"store; the normaliser should have removed it")
    if "\\u0000" in json.dumps(meta):
        raise InputError(f"chunk {r['chunk_id']}: its metadata holds a NUL character, which PostgreSQL jsonb cannot "
                         f"store; remove it from the document's front matter")
    fields, terms, tf, length = lexical(r)
    servable = r["quality"] == READY and bool(tags)
    return (r["chunk_id"], r["doc_id"], r["chunk_index"], _jsonb(meta),
            r["text"], r["embed_text"], r["embed_model"], r["embed_key"], list(tags.tags), r["quality"], r["size"],
            servable, terms, _jsonb(tf), length, *fields.values())


def updated_time(text: str | None):
    """A document's ``updated_at`` as a time (``documents.updated``), None unless an ISO date."""
    from chunkwise.enrich.versions import date_key

    return date_key(text or "")


def _jsonb(value):
    from psycopg.types.json import Jsonb

    return Jsonb(value)
