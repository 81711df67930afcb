"""The write protocol every backend shares, written once: per-document writes, removals, version links.

Why one place: a document write is a small protocol (lock the document, read its fresh state, check
its id is not held by another path, let the caller's pure ``decide`` take the set difference,
replace the document whole when its id changed, apply, collect the vectors its old chunks used)
and a copy per backend drifts. A backend supplies only the primitives that differ — its
transaction (``atomic``), its locks, and the statements — through ``WritePrimitives``; the mixin
``DocumentWrites`` turns them into ``Store.write_document``, ``remove_missing``, ``relink_versions``
and ``run``; ``write_decided`` is a write whose pure ``decide`` sees the whole stored document.
``chunk_meta`` and ``document_values`` are the row shapes both backends store, so a record is split
into columns the same way everywhere.
"""
from __future__ import annotations

import os
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Callable, ContextManager, Iterable, Iterator, Mapping, Protocol, Sequence

from chunkwise.access import AccessTags
from chunkwise.errors import IdentityConflict
from chunkwise.store.base import (DocumentDiff, DocumentPlan, DocumentRow, DocumentState, FinishRun, Store, VersionLink,
                                  kept_links)

TEXT_COLUMNS = ("text", "embed_text")  # stored in their own columns (analysed for lexical search), not in the JSON


class WritePrimitives(Protocol):
    """What a backend provides to the shared writes (all called inside ``atomic``)."""

    def atomic(self) -> ContextManager: ...
    def _lock_document(self, doc: DocumentRow) -> None:
        """Serialise writers of this (root, path) and this id (SQLite: the write transaction does)."""
    def _lock_roots(self) -> None:
        """Exclude document writes (removals, relinking) for the rest of the transaction."""
    def _state_at(self, root: str, path: str) -> DocumentState | None: ...
    def doc_id_owner(self, doc_id: str) -> tuple[str, str] | None: ...
    def chunk_keys_of(self, doc_id: str) -> dict[str, str]:
        """chunk_id -> embed_key of a document's chunks (no texts, no records: small)."""
    def records_among(self, doc_id: str, chunk_ids: Sequence[str]) -> dict[str, dict]:
        """The stored records of ``chunk_ids`` (those of ``doc_id``), by chunk id."""
    def _delete_document(self, doc_id: str) -> int:
        """Delete a document, its chunks and links, and the vectors no chunk uses any more; returns
        the chunks deleted."""
    def _apply(self, doc: DocumentRow | None, diff: DocumentDiff) -> None:
        """Write ``diff``, and the ``documents`` row ``doc`` first (None: written already in this
        transaction, by an earlier batch of the same document)."""
    def _drop_unused(self, keys: set[str]) -> None: ...
    def _replace_links(self, links: Sequence[VersionLink]) -> None: ...
    def document_states(self, root: str, prefix: str = "") -> dict[str, DocumentState]: ...
    def documents(self, doc_ids: Iterable[str] | None = None) -> list[DocumentRow]: ...
    def _start_run(self, now: str) -> int: ...
    def _finish_run(self, run_id: int, now: str, stats: dict, settings: Mapping[str, str]) -> int:
        """Record settings and stats, drop vectors no chunk uses (returns how many)."""


def _nothing() -> None:
    pass


def check_owner(doc: DocumentRow, owner: tuple[str, str] | None) -> None:
    """Two documents never share an id: a write of ``doc`` whose id another path holds is refused."""
    if owner is not None and owner != (doc.root, doc.path):
        raise IdentityConflict(
            f"{doc.path}: its id {doc.doc_id!r} is already held by {os.path.join(*owner)}; two documents never "
            f"share an id: give one of them another front matter id")


def chunk_meta(r: dict) -> tuple[dict, AccessTags]:
    """A record's JSON part (everything but the texts) and its parsed access tags (hostile input:
    a tag outside the grammar raises here, before anything is written)."""
    meta = {k: v for k, v in r.items() if k not in TEXT_COLUMNS}
    return meta, AccessTags.parse(r["acl"], f"chunk {r['chunk_id']}")


def document_values(doc: DocumentRow) -> dict:
    """The ``documents`` row of ``doc`` as named parameters."""
    return {k: getattr(doc, k) for k in DocumentRow.__dataclass_fields__}


def missing_chunks(states: dict[str, DocumentState], seen: set[str]) -> list[DocumentState]:
    """The documents of ``states`` (path -> state) whose path a run did not see: a removal."""
    return [s for p, s in states.items() if p not in seen]


