"""Hits -> bounded passages: the units context assembly sends.

Overlapping or consecutive hits of one document are one piece of evidence and are sent once, as one
passage. Unbounded, such a passage grows with every hit that touches it: a transcript whose turns
all match became one passage of most of the document (11 chunks, 2,284 tokens), which a budget then
dropped whole, with the top-ranked chunk inside it (issue 15). So a passage grows around its best-ranked
chunk (its *seed*) only while its text stays within the *passage budget*; a hit that would push it
over starts a passage of its own when it only touches it, and is reported (``passage_budget``) when
it overlaps it (its text would be sent twice). Hits are consumed in rank order until ``k`` distinct
passages exist, so a hit ranked below the k-th passage's seed never grows a passage above it.

The input is an ordered, permission-filtered hit list, whatever produced it (a ranker, a step that
collapses versions, a test); nothing here reads a store.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Callable, Iterable, Sequence

from chunkwise.errors import ConfigError
from chunkwise.retrieve.merge import stitch
from chunkwise.retrieve.types import Hit, HitChunk, Omission, Passage, VersionRef, copies

DEFAULT_PASSAGE_BUDGET = 512  # tokens of one merged passage: 2-4 chunks of the usual 128-256


def check_passage_budget(value: int | None) -> int | None:
    if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
        raise ConfigError(f"passage budget must be a positive number of tokens (or none for unbounded), got {value!r}")
    return value


@dataclass(frozen=True)
class Piece:
    """One chunk inside a passage. ``rank`` is its rank as a hit; ``None`` when an expansion added it."""

    chunk_id: str
    chunk_index: int
    start_char: int
    end_char: int
    text: str
    heading_path: tuple[str, ...] = ()
    page: int | None = None
    acl: tuple[str, ...] = ()
    section_id: str = ""
    rank: int | None = None
    also_in: tuple[VersionRef, ...] = ()  # identical passages (their documents and offsets) collapsed into this hit
    boxes: tuple[tuple, ...] = ()  # where the chunk is on its pages (PDF)

    @classmethod
    def of_hit(cls, h: Hit) -> "Piece":
        return cls(h.chunk_id, h.chunk_index, h.start_char, h.end_char, h.text, h.heading_path, h.page, h.acl,
                   h.section_id, h.rank, h.also_in, h.boxes)

    @classmethod
    def of_row(cls, r) -> "Piece":
        """A chunk an expansion added (a ``retrieve.index.Item``)."""
        return cls(r.chunk_id, r.chunk_index, r.start_char, r.end_char, r.text, r.heading_path, r.page, r.acl,
                   r.section_id, None, boxes=r.boxes)

    @property
    def retrieved(self) -> bool:
        return self.rank is not None


def overlaps(a_start: int, a_end: int, b_start: int, b_end: int) -> bool:
    return a_start < b_end and b_start < a_end


@dataclass(frozen=True)
class Group:
    """A passage before assembly: contiguous pieces of one document (sorted by offset), the hit
    that seeds it, and which expansion (if any) added the pieces that were not hits. ``whole``: the
    added pieces are sent all together or not at all (an enclosing section)."""

    doc_id: str
    source_uri: str
    source_version: str
    seed: str
    rank: int
    score: float
    pieces: tuple[Piece, ...]
    expansion: str = "none"
    whole: bool = False
    version: str = ""  # the document's version label, date and newer versions (retrieve/versions.py)
    updated_at: str = ""
    superseded_by: tuple[str, ...] = ()

    @property
    def start_char(self) -> int:
        return min(p.start_char for p in self.pieces)

    @property
    def end_char(self) -> int:
        return max(p.end_char for p in self.pieces)

    @property
    def seed_index(self) -> int:
        return next(i for i, p in enumerate(self.pieces) if p.chunk_id == self.seed)

    @property
    def retrieved_ids(self) -> tuple[str, ...]:
        return tuple(p.chunk_id for p in self.pieces if p.retrieved)

    def overlaps(self, doc_id: str, start: int, end: int) -> bool:
        return doc_id == self.doc_id and overlaps(self.start_char, self.end_char, start, end)

    def passage(self, pieces: Sequence[Piece] | None = None) -> Passage:
        """The passage of ``pieces`` (a contiguous part holding the seed; default: all of them)."""
        run = sorted(self.pieces if pieces is None else pieces, key=lambda p: (p.start_char, p.end_char))
        first = run[0]
        grown = any(not p.retrieved for p in run)
        return Passage(
            doc_id=self.doc_id, start_char=first.start_char, end_char=max(p.end_char for p in run), rank=self.rank,
            score=self.score, text=stitch([(p.start_char, p.end_char, p.text) for p in run]),
            chunk_ids=tuple(p.chunk_id for p in run), source_uri=self.source_uri, heading_path=first.heading_path,
            page=first.page, acl=tuple(sorted({t for p in run for t in p.acl})),
            expanded_from=tuple(p.chunk_id for p in run if p.retrieved) if grown else (),
            section_id=first.section_id if all(p.section_id == first.section_id for p in run) else "",
            source_version=self.source_version,
            chunk_range=(min(p.chunk_index for p in run), max(p.chunk_index for p in run)),
            best_chunk_id=self.seed,
            version=self.version, updated_at=self.updated_at,
            also_in=copies((v for p in run for v in p.also_in), self.doc_id, {p.chunk_id for p in run},
                           (first.start_char, max(p.end_char for p in run))),
            superseded_by=self.superseded_by, hit=self.hit_chunk(run),
        )

    def hit_chunk(self, run: Sequence[Piece]) -> HitChunk | None:
        """The seed among ``run`` as the chunk the passage points at."""
        seed = next((p for p in run if p.chunk_id == self.seed), None)
        if seed is None:
            return None
        return HitChunk(seed.chunk_id, seed.start_char, seed.end_char, seed.text, seed.heading_path, seed.page,
                        seed.boxes)


@dataclass(frozen=True)
class Grouping:
    groups: tuple[Group, ...]  # best seed first
    rest: tuple[Hit, ...]  # hits not consumed: ranked below the k-th passage's seed
    omitted: tuple[Omission, ...]


class _Run:
    """A group being built (mutable while hits are consumed)."""

    def __init__(self, h: Hit) -> None:
        self.doc_id, self.source_uri, self.source_version = h.doc_id, h.source_uri, h.source_version
        self.seed = h
        self.pieces = [Piece.of_hit(h)]

    @property
    def start(self) -> int:
        return min(p.start_char for p in self.pieces)

    @property
    def end(self) -> int:
        return max(p.end_char for p in self.pieces)

    def overlaps(self, h: Hit) -> bool:
        return h.doc_id == self.doc_id and overlaps(self.start, self.end, h.start_char, h.end_char)

    def contains(self, h: Hit) -> bool:
        return h.doc_id == self.doc_id and self.start <= h.start_char and h.end_char <= self.end

    def touches(self, h: Hit) -> bool:
        """Spans meet, or the chunks are consecutive: chunk spans are trimmed of the whitespace
        between them, so neighbours rarely share an offset, yet only whitespace (or a heading line
        the contextual header carries) lies between them."""
        if h.doc_id != self.doc_id:
            return False
        if h.start_char == self.end or h.end_char == self.start:
            return True
        indexes = [p.chunk_index for p in self.pieces]
        return (h.source_version == self.source_version and min(indexes) >= 0
                and h.chunk_index in (min(indexes) - 1, max(indexes) + 1))

    def group(self) -> Group:
        pieces = tuple(sorted(self.pieces, key=lambda p: (p.start_char, p.end_char, p.chunk_id)))
        return Group(self.doc_id, self.source_uri, self.source_version, self.seed.chunk_id, self.seed.rank,
                     self.seed.score, pieces, version=self.seed.version, updated_at=self.seed.updated_at,
                     superseded_by=self.seed.superseded_by)


def _text(pieces: Iterable[Piece]) -> str:
    run = sorted(pieces, key=lambda p: (p.start_char, p.end_char))
    return stitch([(p.start_char, p.end_char, p.text) for p in run])


def group_hits(hits: Sequence[Hit], k: int | None, measure: Callable[[str], int],
               passage_budget: int | None = DEFAULT_PASSAGE_BUDGET, *,
               fixed: Sequence[tuple[str, int, int]] = (), by_page: bool = False) -> Grouping:
    """Hits (any order; taken by rank) -> at most ``k`` non-overlapping groups, each grown around its
    best hit while its text is within ``passage_budget`` tokens (one hit alone is never split).
    ``fixed``: (doc, start, end) spans already sent; a hit overlapping one is left out. ``by_page``:
    consecutive hits on different pages stay apart (results are pages)."""
    runs: list[_Run] = []
    notes: list[Omission] = []
    order = sorted(hits, key=lambda h: (h.rank, -h.score, h.chunk_id))
    seen: set[str] = set()

    def fits(pieces: Iterable[Piece]) -> bool:
        return passage_budget is None or measure(_text(pieces)) <= passage_budget

    for i, h in enumerate(order):
        if h.chunk_id in seen:
            continue
        if any(d == h.doc_id and overlaps(s, e, h.start_char, h.end_char) for d, s, e in fixed):
            continue
        piece = Piece.of_hit(h)
        inside = next((r for r in runs if r.contains(h)), None)
        if inside is not None:  # adds no text (an overlapping window already covered)
            inside.pieces.append(piece)
            seen.add(h.chunk_id)
            continue
        near = [r for r in runs if r.overlaps(h) or (r.touches(h) and (not by_page or r.seed.page == h.page))]
        if near and fits([piece, *(p for r in near for p in r.pieces)]):
            keep = min(near, key=lambda r: (r.seed.rank, -r.seed.score))
            for r in near:
                if r is not keep:
                    keep.pieces.extend(r.pieces)
                    runs.remove(r)
            keep.pieces.append(piece)
            seen.add(h.chunk_id)
            continue
        joined = False
        for r in sorted(near, key=lambda r: (r.seed.rank, -r.seed.score)):
            if any(o is not r and o.overlaps(h) for o in near):
                continue  # joining r would still send text of another passage twice
            if fits([*r.pieces, piece]):
                r.pieces.append(piece)
                joined = True
                break
        if joined:
            seen.add(h.chunk_id)
            continue
        if any(r.overlaps(h) for r in near):
            seen.add(h.chunk_id)
            notes.append(Omission((h.chunk_id,), "passage_budget",
                                  f"{h.doc_id} chars {h.start_char}-{h.end_char} overlaps a passage already at its "
                                  f"{passage_budget}-token passage budget (raise --passage-budget to merge it)"))
            continue
        if k is not None and len(runs) >= k:
            return Grouping(_ordered(runs), tuple(order[i:]), tuple(notes))
        runs.append(_Run(h))
        seen.add(h.chunk_id)
    return Grouping(_ordered(runs), (), tuple(notes))


def _ordered(runs: Sequence[_Run]) -> tuple[Group, ...]:
    return tuple(sorted((r.group() for r in runs), key=lambda g: (g.rank, -g.score, g.doc_id, g.start_char)))


def contiguous_around(pieces: Sequence[Piece], seed: str) -> tuple[Piece, ...]:
    """The run of ``pieces`` through ``seed`` in which each piece overlaps, meets or directly follows
    (by chunk index) what comes before it: one passage with no hole in it."""
    run = sorted(pieces, key=lambda p: (p.start_char, p.end_char, p.chunk_id))
    parts: list[list[Piece]] = []
    reach, last = -1, -2
    for p in run:
        if parts and (p.start_char <= reach or (last >= 0 and p.chunk_index == last + 1)):
            parts[-1].append(p)
        else:
            parts.append([p])
        reach, last = max(reach, p.end_char), max(last, p.chunk_index)
    return tuple(next(part for part in parts if any(p.chunk_id == seed for p in part)))


def with_pieces(g: Group, pieces: Sequence[Piece], expansion: str, whole: bool) -> Group:
    return replace(g, pieces=contiguous_around(pieces, g.seed), expansion=expansion, whole=whole)
