"""Stage 3, *write*: per document one short transaction — the set difference on chunk ids, taken
inside the store's lock against what it holds *now* (a concurrent run may have written the document
since it was prepared), then inserts, in-place refreshes, deletes and the vectors, atomically.

Seed 001 block 7: ids only in the new set are added, ids only in the store removed, ids in both
kept; a kept chunk is re-embedded only when its embed_key changed and its metadata is refreshed in
place; a document whose bytes and inputs are unchanged is skipped.

Streamed (issue 25, item 9): a document is written ``BATCH_RECORDS`` records at a time inside its
one transaction (``Store.write_document``). Its records arrive packed from the worker
(``pipeline.pack``) and are decoded a batch at a time; the diff against the stored document is
taken per batch from the stored chunk ids and embed keys (small) and the stored records of that
batch's kept ids only. So the writer never holds every record dict of a big document, and the
result (rows, counts, releases carried over) is the whole-document diff's, batch by batch.
"""
from __future__ import annotations

import contextlib
import time
from dataclasses import asdict, dataclass, field, fields
from pathlib import PurePosixPath
from typing import Iterator, Mapping

from chunkwise.pipeline.prepare import Prepared
from chunkwise.review import carry
from chunkwise.store.base import DocumentDiff, DocumentRow, DocumentState


@dataclass
class IngestStats:
    added: int = 0
    removed: int = 0
    embedded: int = 0
    metadata_updated: int = 0
    unchanged: int = 0
    skipped_documents: int = 0
    in_store: int = 0
    errors: list[dict] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    # Files found but not read, by type (".pptx", ".png", "(no extension)"): unsupported types, empty
    # files, pipes. ``skipped_documents`` counts something else: unchanged documents not re-read.
    skipped: dict[str, int] = field(default_factory=dict)

    def to_dict(self) -> dict:
        return asdict(self)

    def skip(self, path: str) -> None:
        """Count one file not read, under its type (its lower-cased suffix)."""
        suffix = PurePosixPath(path).suffix.lower() or "(no extension)"
        self.skipped[suffix] = self.skipped.get(suffix, 0) + 1

    def merge(self, other: "IngestStats") -> None:
        for name in _COUNTS:
            setattr(self, name, getattr(self, name) + getattr(other, name))
        for suffix, n in other.skipped.items():
            self.skipped[suffix] = self.skipped.get(suffix, 0) + n


_COUNTS = tuple(f.name for f in fields(IngestStats) if f.type in ("int", int))  # merged per document: looked up once


@dataclass(frozen=True)
class WriteSpec:
    """What a writer on another process or machine needs to write documents as this process
    would: the store's location (a URL) and the run's write inputs (``WriteStage``'s)."""

    location: str
    root: str
    inputs: str
    now: str
    model: str
    embedding: bool
    timeout: float = 60.0


@dataclass(frozen=True)
class Written:
    """One document written elsewhere (a Ray write actor): its task, what the write counted
    (``stats``, its errors included) and how many vectors were computed for it."""

    task: object
    stats: object
    vectors: int = 0


HELD = "\x1fheld"  # appended to a held document's recorded inputs (``WriteStage.row``)


def unchanged(state: DocumentState | None, source_version: str, inputs: str) -> bool:
    return state is not None and state.source_version == source_version and state.inputs == inputs


def diff(old: dict, new: dict, stats: IngestStats, counts_embedding: bool):
    """Set difference on chunk ids; returns (added, updated, removed, records needing a vector). A
    kept chunk keeps its release from review (chunkwise.review: same id, same text)."""
    new = {cid: carry(old[cid], r) if cid in old else r for cid, r in new.items()}
    added = [r for cid, r in new.items() if cid not in old]
    removed = [cid for cid in old if cid not in new]
    updated, need = [], list(added)
    for cid, r in new.items():
        if cid not in old:
            continue
        before = dict(old[cid], ingested_at=r["ingested_at"])
        if before["embed_key"] != r["embed_key"]:
            need.append(r)
        if before != r:
            updated.append(r)  # refreshed in place; a new source version alone is not counted as a change
        if dict(before, source_version=r["source_version"]) != r:
            stats.metadata_updated += 1
        else:
            stats.unchanged += 1
    stats.added += len(added)
    stats.removed += len(removed)
    if counts_embedding:
        stats.embedded += len(need)
    return added, updated, removed, need


