"""merge_hits: overlapping or touching hits of one document become one passage.

With overlap, neighbouring windows hold the same sentences, so a top-k of chunks carries fewer
distinct pieces of evidence than k (seed 001: at S=100, O=50 the top-5 holds duplicates). Merging
keeps the best rank of the hits it absorbs; callers over-fetch, merge, then cut to k passages.
"""
from __future__ import annotations

from typing import Iterable, Sequence

from chunkwise.retrieve.types import Hit, HitChunk, Passage, copies


def stitch(pieces: Sequence[tuple[int, int, str]]) -> str:
    """Join texts of spans sorted by start, writing characters shared by two overlapping spans once.

    Texts are normalised slices, so the shared part is found on the texts themselves: the longest
    suffix of the text so far that is a prefix of the next one, looked for first near the length
    the character offsets predict."""
    out = ""
    end = None
    for start, stop, text in pieces:
        if end is None:
            out, end = text, stop
            continue
        if start == end:  # touching: the source has nothing between them
            out, end = out + text, stop
            continue
        if start > end:  # a gap the chunker left out (whitespace between blocks): keep words apart
            sep = "" if out.endswith(("\n", " ")) or text.startswith(("\n", " ")) else ("\n\n" if start - end > 1 else " ")
            out, end = out + sep + text, stop
            continue
        if stop <= end:  # wholly inside what is already there
            continue
        out += text[_shared(out, text, end - start):]
        end = stop
    return out


def _shared(a: str, b: str, guess: int) -> int:
    limit = min(len(a), len(b))
    for j in sorted(range(max(0, guess - 8), min(limit, guess + 8) + 1), key=lambda j: abs(j - guess)):
        if j and a.endswith(b[:j]):
            return j
    for j in range(limit, 0, -1):
        if a.endswith(b[:j]):
            return j
    return 0


def to_passage(hit: Hit) -> Passage:
    return Passage(hit.doc_id, hit.start_char, hit.end_char, hit.rank, hit.score, hit.text, (hit.chunk_id,),
                   hit.source_uri, hit.heading_path, hit.page, hit.acl, (), hit.section_id, hit.source_version,
                   (hit.chunk_index, hit.chunk_index), hit.chunk_id, hit.version, hit.updated_at, hit.also_in,
                   hit.superseded_by, HitChunk(hit.chunk_id, hit.start_char, hit.end_char, hit.text,
                                               hit.heading_path, hit.page, hit.boxes))


def _touching(run: list[Passage], p: Passage) -> bool:
    """Spans meet, or the chunks are consecutive: chunk spans are trimmed of the whitespace between
    them, so neighbours in a document rarely share an offset, yet nothing but whitespace (or a heading
    line the contextual header carries) lies between them."""
    reach = max(q.end_char for q in run)
    if p.start_char <= reach:
        return True
    last = max(q.chunk_range[1] for q in run)
    return last >= 0 and p.chunk_range[0] == last + 1 and all(q.source_version == p.source_version for q in run)


def merge_passages(passages: Iterable[Passage], *, touch: bool = True) -> list[Passage]:
    """Merge passages of one document that overlap (or touch, when ``touch``), in rank order.

    A merged passage takes the best rank and score, the union of chunk ids, the heading path and
    page of its first piece, and the union of the access tags."""
    by_doc: dict[str, list[Passage]] = {}
    for p in passages:
        by_doc.setdefault(p.doc_id, []).append(p)
    out: list[Passage] = []
    for group in by_doc.values():
        group.sort(key=lambda p: (p.start_char, p.end_char, p.rank))
        run = [group[0]]
        for p in group[1:]:
            reach = max(q.end_char for q in run)
            if p.start_char < reach or (touch and _touching(run, p)):
                run.append(p)
            else:
                out.append(_combine(run))
                run = [p]
        out.append(_combine(run))
    out.sort(key=lambda p: (p.rank, -p.score, p.doc_id, p.start_char))
    return out


def _combine(run: list[Passage]) -> Passage:
    if len(run) == 1:
        return run[0]
    best = min(run, key=lambda p: (p.rank, -p.score))
    first = run[0]
    ids: list[str] = []
    for p in run:
        ids.extend(c for c in p.chunk_ids if c not in ids)
    grown: list[str] = []
    for p in run:
        grown.extend(c for c in p.expanded_from if c not in grown)
    return Passage(
        doc_id=first.doc_id, start_char=first.start_char, end_char=max(p.end_char for p in run),
        rank=best.rank, score=best.score, text=stitch([(p.start_char, p.end_char, p.text) for p in run]),
        chunk_ids=tuple(ids), source_uri=first.source_uri, heading_path=first.heading_path, page=first.page,
        acl=tuple(sorted({t for p in run for t in p.acl})), expanded_from=tuple(grown),
        section_id=first.section_id if all(p.section_id == first.section_id for p in run) else "",
        source_version=first.source_version,
        chunk_range=(min(p.chunk_range[0] for p in run), max(p.chunk_range[1] for p in run)),
        version=first.version, updated_at=first.updated_at,
        also_in=copies((v for p in run for v in p.also_in), first.doc_id, ids,
                       (first.start_char, max(p.end_char for p in run))),
        superseded_by=tuple(sorted({d for p in run for d in p.superseded_by})),
        best_chunk_id=best.best.chunk_id, hit=best.best,
    )


def merge_hits(hits: Sequence[Hit], k: int | None = None, *, touch: bool = True) -> list[Passage]:
    """Hits → passages (best first): same-document hits whose spans overlap or touch become one
    passage keeping the best rank. With ``k``, hits are consumed in rank order until ``k`` distinct
    passages exist. Over-fetch hits (e.g. 3k) before calling this, or the merged list can come back
    shorter than ``k``."""
    passages = [to_passage(h) for h in sorted(hits, key=lambda h: h.rank)]
    if k is None:
        return merge_passages(passages, touch=touch)
    # Hits are taken in rank order only until k distinct passages exist: a hit ranked below the
    # k-th passage's first hit must not grow a passage above it (it would bring low-ranked text
    # into the context and make passages too long for a budget).
    merged: list[Passage] = []
    for i in range(len(passages)):
        trial = merge_passages(passages[: i + 1], touch=touch)
        if len(trial) > k:
            break
        merged = trial
    return merged
