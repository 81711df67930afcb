"""One document as a given caller may see it: the permitted records in order, nothing else.

A document the caller may see no chunk of is reported exactly like one that does not exist
(``None``), so whether a document exists, and how many chunks it has, is never revealed to a caller
outside its groups. Document fields (source, title, version) come from the permitted records
themselves, never from the document row.
"""
from __future__ import annotations

from contextlib import nullcontext
from dataclasses import dataclass

from chunkwise.access import permitted
from chunkwise.retrieve.index import check_groups


@dataclass(frozen=True)
class VisibleDocument:
    doc_id: str
    source_uri: str
    title: str
    source_version: str
    records: tuple[dict, ...]  # ChunkRecord dicts (text and embed_text included), in chunk order

    def to_dict(self) -> dict:
        return {
            "doc_id": self.doc_id,
            "source_uri": self.source_uri,
            "title": self.title,
            "source_version": self.source_version,
            "boundaries": [[r["start_char"], r["end_char"]] for r in self.records],
            "records": list(self.records),
        }


def visible_document(store, doc_id: str, groups) -> VisibleDocument | None:
    """The records of ``doc_id`` that ``groups`` may see (the one visibility rule, per record), or
    ``None`` when there are none. ``store`` is anything with ``records_of(doc_id)``."""
    groups = check_groups(groups)
    as_caller = getattr(store, "as_caller", None)  # a secured PostgreSQL store shows only these groups' rows
    with as_caller(groups) if as_caller else nullcontext():
        stored = store.records_of(doc_id)
    records = [r for r in stored.values() if permitted(r.get("acl") or (), r.get("quality", ""), groups)]
    if not records:
        return None
    records.sort(key=lambda r: (r["chunk_index"], r["start_char"]))
    first = records[0]
    return VisibleDocument(doc_id, first.get("source_uri", ""), first.get("title", ""),
                           first.get("source_version", ""), tuple(records))
