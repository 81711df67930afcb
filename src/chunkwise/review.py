"""The review queue: chunks stored as ``review`` (never served), listed, and released one by one.

A chunk lands in review when something about it needs a person: a cut inside one unit
(``char_split``), low OCR confidence, an undefined similarity, and so on (``reasons``). A person who
has looked at one may release it: the release is written into the chunk's stored record
(``released``: when, and the reasons it was released from) with its quality set to ``ready``, so
every backend serves it through the same permission filter as any other chunk. A release belongs to
the chunk's text: the chunk id is a hash of the document, the text and its occurrence, so a
re-ingest that keeps the text keeps the id and the release (``carry``); a chunk whose text changed
is a new chunk and is reviewed afresh.

Access review is never released this way: a chunk with no readable access tags (``missing_acl``,
``unreadable_acl``) has no reader to serve it to; its tags must be fixed in the source or the ACL
map, then re-ingested.
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Iterable, Sequence

from chunkwise.enrich.acl import UNREADABLE
from chunkwise.enrich.records import READY, REVIEW
from chunkwise.errors import ConfigError

ACCESS_REASONS = frozenset({"missing_acl", UNREADABLE})


@dataclass(frozen=True)
class ReviewItem:
    """One chunk in review: where it is, why, and whether ``release`` may serve it."""

    chunk_id: str
    doc_id: str
    source_uri: str
    start_char: int
    end_char: int
    reasons: tuple[str, ...]
    text: str
    heading_path: tuple[str, ...] = ()
    page: int | None = None

    @property
    def access(self) -> bool:
        """Access review: no readable tags, never released here."""
        return bool(set(self.reasons) & ACCESS_REASONS)

    def to_dict(self) -> dict:
        return {"chunk_id": self.chunk_id, "doc_id": self.doc_id, "source_uri": self.source_uri,
                "start_char": self.start_char, "end_char": self.end_char, "reasons": list(self.reasons),
                "access": self.access, "heading_path": list(self.heading_path), "page": self.page,
                "text": self.text}


def releasable(record: dict) -> bool:
    """A chunk a release may serve: it has access tags and no access reason."""
    return bool(record.get("acl")) and not set(record.get("reasons") or ()) & ACCESS_REASONS


def released(record: dict, now: str) -> dict:
    """``record`` released: quality ``ready``, the release recorded (what it was released from)."""
    return dict(record, quality=READY, released={"at": now, "reasons": list(record.get("reasons") or ())})


def carry(old: dict, new: dict) -> dict:
    """``new`` (a re-ingest's record of a chunk the store holds as ``old``, same chunk id, so the
    same text) keeps ``old``'s release while it is still releasable; else ``new`` as it is."""
    mark = old.get("released")
    if not mark or new.get("quality") != REVIEW or not releasable(new):
        return new
    return dict(new, quality=READY, released=mark)


def queue(db: str | Path, reasons: Iterable[str] = ()) -> list[ReviewItem]:
    """Every chunk in review, by source then position (only those with one of ``reasons``, if given)."""
    from chunkwise.quality import _open

    wanted = set(reasons)
    out = []
    with _open(db) as store:
        for c in store.chunks():
            if c.quality != REVIEW:
                continue
            r = c.record
            why = tuple(r.get("reasons") or ("needs_review",))
            if wanted and not wanted & set(why):
                continue
            out.append(ReviewItem(r["chunk_id"], r["doc_id"], c.source_uri or r.get("source_uri", ""),
                                  r["start_char"], r["end_char"], why, r.get("text", ""),
                                  tuple(r.get("heading_path") or ()), r.get("page")))
    return out


@dataclass(frozen=True)
class Released:
    """What ``release`` did: the chunk ids now served."""

    released: tuple[str, ...]

    def to_dict(self) -> dict:
        return {"released": list(self.released)}


def release(db: str | Path, chunk_ids: Sequence[str], *, timeout: float = 60.0) -> Released:
    """Release the chunks ``chunk_ids`` (full ids, or prefixes of at least 8 characters naming one
    chunk in review each). All or nothing: an id that names no chunk in review, or a chunk in
    access review, is a ConfigError and nothing is released."""
    from chunkwise.store import open_store
    from chunkwise.store.base import DocumentDiff
    from chunkwise.store.writing import write_decided

    items = queue(db)
    chosen: dict[str, ReviewItem] = {}
    for ask in dict.fromkeys(chunk_ids):
        if len(ask) < 8:
            raise ConfigError(f"chunk id {ask!r} is too short: give at least 8 characters of an id "
                              f"`chunkwise review --db {db}` lists")
        found = [i for i in items if i.chunk_id.startswith(ask)]
        if not found:
            raise ConfigError(f"no chunk in review has id {ask!r}; `chunkwise review --db {db}` lists them")
        if len(found) > 1:
            raise ConfigError(f"chunk id {ask!r} names {len(found)} chunks in review; give more characters")
        item = found[0]
        if item.access:
            raise ConfigError(f"chunk {item.chunk_id} ({item.source_uri} chars {item.start_char}-{item.end_char}) "
                              f"is in access review ({', '.join(sorted(set(item.reasons) & ACCESS_REASONS))}): "
                              f"no reader may be served it; fix its access tags and re-ingest")
        chosen[item.chunk_id] = item
    if not chosen:
        return Released(())
    now = datetime.now(timezone.utc).isoformat(timespec="seconds")
    done: list[str] = []
    with open_store(db, timeout=timeout, create=False) as store:
        rows = {d.doc_id: d for d in store.documents()}
        for doc_id in dict.fromkeys(i.doc_id for i in chosen.values()):
            ids = {cid for cid, i in chosen.items() if i.doc_id == doc_id}

            def decide(state, old, ids=ids):  # inside the document's write lock, on what it holds now
                updated = [released(old[cid], now) for cid in sorted(ids)
                           if cid in old and old[cid].get("quality") == REVIEW and releasable(old[cid])]
                done.extend(r["chunk_id"] for r in updated)
                return DocumentDiff(updated=updated) if updated else None

            write_decided(store, rows[doc_id], decide)
    return Released(tuple(done))
