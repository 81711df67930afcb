"""One document as a given caller may see it: the permitted records in order, nothing else.

A document the caller may see no chunk of is reported exactly like one that does not exist
(``None``), so whether a document exists, and how many chunks it has, is never revealed to a caller
outside its groups. Document fields (source, title, version) come from the permitted records
themselves, never from the document row.

Nothing served is derived from text the caller may not read: a record is sent with the fields of
``SERVED_FIELDS`` only. Left out are the source's sha256 (``source_version``: a hash of the whole
file, hidden sections included, which confirms a guess of their content), the section id (a hash
over the full heading path, restricted headings included) and the embed key and window (which
name text outside the chunk for late chunking).
"""
from __future__ import annotations

from dataclasses import dataclass

from chunkwise.access import permitted
from chunkwise.retrieve.index import check_groups
from chunkwise.retrieve.positions import hide_record


SERVED_FIELDS = ("chunk_id", "doc_id", "source_uri", "chunk_index", "heading_path", "start_char", "end_char", "page",
                 "page_end", "doc_updated_at", "ingested_at", "language", "acl", "content_hash", "embed_model", "text",
                 "embed_text", "size", "title", "author", "chunker", "header_mode", "quality", "reasons", "doc_version",
                 "route", "boxes")


def served_record(record: dict) -> dict:
    """The fields of a permitted record a caller is sent (see the module's note)."""
    return {k: record[k] for k in SERVED_FIELDS if k in record}


@dataclass(frozen=True)
class VisibleDocument:
    doc_id: str
    source_uri: str
    title: str
    version: str  # the front matter's ``version`` as the caller's records carry it ("" when none)
    records: tuple[dict, ...]  # served records (``served_record``: text and embed_text included), in chunk order
    whole: bool = False  # the caller may read every chunk: positions are served (retrieve/positions.py)

    def to_dict(self) -> dict:
        return {
            "doc_id": self.doc_id,
            "source_uri": self.source_uri,
            "title": self.title,
            "version": self.version,
            "boundaries": [[r["start_char"], r["end_char"]] for r in self.records] if self.whole else [],
            "records": list(self.records) if self.whole else [hide_record(r) for r in self.records],
        }


def visible_document(store, doc_id: str, groups) -> VisibleDocument | None:
    """The records of ``doc_id`` that ``groups`` may see, or ``None`` when there are none. The store
    filters inside its lookup (``records_of`` given the groups: no hidden row is read, so hidden and
    absent take the same time); the one visibility rule is checked again on what comes back."""
    groups = check_groups(groups)
    with store.as_caller(groups):  # a secured PostgreSQL store shows only these groups' rows
        stored = store.records_of(doc_id, groups).values()
        records = [r for r in stored if permitted(r.get("acl") or (), r.get("quality", ""), groups)]
        if not records:
            return None
        # only now, for a document the caller may see: does it hold chunks they may not read? From
        # the document row's count, not its chunks, so the cost does not grow with what is hidden.
        held = store.documents([doc_id])
        whole = bool(held) and len(records) == held[0].chunk_count
    records.sort(key=lambda r: (r["chunk_index"], r["start_char"]))
    first = records[0]
    return VisibleDocument(doc_id, first.get("source_uri", ""), first.get("title", ""),
                           first.get("doc_version", "") or "", tuple(served_record(r) for r in records), whole)


@dataclass(frozen=True)
class DocumentEntry:
    """A document in a caller's listing: fields from its first permitted record only."""

    doc_id: str
    source_uri: str
    title: str
    chunks: int  # the records the caller may see (never the document's total)


def visible_documents(store, groups, *, after: str | None = None, limit: int = 100) -> tuple[list[DocumentEntry], bool]:
    """The documents ``groups`` may see at least one record of, by doc_id, starting after ``after``
    (a doc_id the caller was given, or None): up to ``limit`` of them, and whether more follow.
    Hidden documents are skipped as if absent: nothing in the answer depends on them."""
    groups = check_groups(groups)
    out: list[DocumentEntry] = []
    with store.as_caller(groups):
        for row in sorted(store.documents(), key=lambda r: r.doc_id):  # code point order on every backend
            if after is not None and row.doc_id <= after:
                continue
            seen = [c for c in store.chunks(doc_id=row.doc_id) if permitted(c.acl, c.quality, groups)]
            if not seen:
                continue
            if len(out) == limit:
                return out, True
            first = seen[0].record
            out.append(DocumentEntry(row.doc_id, first.get("source_uri") or seen[0].source_uri,
                                     first.get("title") or "", len(seen)))
    return out, False
