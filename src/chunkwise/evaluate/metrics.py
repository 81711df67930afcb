"""Retrieval and chunking metrics as small pure functions over plain tuples.

Everything is scored on what a reader would be handed: *passages* are ``(doc, start, end)`` or
``(doc, start, end, text)`` tuples in rank order, after any merging or neighbour expansion, not chunk
ids. Spans (the golden answers) are ``(doc, start, end)`` tuples too (``golden.Span`` is one). The
unit of "holding" an answer is the whole span: a passage with half an answer is a half-answer, which
seed 001 shows is the typical failure of a boundary cut, and is counted separately.

Aggregates take ``results``: one ``(spans, passages)`` pair per question.
"""
from __future__ import annotations

import bisect
import math
import re
from dataclasses import dataclass
from os import PathLike
from pathlib import Path
from typing import Callable, Iterable, Mapping, Sequence

Range = tuple  # (doc, start, end[, text])
Measure = Callable[[str, int, int], float]
Results = Iterable[tuple[Sequence[Range], Sequence[Range]]]


def chars(doc: str, start: int, end: int) -> float:
    """The default measure: characters (what Chroma's evaluation code counts)."""
    return max(end - start, 0)


def holds(passage: Range, span: Range) -> bool:
    """``passage`` contains all of ``span`` (same document)."""
    return passage[0] == span[0] and passage[1] <= span[1] and span[2] <= passage[2]


def touches(passage: Range, span: Range) -> bool:
    """``passage`` shares at least one character with ``span``."""
    return passage[0] == span[0] and passage[1] < span[2] and span[1] < passage[2]


# --- chunk layout (retriever-free) -------------------------------------------------------------

def span_fits(spans: Sequence[Range], chunks: Iterable[Range]) -> list[bool]:
    """Per span: does some single chunk hold it whole? Sorted once, then a bisect per span."""
    by_doc: dict[str, list[tuple[int, int]]] = {}
    for c in chunks:
        by_doc.setdefault(c[0], []).append((c[1], c[2]))
    index = {}
    for doc, rs in by_doc.items():
        rs.sort()
        starts, best, top = [], [], -1
        for s, e in rs:
            top = max(top, e)
            starts.append(s)
            best.append(top)
        index[doc] = (starts, best)
    out = []
    for doc, s, e, *_ in spans:
        starts, best = index.get(doc, ((), ()))
        i = bisect.bisect_right(starts, s)  # chunks starting at or before the span
        out.append(i > 0 and best[i - 1] >= e)
    return out


def fits(spans: Sequence[Range], chunks: Iterable[Range]) -> bool:
    """Every span of the question sits whole inside some chunk (not necessarily the same one)."""
    return all(span_fits(spans, chunks))


def straddle_rate(spans: Sequence[Range], chunks: Iterable[Range]) -> float:
    """Fraction of spans no single chunk holds: cut by a boundary, so no retriever can return them whole."""
    flags = span_fits(spans, chunks)
    return (len(flags) - sum(flags)) / len(flags) if flags else 0.0


# --- ranking -------------------------------------------------------------------------------------

def page_rank(pages: Sequence[tuple[str, int]], results: Sequence[tuple[str, int | None, int | None]]) -> int | None:
    """The 1-based rank of the first result (doc, first page, last page) on one of ``pages``, or None."""
    wanted = set(pages)
    for r, (doc, first, last) in enumerate(results, 1):
        if first is not None and any((doc, p) in wanted for p in range(first, (last or first) + 1)):
            return r
    return None


def answered_rank(spans: Sequence[Range], passages: Sequence[Range]) -> int | None:
    """The smallest r such that the top r passages hold every span whole (1-based), or None."""
    need = list(range(len(spans)))
    if not need:
        return None
    for r, p in enumerate(passages, 1):
        need = [i for i in need if not holds(p, spans[i])]
        if not need:
            return r
    return None


def hit(rank: int | None, k: int) -> bool:
    """An answer completed at ``rank`` (``answered_rank``; None: never) counts for recall@``k``."""
    return rank is not None and rank <= k