class Batch:
    """One batch of a document's new records, for ``DocumentPlan.diff``: ``ids`` its chunk ids
    (known without decoding: ``pipeline.pack.EncodedRecords``), ``rows`` the store's rows when a
    worker encoded them for this store (else None), ``records()`` the record dicts, decoded when
    a diff against stored records needs them."""

    __slots__ = ("source", "start", "stop", "ids", "rows", "_records")

    def __init__(self, source, start: int, stop: int, ids, rows) -> None:
        self.source, self.start, self.stop, self.ids, self.rows = source, start, stop, ids, rows
        self._records = None

    def __len__(self) -> int:
        return self.stop - self.start

    def records(self) -> list[dict]:
        if self._records is None:
            self._records = list(self.source[self.start : self.stop])
        return self._records


class DocumentPlan:
    """One document's streamed write (``Store.write_document`` drives it inside the transaction):
    ``begin`` decides whether to write at all, ``parts`` yields the new records a batch at a time,
    ``diff`` takes a batch's difference against the stored records of its kept ids, ``removal`` the
    ids no batch held. ``begin`` resets what was counted: a retried write starts again.

    A batch none of whose ids the store holds (a new document: nearly always) whose rows a worker
    encoded for this store is written as those rows: nothing is decoded, compared or encoded here."""

    def __init__(self, stage: "WriteStage", doc: Prepared, vectors: Mapping, batch: int) -> None:
        self.stage, self.doc, self.vectors, self.batch = stage, doc, vectors, max(1, batch)
        self.stats, self.needed = IngestStats(), set()
        records = doc.records
        codec = stage.store.capabilities.row_codec
        self.encoded = getattr(records, "codec", None) is not None and records.codec is codec

    def begin(self, state: DocumentState | None) -> bool:
        self.stats, self.needed = IngestStats(), set()
        if unchanged(state, self.doc.task.sha256, self.stage.inputs):
            self.stats.skipped_documents, self.stats.unchanged = 1, state.chunk_count
            return False
        return True

    def parts(self) -> Iterator[Batch]:
        records = self.doc.records
        for i in range(0, len(records), self.batch):
            stop = min(i + self.batch, len(records))
            if self.encoded:
                yield Batch(records, i, stop, records.chunk_ids[i:stop], records.rows[i:stop])
            else:
                part = Batch(records, i, stop, None, None)
                part.ids = [r["chunk_id"] for r in part.records()]
                yield part

    def diff(self, old: dict, part: Batch) -> DocumentDiff:
        stage = self.stage
        if not old and part.rows is not None:  # all new, encoded by the worker: counted, written as they are
            keys = self.doc.records.embed_keys[part.start : part.stop]
            self.stats.added += len(part)
            if stage.embedding:
                self.stats.embedded += len(part)
            self.needed.update(keys)
            vectors = {}
            if stage.embedding:
                vectors = {k: self.vectors[k] for k in keys if k in self.vectors}
            return DocumentDiff(vectors=vectors, vector_model=stage.model, rows=part.rows)
        records = part.records()
        added, updated, _, need = diff(old, {r["chunk_id"]: r for r in records}, self.stats, stage.embedding)
        self.needed.update(r["embed_key"] for r in need)
        vectors = {}
        if stage.embedding:  # the vectors the embed stage gave for this batch's keys (the store lacked them)
            vectors = {r["embed_key"]: self.vectors[r["embed_key"]] for r in records if r["embed_key"] in self.vectors}
        lexical = self.doc.lexical
        if self.encoded:  # the worker's rows hold the analysed fields: not analysed again here
            lexical = {r["chunk_id"]: row[-3:] for r, row in zip(records, part.rows)}
        return DocumentDiff(added, updated, (), vectors, stage.model,
                            {r["chunk_id"]: lexical[r["chunk_id"]] for r in records if r["chunk_id"] in lexical})

    def removal(self, removed: list[str]) -> DocumentDiff:
        self.stats.removed += len(removed)
        return DocumentDiff(removed=removed, vector_model=self.stage.model)