def _streamed(store: WritePrimitives, doc: DocumentRow, plan: DocumentPlan,
              apply: Callable[[DocumentRow | None, DocumentDiff], None] | None) -> bool:
    """``write_document``'s walk: ``apply`` each diff (None: a dry run, nothing written)."""
    state = store._state_at(doc.root, doc.path)
    check_owner(doc, store.doc_id_owner(doc.doc_id))
    if not plan.begin(state):
        return False
    stored = store.chunk_keys_of(state.doc_id) if state else {}
    if apply is not None and state is not None and state.doc_id != doc.doc_id:  # its id changed: replace it whole
        store._delete_document(state.doc_id)  # (chunk ids hash the doc id: none is kept)
    seen: set[str] = set()
    row: DocumentRow | None = doc  # the documents row is written once, with the first batch
    for part in plan.parts():
        seen.update(part.ids)
        kept = [cid for cid in part.ids if cid in stored]
        diff = plan.diff(store.records_among(state.doc_id, kept) if kept else {}, part)
        if apply is not None:
            apply(row, diff)
        row = None
    removal = plan.removal([cid for cid in stored if cid not in seen])
    if apply is not None and (removal.removed or row is not None):
        apply(row, removal)
    if apply is not None and stored:
        store._drop_unused(set(stored.values()))
    return True


class DocumentWrites:
    """``Store.write_document``, ``remove_missing``, ``relink_versions`` and ``run`` over
    ``WritePrimitives``, and ``batch`` for a backend without ``batched_writes``."""

    @contextmanager
    def batch(self) -> Iterator[Callable[[], None]]:
        """Every write commits on its own: nothing to group, nothing to commit."""
        yield _nothing

    @contextmanager
    def run(self: WritePrimitives, now: str) -> Iterator[FinishRun]:
        run_id = self._start_run(now)
        yield lambda finished, stats, settings: self._finish_run(run_id, finished, stats, settings)

    def write_document(self: WritePrimitives, doc: DocumentRow, plan: DocumentPlan, *, dry_run: bool = False) -> bool:
        """The diff taken a batch at a time, in one transaction (a crash or an error mid-document
        leaves nothing of it written): what is held is the stored ids and embed keys and one batch
        of records, never the whole document. Returns whether anything was written (False:
        ``plan.begin`` found it unchanged). ``dry_run``: the same walk through ``plan`` with nothing
        applied, outside any transaction (one path: a dry run counts what this write would do)."""
        if dry_run:
            return _streamed(self, doc, plan, None)
        with self.atomic():
            self._lock_document(doc)
            return _streamed(self, doc, plan, self._apply)

    def remove_missing(self: WritePrimitives, root: str, prefix: str, seen: set[str], *, dry_run: bool = False) -> int:
        """Delete the documents under ``root``/``prefix`` whose path is not in ``seen`` (their chunks,
        links and unused vectors); returns the chunks removed. ``dry_run``: count them, write nothing."""
        if dry_run:
            return sum(s.chunk_count for s in missing_chunks(self.document_states(root, prefix), seen))
        with self.atomic():
            self._lock_roots()
            gone = missing_chunks(self.document_states(root, prefix), seen)
            return sum(self._delete_document(state.doc_id) for state in gone)

    def relink_versions(self: WritePrimitives, derive: Callable[[list[DocumentRow]], Sequence[VersionLink]]
                        ) -> list[VersionLink]:
        """Under the roots lock, so the documents ``derive`` reads are the ones the links are written
        against: no writer adds or removes one meanwhile."""
        with self.atomic():
            self._lock_roots()
            docs = self.documents()
            links = kept_links(derive(docs), {d.doc_id for d in docs})
            self._replace_links(links)
            return links


Decide = Callable[[DocumentState | None, dict[str, dict]], DocumentDiff | None]


@dataclass(frozen=True)
class _Whole:
    """The one batch of a ``_Decided`` write. Its ``ids`` are empty: ``begin`` read the stored
    records already, so no kept record is read again, and ``removal`` keeps every unnamed id."""

    ids: tuple[str, ...] = ()


class _Decided:
    """A ``DocumentPlan`` whose pure ``decide`` takes the difference against the whole stored
    document: ``begin`` reads the document's records inside the write (its lock held) and decides;
    one batch applies the diff; ids the diff does not name are kept (it removes what it lists)."""

    def __init__(self, store: Store, decide: Decide) -> None:
        self.store, self.decide, self.diff_made = store, decide, None

    def begin(self, state: DocumentState | None) -> bool:
        old = self.store.records_of(state.doc_id) if state else {}
        self.diff_made = self.decide(state, old)
        return self.diff_made is not None

    def parts(self) -> Iterator[_Whole]:
        yield _Whole()

    def diff(self, old: dict[str, dict], part: _Whole) -> DocumentDiff:
        return self.diff_made

    def removal(self, removed: list[str]) -> DocumentDiff:
        return DocumentDiff()


def write_decided(store: Store, doc: DocumentRow, decide: Decide) -> DocumentDiff | None:
    """``store.write_document`` with a pure ``decide(state, old records)`` over the whole document
    (review's release; tests): in one write transaction holding the document it reads the state and
    records, calls ``decide`` (may raise to abort), applies the diff it returns (None: nothing
    written). Returns that diff."""
    plan = _Decided(store, decide)
    return plan.diff_made if store.write_document(doc, plan) else None