def reciprocal_rank(rank: int | None) -> float:
    """1/rank, 0 for an unanswered question: the per-question term of MRR."""
    return 1 / rank if rank else 0.0


def intact_in_top_k(spans: Sequence[Range], passages: Sequence[Range], k: int) -> bool:
    """Every answer span is held whole by some passage among the first ``k``."""
    return hit(answered_rank(spans, passages), k)


def recall_at_k(results: Results, k: int) -> float:
    """Fraction of questions answered (every span whole in one passage) within the top ``k``."""
    flags = [intact_in_top_k(s, p, k) for s, p in results]
    return sum(flags) / len(flags) if flags else 0.0


def mrr(results: Results) -> float:
    """Mean reciprocal of ``answered_rank`` (0 for unanswered questions)."""
    ranks = [answered_rank(s, p) for s, p in results]
    return sum(map(reciprocal_rank, ranks)) / len(ranks) if ranks else 0.0


def half_answer(spans: Sequence[Range], passages: Sequence[Range]) -> bool:
    """The top passage touches an answer span but cuts it: the right place, an incomplete answer."""
    if not passages:
        return False
    top = passages[0]
    return any(touches(top, s) and not holds(top, s) for s in spans)


def half_answer_rate(results: Results) -> float:
    flags = [half_answer(s, p) for s, p in results]
    return sum(flags) / len(flags) if flags else 0.0


# --- overlap scores (Chroma's evaluation, any unit) ----------------------------------------------

@dataclass(frozen=True, slots=True)
class Overlap:
    """One question's overlap scores and the quantities behind them (in the measure's unit)."""

    recall: float
    precision: float
    iou: float
    covered: float  # answer units inside some passage (each counted once)
    retrieved: float  # sum over passages (overlapping passages counted twice)
    relevant: float  # sum over spans


def union(ranges: Iterable[tuple[int, int]]) -> list[tuple[int, int]]:
    """Merge overlapping (or touching) half-open ranges."""
    out: list[list[int]] = []
    for s, e in sorted(ranges):
        if out and s <= out[-1][1]:
            out[-1][1] = max(out[-1][1], e)
        else:
            out.append([s, e])
    return [(s, e) for s, e in out]


def _minus(span: tuple[int, int], cover: Sequence[tuple[int, int]]) -> list[tuple[int, int]]:
    s, e = span
    rest = []
    for cs, ce in cover:  # cover is sorted and disjoint
        if ce <= s or cs >= e:
            continue
        if cs > s:
            rest.append((s, cs))
        s = max(s, ce)
    if s < e:
        rest.append((s, e))
    return rest


def overlap_scores(spans: Sequence[Range], passages: Sequence[Range], measure: Measure = chars) -> Overlap:
    """Recall, precision and IoU of the passages against the answer spans, the way Chroma's evaluation
    computes them: recall = covered / Σ|span|, precision = covered / Σ|passage| (repeats and passages
    from other documents count), IoU = covered / (Σ|passage| + uncovered answer). ``measure(doc, s, e)``
    sizes a range (characters by default; see ``unit_measure`` for tokens) and must add up over
    disjoint ranges. Zero denominators give 0, as in Chroma's code."""
    hits: dict[str, list[tuple[int, int]]] = {}
    for p in passages:
        for sp in spans:
            if p[0] == sp[0]:
                s, e = max(p[1], sp[1]), min(p[2], sp[2])
                if s < e:
                    hits.setdefault(p[0], []).append((s, e))
    cover = {doc: union(rs) for doc, rs in hits.items()}
    covered = sum(measure(doc, s, e) for doc, rs in cover.items() for s, e in rs)
    relevant = sum(measure(sp[0], sp[1], sp[2]) for sp in spans)
    retrieved = sum(measure(p[0], p[1], p[2]) for p in passages)
    unused = sum(measure(sp[0], s, e) for sp in spans for s, e in _minus((sp[1], sp[2]), cover.get(sp[0], ())))
    return Overlap(
        recall=covered / relevant if relevant else 0.0,
        precision=covered / retrieved if retrieved else 0.0,
        iou=covered / (retrieved + unused) if retrieved + unused else 0.0,
        covered=covered,
        retrieved=retrieved,
        relevant=relevant,
    )


