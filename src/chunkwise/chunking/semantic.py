"""Semantic chunking: cut where the topic changes, never over the cap.

Sentences come from the shared finder (``boundaries.sentence_spans``: sentence and paragraph ends).
Each is embedded (batched) and every gap between neighbours gets their cosine similarity. A gap is a
topic boundary when its similarity is below ``semantic_threshold`` or, with no threshold, strictly
below the ``semantic_percentile``-th percentile (linear interpolation) of the document's
similarities — so about that share of gaps become boundaries, whatever the embedder's scale.

**Runs are regions, not candidate cuts.** The packer cuts at the furthest best candidate in reach, so
as candidates two short topics would share a chunk whenever they fit — undoing the boundary. Topic
runs are therefore packed one by one (as ``structure`` packs sections): a run under
``semantic_min_size`` units first merges with a neighbour (the one it still fits the budget with,
else the more similar one), a run that fits is one chunk, and a longer run goes to the shared packer
with paragraph and sentence ends as candidates (lines, words, units inside an over-long sentence),
which enforces the hard cap with the header included. A chunk ending at a topic boundary has level
``end`` (end of its region); ``block``/``sentence`` mark cuts made for the cap.

**Undefined similarity.** A sentence whose vector is zero (the hashing embedder on punctuation-only
text such as ``| --- |``) has no cosine. It is skipped, not scored 0: the gap after it carries the
similarity of the defined sentences on either side, so it never makes a boundary by itself. Chunks
containing such a sentence carry the reason ``undefined_similarity`` and ``needs_review``.

**Long sentences.** A sentence longer than the embedder's window (MiniLM: 256 tokens, special tokens
included) is never truncated: it is halved at whitespace until every piece fits (token counts from
the embedder's own tokenizer, one batched call per halving round), and its vector is the sum of its
unit-length piece vectors. Every token of the document feeds the signal, which a head-only
(``allow_truncation``) vector would not give — and the tail is what borders the next sentence.
"""
from __future__ import annotations

import heapq
import math
import re
from bisect import bisect_left, bisect_right
from dataclasses import replace
from functools import lru_cache
from operator import mul
from typing import Callable, Iterable, Iterator, Sequence

from chunkwise.chunking import boundaries
from chunkwise.chunking.base import BaseChunker, Draft, drafts_from_pieces
from chunkwise.chunking.levels import Level
from chunkwise.chunking.markdown import Section, parse_markdown, sections_from_blocks
from chunkwise.chunking.pack import Region
from chunkwise.chunking.sizing import Sizer
from chunkwise.config import ChunkConfig
from chunkwise.errors import ConfigError
from chunkwise.types import Chunk

UNDEFINED = "undefined_similarity"
BATCH = 64  # at most this many sentences per embed call
TOKEN_BUDGET = 1024  # padded tokens per embed call: bounds activations, keeps them in cache
_WS = re.compile(r"\s")
_LAST_WS = re.compile(r".*\s", re.S)  # greedy: ends just after the last whitespace


# -- pure core ---------------------------------------------------------------------------------------
def gap_similarities(vectors: Iterable[Sequence[float]]) -> tuple[list[float | None], list[int]]:
    """``(sims, undefined)``: ``sims[g]`` scores the gap between sentences ``g`` and ``g + 1``;
    ``undefined`` lists the sentences whose vector has no direction (zero or non-finite norm).

    Undefined sentences are skipped: the gap just before the next defined sentence gets the cosine of
    the defined sentences around them; gaps with no defined sentence on one side stay ``None``."""
    if getattr(vectors, "ndim", 0) == 2:
        return _gap_similarities_matrix(vectors)
    sims: list[float | None] = []
    undefined: list[int] = []
    prev: list[float] | None = None
    for i, v in enumerate(vectors):
        if i:
            sims.append(None)
        norm = math.hypot(*v)
        if not norm or not math.isfinite(norm):
            undefined.append(i)
            continue
        unit = [x / norm for x in v]
        if prev is not None:
            sims[i - 1] = max(-1.0, min(1.0, math.fsum(map(mul, prev, unit))))
        prev = unit
    return sims, undefined


