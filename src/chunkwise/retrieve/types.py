"""What retrieval hands back: ranked chunk hits, merged passages, and the assembled context."""
from __future__ import annotations

from dataclasses import dataclass, field

MODES = ("bm25", "dense", "hybrid")
EXPANSIONS = ("none", "neighbours", "parent", "page", "pages")
GRANULARITIES = ("passage", "page")  # what one result is: a passage of chunks, or a page of a paged document


VERSIONS = ("auto", "latest", "all")  # auto: latest unless the query names a version or a date


@dataclass(frozen=True)
class VersionRef:
    """Another document a passage's text was also found in (an identical passage, collapsed)."""

    doc_id: str
    source_uri: str = ""
    version: str = ""
    updated_at: str = ""
    chunk_id: str = ""

    def to_dict(self) -> dict:
        return {"doc_id": self.doc_id, "source_uri": self.source_uri, "version": self.version,
                "updated_at": self.updated_at, "chunk_id": self.chunk_id}


@dataclass(frozen=True)
class Hit:
    """One ranked chunk. ``rank`` is 1-based within one result list; ``score`` is the ranker's own
    (BM25 larger-is-better, cosine, or fused RRF) and only comparable within that list."""

    chunk_id: str
    doc_id: str
    chunk_index: int
    start_char: int
    end_char: int
    score: float
    rank: int
    text: str = ""
    source_uri: str = ""
    heading_path: tuple[str, ...] = ()
    page: int | None = None
    acl: tuple[str, ...] = ()
    section_id: str = ""
    source_version: str = ""
    version: str = ""  # the document's front matter version label
    updated_at: str = ""  # the document's front matter date
    also_in: tuple[VersionRef, ...] = ()  # identical passages of other documents collapsed into this one
    superseded_by: tuple[str, ...] = ()  # newer versions of its document the caller may see (--all-versions)


@dataclass(frozen=True)
class Passage:
    """A contiguous piece of one document served as evidence: one hit, several merged hits, or a
    hit grown by expansion. ``rank`` is the best rank among the hits it holds; ``expanded_from``
    names the retrieved chunks an expanded passage grew from (empty when nothing was added)."""

    doc_id: str
    start_char: int
    end_char: int
    rank: int
    score: float
    text: str
    chunk_ids: tuple[str, ...]
    source_uri: str = ""
    heading_path: tuple[str, ...] = ()
    page: int | None = None
    acl: tuple[str, ...] = ()
    expanded_from: tuple[str, ...] = ()
    section_id: str = ""
    source_version: str = ""
    chunk_range: tuple[int, int] = (-1, -1)  # first and last chunk_index held (consecutive chunks touch)
    best_chunk_id: str = ""  # the best-ranked retrieved chunk inside (the one a cut to the budget keeps)
    version: str = ""
    updated_at: str = ""
    also_in: tuple[VersionRef, ...] = ()
    superseded_by: tuple[str, ...] = ()

    @property
    def versions(self) -> tuple[VersionRef, ...]:
        """Where this passage's text was found: its own document first, then identical passages'."""
        own = VersionRef(self.doc_id, self.source_uri, self.version, self.updated_at, self.chunk_ids[0])
        return (own, *self.also_in)

    @property
    def span(self) -> tuple[str, int, int]:
        return (self.doc_id, self.start_char, self.end_char)


@dataclass(frozen=True)
class Omission:
    """Evidence that was found but not sent, and why (never silently dropped)."""

    chunk_ids: tuple[str, ...]
    # "budget", "passage_budget", "neighbours_over_budget", "parent_over_budget", "stale_link",
    # "parent_not_permitted" (README, "Search": what each means)
    reason: str
    detail: str = ""
    passage: int | None = None  # the result (1-based) these chunks were cut from; None: nothing of it sent


@dataclass(frozen=True)
class SearchResult:
    query: str
    mode: str
    passages: tuple[Passage, ...]
    context: str
    context_tokens: int
    omitted: tuple[Omission, ...] = field(default_factory=tuple)

    def to_dict(self) -> dict:
        return {
            "query": self.query,
            "mode": self.mode,
            "results": [
                {
                    "rank": i + 1,
                    "chunk_id": p.chunk_ids[0],
                    "chunk_ids": list(p.chunk_ids),
                    "doc_id": p.doc_id,
                    "source_uri": p.source_uri,
                    "text": p.text,
                    "score": p.score,
                    "start_char": p.start_char,
                    "end_char": p.end_char,
                    "page": p.page,
                    "heading_path": list(p.heading_path),
                    "acl": list(p.acl),
                    "expanded_from": list(p.expanded_from),
                    "best_chunk_id": p.best_chunk_id or p.chunk_ids[0],
                    "version": p.version,
                    "updated_at": p.updated_at,
                    "versions": [v.to_dict() for v in p.versions],
                    "superseded_by": list(p.superseded_by),
                }
                for i, p in enumerate(self.passages)
            ],
            "context_tokens": self.context_tokens,
            "omitted": [{"chunk_ids": list(o.chunk_ids), "reason": o.reason, "detail": o.detail, "passage": o.passage}
                        for o in self.omitted],
        }
