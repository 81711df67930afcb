"""Neighbour and parent expansion, with the three checks seed 000 asks for.

A retrieved child is grown only when (1) it belongs to the document version the store holds now
(else ``StaleLink``: the parent or neighbours it would pull may belong to another text), (2) every
added chunk is one the caller may read (a parent with a forbidden part raises
``ParentNotPermitted``; a forbidden neighbour is simply not added) and (3) the result fits the
budget (``BudgetExceeded``; never truncated — a deadline cut in half is worse than no context).
The search pipeline takes the rows (``neighbour_rows``, ``parent_rows``) and leaves (3) to context
assembly, which cuts at chunk boundaries and names the expansion in what it omits.
"""
from __future__ import annotations

from typing import Callable, Protocol, Sequence

from chunkwise.access import permitted
from chunkwise.errors import BudgetExceeded, ParentNotPermitted, StaleLink
from chunkwise.retrieve.index import Item
from chunkwise.retrieve.merge import stitch
from chunkwise.retrieve.types import Passage


class ChunkSource(Protocol):
    """What expansion reads: the current version of a document and all its chunks (any quality)."""

    def document_version(self, doc_id: str) -> str | None: ...

    def doc_chunks(self, doc_id: str) -> Sequence[Item]: ...


def _current(source: ChunkSource, passage: Passage) -> list[Item]:
    version = source.document_version(passage.doc_id)
    if version is None or (passage.source_version and version != passage.source_version):
        # no hash in the message: a source's sha256 covers text the caller may not read
        raise StaleLink(f"{passage.doc_id}: retrieved from an older version of the document than the store holds; "
                        "re-run the search (the index is older than the store)")
    rows = sorted(source.doc_chunks(passage.doc_id), key=lambda r: r.chunk_index)
    have = {r.chunk_id for r in rows}
    missing = [c for c in passage.chunk_ids if c not in have]
    if missing or any(r.source_version and r.source_version != version for r in rows):
        raise StaleLink(f"{passage.doc_id}: chunk {missing[0] if missing else '?'} is not part of the stored version; "
                        "re-run the search")
    return rows


def _grow(passage: Passage, rows: Sequence[Item]) -> Passage:
    rows = sorted(rows, key=lambda r: (r.start_char, r.end_char))
    ids = tuple(r.chunk_id for r in rows)
    if set(ids) == set(passage.chunk_ids):
        return passage
    first = rows[0]
    return Passage(
        doc_id=passage.doc_id, start_char=min(r.start_char for r in rows), end_char=max(r.end_char for r in rows),
        rank=passage.rank, score=passage.score, text=stitch([(r.start_char, r.end_char, r.text) for r in rows]),
        chunk_ids=ids, source_uri=passage.source_uri, heading_path=first.heading_path, page=first.page,
        acl=tuple(sorted({t for r in rows for t in r.acl})), expanded_from=passage.chunk_ids,
        section_id=first.section_id if all(r.section_id == first.section_id for r in rows) else "",
        source_version=passage.source_version,
        chunk_range=(min(r.chunk_index for r in rows), max(r.chunk_index for r in rows)),
        version=passage.version, updated_at=passage.updated_at, also_in=passage.also_in,
        superseded_by=passage.superseded_by, hit=passage.best, best_chunk_id=passage.best.chunk_id,
    )


def _fit(p: Passage, budget: int | None, measure: Callable[[str], int] | None) -> Passage:
    if budget is not None and measure is not None:
        n = measure(p.text)
        if n > budget:
            raise BudgetExceeded(f"{p.doc_id} chars {p.start_char}-{p.end_char}: {n} tokens > budget {budget}; "
                                 "serving the smaller retrieved chunk instead")
    return p


def neighbour_rows(source: ChunkSource, passage: Passage, groups, *, width: int = 1) -> list[Item]:
    """The passage's chunks plus up to ``width`` permitted chunks before and after it in the same
    document version. A neighbour the caller may not read stops the growth on that side."""
    rows = _current(source, passage)
    pos = {r.chunk_id: i for i, r in enumerate(rows)}
    inside = sorted(pos[c] for c in passage.chunk_ids)
    chosen = [rows[i] for i in range(inside[0], inside[-1] + 1)
              if rows[i].chunk_id in passage.chunk_ids or permitted(rows[i].acl, rows[i].quality, groups)]
    for step in (-1, 1):
        at = inside[0] if step < 0 else inside[-1]
        for _ in range(width):
            at += step
            if not 0 <= at < len(rows) or not permitted(rows[at].acl, rows[at].quality, groups):
                break
            chosen.append(rows[at])
    return chosen


def parent_rows(source: ChunkSource, passage: Passage, groups) -> list[Item]:
    """Every chunk of the enclosing section(s) of the passage's chunks, all of them or nothing."""
    rows = _current(source, passage)
    sections = {r.section_id for r in rows if r.chunk_id in passage.chunk_ids}
    family = [r for r in rows if r.section_id in sections]
    if any(not permitted(r.acl, r.quality, groups) for r in family):
        # Nothing about the forbidden part (its ids, how many chunks) is said to the caller.
        raise ParentNotPermitted(f"{passage.doc_id}: the enclosing section holds text the caller may not read; "
                                 "serving the retrieved chunk alone")
    return family


def page_rows(source: ChunkSource, passage: Passage, groups, *, width: int = 0) -> list[Item]:
    """The permitted chunks of the page(s) the passage's chunks start on, and of ``width`` pages
    before and after: the page as the retrieval unit (PDF question answering scores pages). A chunk
    the caller may not read is left out, as a neighbour would be. A document without pages gives
    the passage's own chunks."""
    rows = _current(source, passage)
    mine = [r for r in rows if r.chunk_id in passage.chunk_ids]
    pages = {r.page for r in mine if r.page is not None}
    if not pages:
        return mine
    lo, hi = min(pages) - width, max(pages) + width
    return mine + [r for r in rows if r.chunk_id not in passage.chunk_ids and r.page is not None
                   and lo <= r.page <= hi and permitted(r.acl, r.quality, groups)]


def pages_rows(source: ChunkSource, passage: Passage, groups) -> list[Item]:
    """:func:`page_rows` with the page before and the page after."""
    return page_rows(source, passage, groups, width=1)


EXPANDERS = {"neighbours": neighbour_rows, "parent": parent_rows, "page": page_rows, "pages": pages_rows}
UNITS = ("page", "pages")  # expansions that make a page (with its neighbours) one unit of the result


def expand_neighbours(source: ChunkSource, passage: Passage, groups, *, budget: int | None = None,
                      measure: Callable[[str], int] | None = None, width: int = 1) -> Passage:
    """The passage grown by :func:`neighbour_rows`, refused when it exceeds ``budget``."""
    return _fit(_grow(passage, neighbour_rows(source, passage, groups, width=width)), budget, measure)


def expand_parent(source: ChunkSource, passage: Passage, groups, *, budget: int | None = None,
                  measure: Callable[[str], int] | None = None) -> Passage:
    """The whole enclosing section(s) of the passage's chunks, all of it or nothing."""
    return _fit(_grow(passage, parent_rows(source, passage, groups)), budget, measure)