def _gap_similarities_matrix(vectors) -> tuple[list[float | None], list[int]]:
    """``gap_similarities`` for a matrix, row-wise in numpy (float64): O(n x dim), no n x n matrix."""
    import numpy as np

    n = len(vectors)
    with np.errstate(invalid="ignore", over="ignore"):
        norms = np.sqrt(np.einsum("ij,ij->i", vectors.astype(np.float64), vectors.astype(np.float64)))
    defined = np.flatnonzero((norms > 0) & np.isfinite(norms))
    sims: list[float | None] = [None] * max(n - 1, 0)
    if len(defined) > 1:
        a, b = defined[:-1], defined[1:]
        dots = np.einsum("ij,ij->i", vectors[a].astype(np.float64), vectors[b].astype(np.float64))
        for g, c in zip((b - 1).tolist(), np.clip(dots / (norms[a] * norms[b]), -1.0, 1.0).tolist()):
            sims[g] = c
    undefined = sorted(set(range(n)) - set(defined.tolist()))
    return sims, undefined


def percentile(values: Sequence[float], p: float) -> float:
    """The ``p``-th percentile (0..100) with linear interpolation between order statistics."""
    if not values:
        raise ValueError("percentile of no values")
    v = sorted(values)
    rank = p / 100 * (len(v) - 1)
    lo = math.floor(rank)
    hi = min(lo + 1, len(v) - 1)
    return v[lo] + (v[hi] - v[lo]) * (rank - lo)


def boundary_gaps(sims: Sequence[float | None], threshold: float | None, pct: float) -> list[int]:
    """Gaps that are topic boundaries: similarity strictly below ``threshold``, or below the ``pct``
    percentile of the defined similarities when ``threshold`` is None. ``None`` never qualifies."""
    defined = [s for s in sims if s is not None]
    if not defined:
        return []
    limit = threshold if threshold is not None else percentile(defined, pct)
    return [g for g, s in enumerate(sims) if s is not None and s < limit]


def merge_small(sizes: Sequence[int], sims: Sequence[float], min_size: int, budget: int) -> list[int]:
    """Merge runs smaller than ``min_size`` into a neighbour; return the indices of the kept
    boundaries (boundary ``b`` separates run ``b`` from run ``b + 1``; ``sims[b]`` is its similarity).

    The smallest run goes first (leftmost on ties). It joins the neighbour it still fits ``budget``
    with; if both or neither fit, the more similar one (the left one on ties)."""
    n = len(sizes)
    size = list(sizes)
    left = list(range(-1, n - 1))
    right = [*range(1, n), -1]
    rsim = [*sims, 0.0]  # similarity at the right boundary of each live run (its leftmost index)
    alive = [True] * n
    heap = [(s, i) for i, s in enumerate(size) if s < min_size]
    heapq.heapify(heap)
    live = n
    while heap and live > 1:
        s, i = heapq.heappop(heap)
        if not alive[i] or s != size[i]:
            continue  # stale entry
        options = []
        if left[i] >= 0:
            options.append((size[left[i]] + s <= budget, rsim[left[i]], 1, left[i], i))
        if right[i] >= 0:
            options.append((size[right[i]] + s <= budget, rsim[i], 0, i, right[i]))
        _, _, _, a, b = max(options)  # fits first, then similarity, then the left neighbour
        size[a] += size[b]
        rsim[a] = rsim[b]
        alive[b] = False
        right[a] = right[b]
        if right[b] >= 0:
            left[right[b]] = a
        live -= 1
        if size[a] < min_size:
            heapq.heappush(heap, (size[a], a))
    return [right[i] - 1 for i in range(n) if alive[i] and right[i] >= 0]