def unit_measure(starts: Mapping[str, Sequence[int]]) -> Measure:
    """A measure counting units (e.g. tokens) by their start offsets: ``[s, e)`` holds the units that
    start inside it. Build ``starts`` with a sizer: ``{doc: sizer.spans(text)[0]}``."""
    table = {doc: list(v) for doc, v in starts.items()}

    def measure(doc: str, start: int, end: int) -> float:
        xs = table.get(doc)
        if xs is None:
            raise KeyError(f"no unit offsets for document {doc!r}; build the measure with every document")
        return bisect.bisect_left(xs, end) - bisect.bisect_left(xs, start) if end > start else 0

    return measure


def token_measure(texts: Mapping[str, str], sizer) -> Measure:
    """``unit_measure`` over the tokens of ``sizer`` (a chunkwise Sizer) for every document."""
    return unit_measure({doc: sizer.for_text(text).spans(text)[0] for doc, text in texts.items()})


# --- index and context -------------------------------------------------------------------------

def index_inflation(chunks: Iterable[Range], doc_lengths: Mapping[str, int], measure: Measure = chars) -> float:
    """Stored units over source units: 1.0 without overlap, S/(S-O) for windows of S with overlap O."""
    total = sum(measure(doc, 0, n) for doc, n in doc_lengths.items())
    stored = sum(measure(c[0], c[1], c[2]) for c in chunks)
    return stored / total if total else 0.0


@dataclass(frozen=True, slots=True)
class SizeStats:
    count: int
    mean: float
    max: float


def size_stats(sizes: Iterable[float]) -> SizeStats:
    """Chunk count, mean and max size (in whatever unit the sizes are)."""
    xs = list(sizes)
    return SizeStats(len(xs), sum(xs) / len(xs) if xs else 0.0, max(xs) if xs else 0)


_SENTENCE_END = re.compile(r"[.!?\u2026\u3002\uff01\uff1f\u061f\u0964][\"'\u201d\u2019)\]}\u00bb*_`]*\s*\Z")


def boundary_coherence(texts: Iterable[str]) -> float:
    """Fraction of chunks whose text ends at sentence-final punctuation (closing quotes or brackets
    after it allowed, trailing whitespace ignored): a chunk that ends mid-sentence cuts a thought."""
    flags = [bool(_SENTENCE_END.search(t)) for t in texts]
    return sum(flags) / len(flags) if flags else 0.0


def duplicate_rate(passages: Sequence[Range], k: int | None = None) -> float:
    """Fraction of the characters in the top ``k`` passages that an earlier passage already returned."""
    ps = list(passages[:k] if k else passages)
    total = sum(max(p[2] - p[1], 0) for p in ps)
    if not total:
        return 0.0
    by_doc: dict[str, list[tuple[int, int]]] = {}
    for p in ps:
        by_doc.setdefault(p[0], []).append((p[1], p[2]))
    distinct = sum(e - s for rs in by_doc.values() for s, e in union(rs))
    return (total - distinct) / total


def passage_text(passage: Range, texts: Mapping[str, str] | None = None) -> str:
    passage = tuple(passage)
    if len(passage) > 3:
        return passage[3]
    if texts is None:
        raise ValueError("passage carries no text; pass the documents' texts")
    return texts[passage[0]][passage[1]:passage[2]]


def context_tokens(passages: Sequence[Range], count: Callable[[str], int],
                   texts: Mapping[str, str] | None = None) -> int:
    """Tokens sent to the reader: ``count`` of each passage's text (its 4th element, or the slice)."""
    return sum(count(passage_text(p, texts)) for p in passages)


