"""What retrieval hands back: ranked chunk hits, merged passages, and the assembled context."""
from __future__ import annotations

from dataclasses import dataclass, field

from chunkwise.retrieve.positions import hide_span, without_chars
from chunkwise.highlight import spans, terms

MODES = ("bm25", "dense", "hybrid")
EXPANSIONS = ("none", "neighbours", "parent", "page", "pages")
GRANULARITIES = ("passage", "page")  # what one result is: a passage of chunks, or a page of a paged document


VERSIONS = ("auto", "latest", "all")  # auto: latest unless the query names a version or a date


@dataclass(frozen=True)
class VersionRef:
    """A copy of a passage's text: an identical passage (in another document, or elsewhere in the
    same one) collapsed into the hit that stands for it. ``start_char``/``end_char`` locate the copy
    in its document (None when not known), so whoever scores or cites the hit can use every copy."""

    doc_id: str
    source_uri: str = ""
    version: str = ""
    updated_at: str = ""
    chunk_id: str = ""
    start_char: int | None = None
    end_char: int | None = None

    def to_dict(self) -> dict:
        return {"doc_id": self.doc_id, "source_uri": self.source_uri, "version": self.version,
                "updated_at": self.updated_at, "chunk_id": self.chunk_id, "start_char": self.start_char,
                "end_char": self.end_char}

    @property
    def key(self) -> tuple:
        """What makes two references the same copy."""
        return (self.doc_id, self.chunk_id) if self.chunk_id else (self.doc_id, self.start_char, self.end_char)


def copies(refs, own_doc: str, own_ids=(), span: tuple[int, int] | None = None) -> tuple[VersionRef, ...]:
    """``refs`` without repeats and without the copies a passage already holds: those among its own
    chunk ids, or in its own document inside its ``span``."""
    out: dict[tuple, VersionRef] = {}
    for v in refs:
        if v.chunk_id and v.chunk_id in own_ids:
            continue
        if v.doc_id == own_doc and (span is None or v.start_char is None
                                    or (span[0] <= v.start_char and v.end_char <= span[1])):
            continue
        out.setdefault(v.key, v)
    return tuple(out.values())


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
    boxes: tuple[tuple, ...] = ()  # (page, x0, top, x1, bottom): where the chunk is on its pages (PDF)


@dataclass(frozen=True)
class HitChunk:
    """The best-ranked retrieved chunk inside a passage: what a result points at. The rest of the
    passage (merged hits, expansion) is context around it."""

    chunk_id: str
    start_char: int
    end_char: int
    text: str
    heading_path: tuple[str, ...] = ()
    page: int | None = None
    boxes: tuple[tuple, ...] = ()  # (page, x0, top, x1, bottom) in points from the page's top left (PDF)

    def to_dict(self) -> dict:
        return {"chunk_id": self.chunk_id, "start_char": self.start_char, "end_char": self.end_char,
                "heading_path": list(self.heading_path), "page": self.page,
                "boxes": [list(b) for b in self.boxes], "text": self.text}


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
    hit: HitChunk | None = None  # the chunk this result points at (None: built without one, e.g. a test)

    @property
    def versions(self) -> tuple[VersionRef, ...]:
        """The documents this passage's text was found in: its own first, then each other document an
        identical passage was collapsed from (once per document; ``also_in`` has every copy)."""
        own = VersionRef(self.doc_id, self.source_uri, self.version, self.updated_at, self.chunk_ids[0],
                         self.start_char, self.end_char)
        seen, out = {self.doc_id}, [own]
        for v in self.also_in:
            if v.doc_id not in seen:
                seen.add(v.doc_id)
                out.append(v)
        return tuple(out)

    @property
    def best(self) -> HitChunk:
        """The hit chunk (the whole passage when the passage was built without one)."""
        if self.hit is not None:
            return self.hit
        return HitChunk(self.best_chunk_id or self.chunk_ids[0], self.start_char, self.end_char, self.text,
                        self.heading_path, self.page)

    def context(self) -> tuple[str, str]:
        """(before, after): the passage's text on either side of its hit chunk's text."""
        hit = self.best
        if hit.text == self.text:
            return "", ""
        at = _locate(self.text, hit.text, hit.start_char - self.start_char)
        if at < 0:
            return "", ""
        return self.text[:at], self.text[at + len(hit.text):]

    @property
    def span(self) -> tuple[str, int, int]:
        return (self.doc_id, self.start_char, self.end_char)


def _locate(text: str, piece: str, guess: int) -> int:
    """Where ``piece`` sits in ``text`` (a passage's text is its chunks' texts stitched, so each
    chunk's text is in it whole); the occurrence nearest ``guess`` when it is there more than once."""
    found, at = [], text.find(piece)
    while at >= 0 and len(found) < 64:
        found.append(at)
        at = text.find(piece, at + 1)
    return min(found, key=lambda i: abs(i - guess)) if found else -1


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
    per: str = "passage"  # what k counted: passages, or distinct documents (results grouped by document)
    # documents the caller may not read all of: their positions are left out of ``to_dict`` (retrieve/positions.py)
    withheld: frozenset = frozenset()

    def to_dict(self) -> dict:
        """The JSON of ``search --json`` and the server. Each result leads with what it points at:
        ``hit`` (its best chunk: heading path, offsets, text), then ``context`` (the passage's text
        before and after the hit) and ``marks`` (spans of the query's ``terms`` in ``hit.text`` and
        in each side of the context, found by the search analyzer: see ``chunkwise.highlight``).
        ``document_rank``: the rank of the result's document among the results' distinct documents
        (with ``per`` "document", results come grouped by it)."""
        wanted = terms(self.query)
        docs: dict[str, int] = {}
        for p in self.passages:
            docs.setdefault(p.doc_id, len(docs) + 1)
        return {
            "query": self.query,
            "mode": self.mode,
            "per": self.per,
            "terms": list(wanted),
            "results": [_result(i + 1, p, wanted, docs[p.doc_id], self.withheld) for i, p in enumerate(self.passages)],
            "context_tokens": self.context_tokens,
            "omitted": [{"chunk_ids": list(o.chunk_ids), "reason": o.reason,
                         "detail": without_chars(o.detail) if self.withheld else o.detail, "passage": o.passage}
                        for o in self.omitted],
        }


def _result(rank: int, p: Passage, wanted: tuple[str, ...], document_rank: int, withheld=frozenset()) -> dict:
    out = _plain_result(rank, p, wanted, document_rank)
    if not withheld:
        return out
    ref = lambda v: hide_span(v) if v["doc_id"] in withheld else v  # noqa: E731
    out.update(versions=[ref(v) for v in out["versions"]], also_in=[ref(v) for v in out["also_in"]])
    if p.doc_id in withheld:
        out = {**hide_span(out), "hit": hide_span(out["hit"])}
    return out


def _plain_result(rank: int, p: Passage, wanted: tuple[str, ...], document_rank: int) -> dict:
    before, after = p.context()
    hit = p.best
    return {
        "rank": rank,
        "document_rank": document_rank,
        "doc_id": p.doc_id,
        "source_uri": p.source_uri,
        "hit": hit.to_dict(),
        "context": {"before": before, "after": after},
        "marks": {name: [[s, e] for s, e in spans(text, wanted)]
                  for name, text in (("hit", hit.text), ("before", before), ("after", after))},
        "chunk_id": p.chunk_ids[0],
        "chunk_ids": list(p.chunk_ids),
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
        "also_in": [v.to_dict() for v in p.also_in],
        "superseded_by": list(p.superseded_by),
    }