def window_pieces(texts: Sequence[str], count_tokens: Callable[[list[str]], list[int]], limit: int) -> list[list[str]]:
    """Each text as pieces of at most ``limit`` tokens, in order, halved at the whitespace nearest
    the middle (at the middle character when there is none). One ``count_tokens`` call per round."""
    out: list[list[tuple[str, str]]] = [[] for _ in texts]
    todo = [(i, "", t) for i, t in enumerate(texts)]
    while todo:
        counts = count_tokens([t for _, _, t in todo])
        nxt = []
        for (i, path, t), n in zip(todo, counts):
            if n <= limit or len(t) < 2:
                out[i].append((path, t))  # one character over the window: the embedder says so
                continue
            k = _split_point(t)
            a, b = t[:k].rstrip(), t[k:].lstrip()
            nxt += [(i, path + "0", a), (i, path + "1", b)] if a and b else [(i, path + "0", t[:len(t) // 2]),
                                                                           (i, path + "1", t[len(t) // 2:])]
        todo = nxt
    return [[t for _, t in sorted(pieces)] for pieces in out]  # leaf paths sort left to right


def _split_point(t: str) -> int:
    """The whitespace nearest the middle of ``t`` (scans stay in the regex engine), else the middle."""
    mid = len(t) // 2
    after = _WS.search(t, mid)
    before = _LAST_WS.match(t, 0, mid)
    options = [p for p in (after.start() if after else 0, before.end() - 1 if before else 0) if 0 < p]
    return min(options, key=lambda p: (abs(p - mid), p)) if options else mid


def token_batches(lengths: Sequence[int], budget: int, rows: int, same_length: bool = False) -> list[list[int]]:
    """Consecutive index runs of ``lengths`` (sorted ascending by the caller) whose padded size,
    rows x the longest, stays within ``budget`` and at most ``rows`` rows; a text longer than the
    budget goes alone. ``same_length``: a run also ends where the length changes, so no row is
    padded (exact token counts: 12% less model CPU than padding to the batch's longest)."""
    out: list[list[int]] = []
    cur: list[int] = []
    width = 0
    for j, n in enumerate(lengths):
        w = max(width, n)
        if cur and ((len(cur) + 1) * w > budget or len(cur) >= rows or (same_length and n != width)):
            out.append(cur)
            cur, w = [], n
        cur.append(j)
        width = w
    if cur:
        out.append(cur)
    return out


# -- the chunker -------------------------------------------------------------------------------------
@lru_cache(maxsize=4)
def shared_embedder(name: str):
    """One embedder per name and process (a model loads once), like the language identifier.

    The default, ``minilm-onnx-int8``, is the ingest default's graph (all-MiniLM-L6-v2, int8 weights,
    ONNX Runtime): ~40% less CPU than fp32, 85-90% of the chunks identical to fp32's and retrieval on
    labelled questions equal within noise (benchmarks/semantic_quality.py). ``minilm`` (and its
    aliases) runs the fp32 graph of the same weights: the same chunks as PyTorch on every text
    measured, at half its CPU (benchmarks/semantic.py). The ONNX graphs run with idle threads
    asleep (many small batches). The vectors only place boundaries and are never stored, so no
    embed key changes; the name is in the chunk config's fingerprint."""
    from chunkwise.embed.factory import make_embedder

    key = name.strip().lower()
    precision = "fp32" if key in _MINILM_NAMES else _ONNX_NAMES.get(key)
    embedder = _onnx_minilm(precision) if precision else None
    embedder = embedder or make_embedder(name)
    if embedder is None:
        raise ConfigError("semantic chunking compares sentence vectors: set semantic_embedder to "
                          "'minilm-onnx-int8', 'minilm' or 'hashing', not 'none'")
    return embedder


_MINILM_NAMES = {"minilm", "minilm@1", "all-minilm-l6-v2", "all-minilm-l6-v2@1", "sentence-transformers/all-minilm-l6-v2"}
_ONNX_NAMES = {f"{stem}-onnx{tail}{version}": precision for stem in ("minilm", "all-minilm-l6-v2")
               for tail, precision in (("", "fp32"), ("-int8", "int8")) for version in ("", "@1")}


def _onnx_minilm(precision: str):
    """all-MiniLM-L6-v2 on ONNX Runtime, or None when onnxruntime or onnx is missing (``minilm``
    then falls back to PyTorch; the ONNX names to make_embedder, which says what to install)."""
    from chunkwise.embed.onnx import OnnxMiniLMEmbedder
    from chunkwise.errors import DependencyError

    embedder = OnnxMiniLMEmbedder(precision, spinning=False)  # many small batches: idle threads sleep
    try:
        embedder.check()
    except DependencyError:
        return None
    return embedder


class SemanticChunker(BaseChunker):
    """Topic runs from adjacent-sentence similarity, each packed under the cap. ``embedder`` (any
    object with ``embed``, ``max_tokens`` and, when windowed, ``count_tokens``; with ``token_ids``
    and ``embed_ids`` too, sentences are tokenized once and embedded unpadded) defaults to the
    config's ``semantic_embedder``."""

    name = "semantic"

    def __init__(self, config: ChunkConfig, sizer: Sizer, embedder=None) -> None:
        super().__init__(config, sizer)
        self.embedder = embedder if embedder is not None else shared_embedder(config.semantic_embedder)
        self.window = getattr(self.embedder, "max_tokens", None)
        if self.window is not None and not callable(getattr(self.embedder, "count_tokens", None)):
            raise ConfigError(f"embedder {getattr(self.embedder, 'name', self.embedder)!r} has a window of "
                              f"{self.window} tokens but no count_tokens(); semantic chunking needs it to "
                              f"embed long sentences whole — use 'minilm' or 'hashing'")
        self.min_size = config.semantic_min_size if config.semantic_min_size is not None else config.size // 8

    def for_text(self, text: str) -> "SemanticChunker":
        sizer = self.sizer.for_text(text)
        return self if sizer is self.sizer else type(self)(self.config, sizer, self.embedder)

    def _chunk(self, text: str) -> list[Chunk]:
        title = self.title_of(text)
        drafts, undefined = self.plan(text, title, self.sections(text))
        # flagged after the final measure: a draft re-packed there flags only the pieces that need it
        return _flag(self.finalize(text, drafts, title), undefined)

    def chunk_blocks(self, text: str, blocks, body_start: int = 0, title: str = "") -> list[Chunk]:
        """An extracted document whose headings are known (PDF, DOCX, HTML): topic runs inside its
        sections, each chunk with its section's heading path."""
        doc = sections_from_blocks(text, list(blocks), body_start)
        me = self.for_text(text)
        title = self.config.title or title or doc.title
        drafts, undefined = me.plan(text, title, list(doc.sections))
        return _flag(me.finalize(text, drafts, title), undefined)

    def sections(self, text: str) -> list[Section]:
        """Markdown sections (headings), or plain text's (a short ALL-CAPS line is a heading)."""
        if self.config.format == "markdown":
            return list(parse_markdown(text).sections)
        from chunkwise.chunking.structure import StructureChunker

        return StructureChunker.text_sections(text)

    def drafts(self, text: str, title: str) -> list[Draft]:
        return self.plan(text, title, self.sections(text))[0]

    def plan(self, text: str, title: str, sections: Sequence[Section] = ()) -> tuple[list[Draft], list[tuple[int, int]]]:
        """Drafts under the budget, and the spans of sentences without a defined similarity. Every
        sentence of the document is embedded in one pass; a section start is always a boundary, so
        a topic run never crosses a heading and each chunk carries its section's heading path."""
        secs = [self._body(text, sec) for sec in sections] or [Section(0, len(text), (), 0)]
        starts = sorted({sec.start for sec in secs} - {0})
        spans = _split_at(boundaries.sentence_spans(text), starts)
        if not spans:
            return [], []
        sentences_vectors = self.vectors([text[a:b] for a, b in spans])
        sims, undefined = gap_similarities(sentences_vectors)
        cut = set(boundary_gaps(sims, self.config.semantic_threshold, self.config.semantic_percentile))
        sizes = self.sizer.count_many([text[a:b] for a, b in spans])
        del sentences_vectors
        firsts_of = [a for a, _ in spans]  # sorted: a section's sentences are one bisected range
        drafts: list[Draft] = []
        for sec in secs:
            mine = range(bisect_left(firsts_of, sec.start), bisect_left(firsts_of, sec.end))
            if not mine:
                continue
            budget, _ = self.body_budget(sec.heading_path, title)
            gaps = [g for g in mine[:-1] if g in cut]
            firsts = [mine[0], *(g + 1 for g in gaps)]
            ends = [*firsts[1:], mine[-1] + 1]
            run_sizes = [sum(sizes[a:b]) for a, b in zip(firsts, ends)]
            kept = merge_small(run_sizes, [sims[g] for g in gaps], self.min_size, budget)
            firsts = [mine[0], *(gaps[k] + 1 for k in kept)]
            regions = [(spans[a][0], spans[b - 1][1]) for a, b in zip(firsts, [*firsts[1:], mine[-1] + 1])]
            drafts += self._pack_regions(text, regions, budget, sec, title)
        return drafts, [spans[i] for i in undefined]

    def _body(self, text: str, sec: Section) -> Section:
        """With the heading path in the embedded header (``path``/``full``), the heading line stays
        out of the chunk text, as the structure strategy does."""
        if self.config.header in ("path", "full") and sec.blocks and sec.blocks[0].kind == "heading":
            body = Section(sec.blocks[0].end, sec.end, sec.heading_path, sec.ordinal, sec.blocks[1:])
            if text[body.start : body.end].strip():  # a section that is only its heading keeps it
                return body
        return sec

    def vectors(self, sentences: Sequence[str]):
        """One vector per sentence, as the rows of a float32 matrix (1.5 KB a sentence with MiniLM;
        a list of Python floats costs 8x that). Each distinct sentence is embedded once, in
        batches of similar token length under a token budget (``token_batches``): a model pads a
        batch to its longest text, and a small batch keeps its activations in cache — 64 rows of
        256 tokens hold ~200 MB of attention scores and ran at half the speed of 1,024-token batches
        (benchmarks/semantic.py)."""
        import numpy as np

        unique = list(dict.fromkeys(sentences))
        row = {t: i for i, t in enumerate(unique)}
        items, pieced = self._items(unique)  # (owner, piece text, tokens, ids): long ones in window pieces
        order = sorted(range(len(items)), key=lambda j: (items[j][2], items[j][0], j))  # a sentence's pieces stay in order
        out = None
        for batch in token_batches([items[j][2] for j in order], TOKEN_BUDGET, BATCH, same_length=self._by_ids):
            picked = [order[j] for j in batch]
            if self._by_ids:
                got = np.asarray(self.embedder.embed_ids([items[j][3] for j in picked]), dtype=np.float32)
            else:
                got = np.asarray(self.embedder.embed([items[j][1] for j in picked]), dtype=np.float32)
            if out is None:
                out = np.zeros((len(unique), got.shape[1]), dtype=np.float32)
            owners = [items[j][0] for j in picked]
            if pieced:  # a long sentence: the sum of its pieces' unit vectors
                np.add.at(out, owners, _units_where(got, np.array([o in pieced for o in owners])))
            else:
                out[owners] = got
            del got
        if out is None:
            return np.zeros((len(sentences), 0), dtype=np.float32)
        return out[[row[t] for t in sentences]] if len(unique) < len(sentences) else out

    @property
    def _by_ids(self) -> bool:
        """The embedder takes token ids (``token_ids``/``embed_ids``, the ONNX MiniLM): each text is
        tokenized once, and batches hold rows of one length, so nothing is padded."""
        return self.window is not None and callable(getattr(self.embedder, "embed_ids", None)) \
            and callable(getattr(self.embedder, "token_ids", None))

    def _items(self, unique: list[str]) -> tuple[list[tuple[int, str, int, list[int] | None]], set[int]]:
        """``(sentence, text, tokens, token ids)`` to embed: a sentence within the window as itself,
        a longer one as its window pieces. Token counts come from one batched call (estimated from
        the length in characters when the embedder has no window and so no counter); ids only when
        the embedder takes them (``_by_ids``). Also: the sentences embedded in more than one piece."""
        if self.window is None:
            return [(i, t, len(t) // 4 + 1, None) for i, t in enumerate(unique)], set()
        by_ids = self._by_ids
        rows = self.embedder.token_ids(unique) if by_ids else None
        counts = [len(r) for r in rows] if by_ids else self.embedder.count_tokens(unique)
        long = [i for i, n in enumerate(counts) if n > self.window]
        items = [(i, t, n, rows[i] if by_ids else None) for i, (t, n) in enumerate(zip(unique, counts))
                 if n <= self.window]
        pieced = set()
        if long:
            pieces = window_pieces([unique[i] for i in long], self.embedder.count_tokens, self.window)
            owners = [(i, p) for i, ps in zip(long, pieces) for p in ps]
            pieced = {i for i, ps in zip(long, pieces) if len(ps) > 1}
            if by_ids:  # exact lengths: pieces join the batches of their own length
                items += [(i, p, len(r), r) for (i, p), r in zip(owners, self.embedder.token_ids([p for _, p in owners]))]
            else:  # each piece fits the window: batched as window-sized texts
                items += [(i, p, self.window, None) for i, p in owners]
        return items, pieced

    def _pack_regions(self, text: str, regions: list[tuple[int, int]], budget: int, sec: Section,
                      title: str = "") -> list[Draft]:
        """Topic runs are regions of the shared packer: a run that fits is one chunk (level ``end``),
        a longer one is cut at paragraph and sentence ends (lines, words inside an over-long one)."""
        if not regions:
            return []
        start, end = regions[0][0], regions[-1][1]
        cuts = [*boundaries.sentences(text, start, end), *boundaries.paragraphs(text, start, end)]
        pieces = self.pack(text, start, end, cuts, budget, path=sec.heading_path, title=title, overlap=self.config.overlap,
                           fine=(_line_ends,), regions=[Region(a, b) for a, b in regions])
        return drafts_from_pieces(pieces, heading_path=sec.heading_path, section=sec.ordinal)


def _line_ends(text: str, start: int, end: int) -> Iterator[tuple[int, Level]]:
    return boundaries.lines(text, start, end)


def _split_at(spans: Sequence[tuple[int, int]], starts: Sequence[int]) -> list[tuple[int, int]]:
    """Sentence spans cut where a section starts (a heading line glued to its first sentence)."""
    out: list[tuple[int, int]] = []
    for a, b in spans:
        i = bisect_right(starts, a)
        while i < len(starts) and starts[i] < b:
            if starts[i] > a:
                out.append((a, starts[i]))
                a = starts[i]
            i += 1
        out.append((a, b))
    return [(a, b) for a, b in out if a < b]


def _units_where(vectors, split):
    """Rows of ``vectors`` with ``split`` set scaled to unit length (zero when they have no
    direction, so they add nothing to their sentence's sum); the other rows as they are."""
    import numpy as np

    norms = np.linalg.norm(vectors.astype(np.float64), axis=1, keepdims=True)
    ok = (norms > 0) & np.isfinite(norms)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        units = np.where(ok, vectors / np.where(ok, norms, 1.0), 0.0)
    return np.where(split[:, None], units, vectors).astype(np.float32)


def _flag(chunks: list[Chunk], spans: list[tuple[int, int]]) -> list[Chunk]:
    """Mark chunks that contain a sentence without a defined similarity."""
    if not spans:
        return chunks
    ends = [b for _, b in spans]
    out = []
    for c in chunks:
        i = bisect_right(ends, c.start_char)
        if i < len(spans) and spans[i][0] < c.end_char:
            c = replace(c, needs_review=True, reasons=(*c.reasons, UNDEFINED))
        out.append(c)
    return out