def percentile(values: Iterable[float], q: float) -> float:
    """Linear-interpolated percentile (numpy's default method); ``q`` in 0..100."""
    xs = sorted(values)
    if not xs:
        return 0.0
    if not 0 <= q <= 100:
        raise ValueError(f"percentile must be within 0..100, got {q}")
    pos = (len(xs) - 1) * q / 100
    lo, hi = math.floor(pos), math.ceil(pos)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)


def latency_p50(seconds: Iterable[float]) -> float:
    """Median retrieval latency."""
    return percentile(seconds, 50)


def index_bytes(texts: Iterable[str], vectors: int = 0, dim: int = 0, bytes_per_value: int = 4) -> int:
    """Payload of an in-memory index: UTF-8 chunk texts plus ``vectors`` x ``dim`` floats."""
    return sum(len(t.encode("utf-8")) for t in texts) + vectors * dim * bytes_per_value


def store_bytes(path: str | PathLike) -> int:
    """Bytes on disk of an SQLite store, its write-ahead log and shared-memory file included."""
    p = Path(path)
    return sum(q.stat().st_size for q in (p, Path(f"{p}-wal"), Path(f"{p}-shm")) if q.is_file())


# --- one question, all scores --------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class QuestionScores:
    rank: int | None
    half_answer: bool
    overlap: Overlap
    duplicate_rate: float
    passages: int


def score_question(spans: Sequence[Range], passages: Sequence[Range], measure: Measure = chars,
                   copies: Sequence[Sequence[Range]] | None = None) -> QuestionScores:
    """All scores of one question. ``copies[i]``: the ranges passage i stands for besides its own
    (identical passages search collapsed into it, ``Passage.also_in``): each copy counts at that
    passage's rank and in the overlap scores, as the separate hit it would have been uncollapsed."""
    if not copies or not any(copies):
        return QuestionScores(
            rank=answered_rank(spans, passages),
            half_answer=half_answer(spans, passages),
            overlap=overlap_scores(spans, passages, measure),
            duplicate_rate=duplicate_rate(passages),
            passages=len(passages),
        )
    slots = [[p, *(copies[i] if i < len(copies) else ())] for i, p in enumerate(passages)]
    return QuestionScores(
        rank=slot_rank(spans, slots),
        half_answer=bool(slots) and any(any(touches(r, s) for r in slots[0]) and not any(holds(r, s) for r in slots[0])
                                        for s in spans),
        overlap=overlap_scores(spans, [r for slot in slots for r in slot], measure),
        duplicate_rate=duplicate_rate(passages),
        passages=len(passages),
    )


def slot_rank(spans: Sequence[Range], slots: Sequence[Sequence[Range]]) -> int | None:
    """``answered_rank`` where result r is a set of ranges (a passage and its copies): the smallest r
    such that the top r results hold every span whole in one of their ranges."""
    need = list(range(len(spans)))
    if not need:
        return None
    for r, slot in enumerate(slots, 1):
        need = [i for i in need if not any(holds(p, spans[i]) for p in slot)]
        if not need:
            return r
    return None


def summarise(scores: Sequence[QuestionScores], ks: Sequence[int] = (1, 3, 5, 10)) -> dict[str, float]:
    """Means over questions: recall@k, MRR, half-answer rate, overlap recall/precision/IoU, duplicates."""
    n = len(scores)
    if not n:
        return {}
    out = {f"recall@{k}": sum(hit(s.rank, k) for s in scores) / n for k in ks}
    out["mrr"] = sum(reciprocal_rank(s.rank) for s in scores) / n
    out["half_answer_rate"] = sum(s.half_answer for s in scores) / n
    out["overlap_recall"] = sum(s.overlap.recall for s in scores) / n
    out["overlap_precision"] = sum(s.overlap.precision for s in scores) / n
    out["overlap_iou"] = sum(s.overlap.iou for s in scores) / n
    out["duplicate_rate"] = sum(s.duplicate_rate for s in scores) / n
    out["passages"] = sum(s.passages for s in scores) / n
    return out