class WriteStage:
    """Writes prepared documents. In ``batched()`` (a store with ``batched_writes``: SQLite) documents
    share a transaction, each still atomic on its own (a savepoint), committed every
    ``BATCH_DOCS`` documents, every ``BATCH_SECONDS``, and by ``idle()`` (the executor waits for
    the next file; it calls ``idle`` again every ``sandbox.processes.IDLE_TICK`` while it waits)
    once the batch is ``IDLE_SECONDS`` old: the store's lock is held at most about that long
    while nothing is written.

    Why not commit at every wait: a commit costs the single writer milliseconds (WAL frames, an
    FTS5 segment flushed and merged), and a writer faster than its workers waits before nearly
    every document: 2,000 small files took 438 commits, 16% of the main process's CPU."""

    BATCH_DOCS = 256
    BATCH_SECONDS = 2.0
    IDLE_SECONDS = 0.5
    BATCH_RECORDS = 512  # records decoded and written at a time within one document's transaction

    def __init__(self, store, *, root: str, inputs: str, now: str, model: str, embedding: bool,
                 stats: IngestStats, dry_run: bool = False) -> None:
        self.store, self.root, self.inputs, self.now, self.model = store, root, inputs, now, model
        self.embedding, self.stats, self.dry_run = embedding, stats, dry_run
        self._pending, self._since = 0, 0.0
        self._commit = None  # the open batch's (``Store.batch``)

    @contextlib.contextmanager
    def batched(self):
        if self.dry_run or not self.store.capabilities.batched_writes:
            yield self
            return
        with self.store.batch() as self._commit:
            try:
                yield self
            finally:
                self._pending, self._commit = 0, None

    def idle(self) -> None:
        """Commit what the open batch holds once it is ``IDLE_SECONDS`` old (called before waiting
        for more documents, and again while the wait lasts)."""
        if self._pending and time.monotonic() - self._since >= self.IDLE_SECONDS:
            self.commit()

    def commit(self) -> None:
        """Commit what the open batch holds, whatever its age."""
        if self._pending:
            self._commit()
            self._pending = 0

    def _wrote(self) -> None:
        if self._commit is None:  # not in a batch: every write committed on its own
            return
        if not self._pending:
            self._since = time.monotonic()
        self._pending += 1
        if self._pending >= self.BATCH_DOCS or time.monotonic() - self._since >= self.BATCH_SECONDS:
            self.commit()

    def row(self, doc: Prepared) -> DocumentRow:
        """The document's catalogue row. A document with problems (its access tags cannot be read:
        held in review) records inputs no run has, so every re-ingest prepares it again and reports
        it again (its warning, its error, the exit status): never skipped in silence while held."""
        inputs = self.inputs + HELD if doc.problems else self.inputs
        return DocumentRow(doc.doc_id, self.root, doc.task.rel, doc.source_uri, doc.task.sha256, inputs,
                           doc.title, doc.author, doc.updated_at, self.now, len(doc.records), doc.versioning)

    def write(self, doc: Prepared, vectors: dict, repair=None) -> None:
        """Write one document (a dry run only counts), ``BATCH_RECORDS`` records at a time in its one
        transaction. ``repair(doc, keys)``: vectors for needed keys the store lost since they were
        checked. Raises ChunkwiseError for this document only."""
        plan = DocumentPlan(self, doc, vectors, self.BATCH_RECORDS)
        if self.dry_run:  # the write's own walk through the plan, nothing applied: the real run's counts
            self.store.write_document(self.row(doc), plan, dry_run=True)
            self.stats.merge(plan.stats)
            return
        self.store.write_document(self.row(doc), plan)
        self._wrote()
        self.stats.merge(plan.stats)
        lost = sorted(plan.needed - set(vectors))
        if repair is not None and lost:
            fixed = repair(doc, lost)
            if fixed:
                self.store.put_vectors(self.model, list(fixed.items()))
