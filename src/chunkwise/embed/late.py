"""Late chunking: one transformer pass over a window of the document, then one mean-pooled vector per
chunk from the token states inside the chunk's span (Günther et al., arXiv:2409.04701).

Why: a chunk that says "It employs 3,200 people" embedded on its own has lost the company it is
about; pooled from a pass that also read the paragraph naming the company, its vector keeps it.

How, exactly (``+late@1`` in the model name names this recipe; change any step, change the name):

1. **Segments.** The document is cut where the effective access tags change (``regions``: the
   ``(start, end, key)`` triples of ``enrich.acl.plan_access(...).regions``, innermost last; text outside every
   region shares one key). A window never crosses a segment edge, so a chunk's vector never saw
   text its readers may not see. Adjacent runs with the same key are one segment.
2. **Tokens.** Each segment is tokenized once with the model's own ``tokenizer.json`` (truncation
   and padding off, no special tokens) with character offsets. A chunk ``[start, end)`` owns every
   token whose offsets overlap it.
3. **Windows.** Chunk-driven, overlapping macro-windows of ``window_tokens - 2`` content tokens
   (the model adds [CLS] and [SEP]): walking the chunks in order, the first chunk not wholly inside
   the last window opens a new one starting ``overlap_tokens`` before it (less when the chunk is too
   long for that), pulled back at the segment's end so the last window is full; edges are moved
   inward to word starts when that uncovers no chunk, so a window's text re-tokenizes to its ids.
   Every chunk that fits a window lies wholly inside at least one; text no chunk covers (front
   matter) gets no window unless it is context for one.
4. **Choice.** A chunk inside several windows takes the one where it has the most context on its
   *thinner* side, ``min(tokens before it, tokens after it)``; ties go to more context in total,
   then to the earlier window. (Centred beats lopsided: a chunk at a window's edge is the case
   late chunking is meant to avoid.)
5. **Pooling.** Mean of the last hidden states of the chunk's tokens, [CLS] and [SEP] excluded,
   then L2-normalised: all-MiniLM-L6-v2's own pooling (``1_Pooling/config.json``: mean tokens;
   ``2_Normalize``) restricted to the span.
6. **Fallbacks, flagged.** A chunk longer than a window is encoded in a window of its own tokens
   (``fallback="too_long"``: a plain embedding of its span) and raises ConfigError when longer than
   the model reads; a chunk with no tokens (whitespace) gets the zero vector (``"no_tokens"``).

**Keying.** A late vector depends on the window, not just the chunk, so its ``embed_key`` is
``ids.embed_key(model + "+late@1", "late" ␟ sha256(window text ␟ window ids) ␟ first:last)``, the
chunk's token range inside the window. The window text decides the vector together with that range,
so an edit anywhere in the window re-embeds the chunks pooled from it, an edit outside changes
nothing, and a second identical run computes the same plan and the same keys. The contextual header
of ``embed_text`` is not in the document and not in the vector (it still feeds keyword search).

Importing this module loads neither torch nor tokenizers; ``LateEncoder`` loads the tokenizer on
first plan and the model (through the MiniLM embedder, shared) on first encode.
"""
from __future__ import annotations

import json
from bisect import bisect_left, bisect_right
from dataclasses import dataclass
from typing import Hashable, Iterable, Sequence

from chunkwise import ids
from chunkwise.errors import ConfigError

RECIPE = "late@1"
DEFAULT_OVERLAP = 64
TOO_LONG, NO_TOKENS = "too_long", "no_tokens"
_DEFAULT_KEY = ("\x00document",)  # the tags of text outside every region (no real tag tuple matches)


def late_model_name(base: str) -> str:
    """The ``embed_model`` of late vectors: the base model plus the recipe."""
    return f"{base}+{RECIPE}"


def base_model_name(name: str) -> str:
    """The model that embeds queries for vectors named ``name`` (late vectors live in its space)."""
    return name.split("+", 1)[0]


@dataclass(frozen=True)
class Window:
    """One encoder pass: content tokens ``[tok_start, tok_end)`` of segment ``segment``, covering
    ``text[start_char:end_char]``. ``solo`` windows hold one over-long chunk alone."""

    index: int
    segment: int
    start_char: int
    end_char: int
    ids: tuple[int, ...]
    digest: str  # sha256 of the window text and its ids
    solo: bool = False

    @property
    def label(self) -> str:
        """What a record stores to say which window produced its vector."""
        return f"{'solo' if self.solo else 'w' + str(self.index)}:{self.start_char}-{self.end_char}"


@dataclass(frozen=True)
class Pick:
    """How one span gets its vector: tokens ``[first, last)`` of window ``window`` (None: no tokens)."""

    window: int | None
    first: int
    last: int
    key: str
    fallback: str = ""


@dataclass(frozen=True)
class LatePlan:
    """Windows and, per input span (same order), its pick. Built without running the model."""

    model: str
    windows: tuple[Window, ...]
    picks: tuple[Pick, ...]

    def label(self, i: int) -> str:
        p = self.picks[i]
        return "none" if p.window is None else self.windows[p.window].label


@dataclass(frozen=True)
class LateVector:
    vector: list[float]
    window: Window | None
    fallback: str = ""


@dataclass(frozen=True)
class _Tokens:
    ids: list[int]
    starts: list[int]  # document offsets
    ends: list[int]
    words: list[int | None]


# -- segments --------------------------------------------------------------------------------------
def segments(length: int, regions: Sequence[tuple[int, int, Hashable]] = ()) -> list[tuple[int, int, Hashable]]:
    """Maximal ``(start, end, key)`` runs of one effective key over ``[0, length)``: the key of the
    innermost (last listed) region holding a position, ``_DEFAULT_KEY`` outside every region."""
    cuts = sorted({0, length, *(min(max(p, 0), length) for a, b, _ in regions for p in (a, b))})
    out: list[tuple[int, int, Hashable]] = []
    for a, b in zip(cuts, cuts[1:]):
        key = _DEFAULT_KEY
        for ra, rb, k in regions:
            if ra <= a < rb:
                key = k
        if out and out[-1][2] == key and out[-1][1] == a:
            out[-1] = (out[-1][0], b, key)
        else:
            out.append((a, b, key))
    return out


def _segment_of(bounds: list[tuple[int, int, Hashable]], start: int, end: int) -> int:
    i = max(0, bisect_right([a for a, _, _ in bounds], start) - 1)
    if end > bounds[i][1]:
        raise ConfigError(
            f"chunk [{start}, {end}) crosses an access-tag boundary at {bounds[i][1]}; chunk with the region "
            f"edges as hard boundaries (api.chunk_document(..., boundaries=...), as ingest does)")
    return i


# -- planning (tokenizer only) -------------------------------------------------------------------
def plan_late(text: str, spans: Sequence[tuple[int, int]], *, model, window_tokens: int | None = None,
              overlap_tokens: int = DEFAULT_OVERLAP,
              regions: Sequence[tuple[int, int, Hashable]] = ()) -> LatePlan:
    """Windows and keys for ``spans`` (character ranges of ``text``); see the module docstring.

    ``model`` needs ``name``, ``max_tokens``, ``max_positions`` and ``tokenize(text)``;
    ``window_tokens`` counts [CLS] and [SEP] (default: the model's ``max_tokens``)."""
    window_tokens = model.max_tokens if window_tokens is None else window_tokens
    _check_sizes(model, window_tokens, overlap_tokens)
    name = late_model_name(model.name)
    bounds = segments(len(text), regions)
    by_segment: dict[int, list[int]] = {}
    for i, (a, b) in enumerate(spans):
        if not 0 <= a <= b <= len(text):
            raise ValueError(f"span {i} ({a}, {b}) is not inside the text (length {len(text)})")
        by_segment.setdefault(_segment_of(bounds, a, b), []).append(i)
    windows: list[Window] = []
    picks: dict[int, Pick] = {}
    for seg in sorted(by_segment):
        a, b, _ = bounds[seg]
        toks = _tokenize(model, text, a, b)
        _plan_segment(text, seg, toks, spans, by_segment[seg], window_tokens - 2, overlap_tokens,
                      model.max_tokens - 2, name, windows, picks)
    return LatePlan(name, tuple(windows), tuple(picks[i] for i in range(len(spans))))


def _check_sizes(model, window_tokens: int, overlap_tokens: int) -> None:
    if not _int(window_tokens) or not 3 <= window_tokens <= model.max_positions:
        raise ConfigError(f"window_tokens must be an integer in 3..{model.max_positions} ({model.name}'s position "
                          f"limit, [CLS] and [SEP] included), got {window_tokens!r}; e.g. {model.max_tokens}")
    if not _int(overlap_tokens) or not 0 <= overlap_tokens < window_tokens - 2:
        raise ConfigError(f"overlap_tokens must be an integer in 0..{window_tokens - 3} (below the window's "
                          f"{window_tokens - 2} content tokens), got {overlap_tokens!r}; e.g. {DEFAULT_OVERLAP}")


def _int(x) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def _tokenize(model, text: str, a: int, b: int) -> _Tokens:
    ids_, offsets, words = model.tokenize(text[a:b])
    return _Tokens(list(ids_), [a + s for s, _ in offsets], [a + e for _, e in offsets], list(words))


def _plan_segment(text, seg, toks: _Tokens, spans, members, room, overlap, solo_room, name, windows, picks) -> None:
    n = len(toks.ids)
    ranges = {}
    for i in members:
        cs, ce = spans[i]
        first, last = bisect_right(toks.ends, cs), bisect_left(toks.starts, ce)
        ranges[i] = (first, last)
    own: list[tuple[int, int]] = []  # this segment's shared windows, token ranges
    for i in sorted(members, key=lambda j: (ranges[j], j)):
        first, last = ranges[i]
        if first >= last:
            picks[i] = Pick(None, 0, 0, ids.embed_key(name, ids.SEP.join(("late", "empty"))), NO_TOKENS)
        elif last - first > room:
            if last - first > solo_room:
                raise ConfigError(
                    f"chunk [{spans[i][0]}, {spans[i][1]}) has {last - first} tokens, more than {name.split('+')[0]} "
                    f"reads ({solo_room} + [CLS]/[SEP]); chunk with --unit tokens --size {solo_room} or less")
            w = _window(text, seg, toks, first, last, len(windows), solo=True)
            windows.append(w)
            picks[i] = Pick(w.index, 0, last - first, _key(name, w, 0, last - first), TOO_LONG)
        elif not own or not (own[-1][0] <= first and last <= own[-1][1]):
            own.append(_place(toks.words, n, first, last, room, overlap, own[-1][0] if own else 0))
    base = len(windows)
    windows.extend(_window(text, seg, toks, s, e, base + k) for k, (s, e) in enumerate(own))
    starts, ends = [s for s, _ in own], [e for _, e in own]
    for i in members:
        if i in picks:
            continue
        first, last = ranges[i]
        # Starts and ends both never decrease, so the windows holding the chunk are one run.
        k = max(range(bisect_left(ends, last), bisect_right(starts, first)),
                key=lambda k: (min(first - starts[k], ends[k] - last), ends[k] - starts[k], -k))
        w, s = windows[base + k], starts[k]
        picks[i] = Pick(w.index, first - s, last - s, _key(name, w, first - s, last - s))


def _place(words: list, n: int, first: int, last: int, room: int, overlap: int, floor: int) -> tuple[int, int]:
    """The window opened for chunk tokens ``[first, last)``: ``overlap`` tokens of left context (or
    what the chunk leaves), never starting before the previous window (``floor``; it does not hold
    the chunk, so the chunk still fits), full at the segment's end, edges moved inward to word
    starts. Starts and ends therefore never decrease from one window to the next."""
    s = max(floor, first - min(overlap, room - (last - first)))
    if s + room > n:
        s = max(floor, n - room)
    e = min(n, s + room)
    while s < first and s > 0 and words[s] is not None and words[s] == words[s - 1]:
        s += 1
    while last < e < n and words[e] is not None and words[e] == words[e - 1]:
        e -= 1
    return s, e


def _window(text, seg, toks: _Tokens, s: int, e: int, index: int, solo: bool = False) -> Window:
    a, b = toks.starts[s], toks.ends[e - 1]
    wids = tuple(toks.ids[s:e])
    digest = ids.sha256_hex(text[a:b] + ids.SEP + ",".join(map(str, wids)))
    return Window(index, seg, a, b, wids, digest, solo)


def _key(name: str, w: Window, first: int, last: int) -> str:
    return ids.embed_key(name, ids.SEP.join(("late", w.digest, f"{first}:{last}")))


# -- encoding (the model) -------------------------------------------------------------------------
def encode_plan(plan: LatePlan, model, which: Iterable[int]) -> list[LateVector]:
    """Vectors of the spans ``which`` (indices into the plan's spans), in that order. Only windows
    some of them need are encoded, in batches, and token states are dropped batch by batch."""
    return encode_plans([(plan, which)], model)[0]


def encode_plans(jobs: Sequence[tuple[LatePlan, Iterable[int]]], model) -> list[list[LateVector]]:
    """``encode_plan`` for several plans (documents) at once: windows of all of them share batches,
    which on a CPU runs ~1.5x faster per token than a document's one or two windows alone."""
    import numpy as np

    jobs = [(plan, list(which)) for plan, which in jobs]
    need: dict[tuple[int, int], list[int]] = {}  # (job, window) -> span indices
    for j, (plan, which) in enumerate(jobs):
        for i in which:
            if plan.picks[i].window is not None:
                need.setdefault((j, plan.picks[i].window), []).append(i)
    done: dict[tuple[int, int], list[float]] = {}
    order = sorted(need, key=lambda jw: (len(jobs[jw[0]][0].windows[jw[1]].ids), jw))
    step = max(1, getattr(model, "batch_size", 16))
    for b in range(0, len(order), step):
        batch = order[b : b + step]
        for (j, w), states in zip(batch, model.token_states([jobs[j][0].windows[w].ids for j, w in batch])):
            for i in need[(j, w)]:
                p = jobs[j][0].picks[i]
                done[(j, i)] = pool(states, p.first, p.last, np)
    out = []
    for j, (plan, which) in enumerate(jobs):
        vectors = []
        for i in which:
            p = plan.picks[i]
            vec = done[(j, i)] if p.window is not None else [0.0] * model.dim
            vectors.append(LateVector(vec, None if p.window is None else plan.windows[p.window], p.fallback))
        out.append(vectors)
    return out


def pool(states, first: int, last: int, np) -> list[float]:
    """Mean of content tokens ``[first, last)`` of one window's states (row 0 is [CLS]), L2-normalised."""
    mean = np.asarray(states[1 + first : 1 + last], dtype=np.float32).mean(axis=0)
    norm = float(np.linalg.norm(mean))
    return (mean / max(norm, 1e-12)).tolist()  # sentence-transformers' Normalize uses eps 1e-12 too


def late_embed(text: str, spans: Sequence[tuple[int, int]], *, model, window_tokens: int | None = None,
               overlap_tokens: int = DEFAULT_OVERLAP,
               regions: Sequence[tuple[int, int, Hashable]] = ()) -> list[LateVector]:
    """One late-chunked vector per span, with the window that produced it (see the module docstring)."""
    plan = plan_late(text, spans, model=model, window_tokens=window_tokens, overlap_tokens=overlap_tokens,
                     regions=regions)
    return encode_plan(plan, model, range(len(spans)))


class LateEncoder:
    """all-MiniLM-L6-v2's tokenizer and transformer, exposed as token states (shares the embedder's
    loaded model). ``max_tokens`` is the window it was trained for (256, [CLS]/[SEP] included);
    ``max_positions`` its position-embedding limit (512), the most a window may hold."""

    def __init__(self, embedder, batch_size: int = 16) -> None:
        from chunkwise.embed.minilm import MiniLMEmbedder

        if not isinstance(embedder, MiniLMEmbedder):
            raise ConfigError(f"late chunking needs a transformer embedder with token states (minilm), not "
                              f"{getattr(embedder, 'name', embedder)!r}; use --embedder minilm or --embed-mode plain")
        self.embedder = embedder
        self.name = embedder.name
        self.dim = embedder.dim
        self.max_tokens = embedder.max_seq_length
        config = json.loads((embedder._dir / "config.json").read_text(encoding="utf-8"))
        self.max_positions = int(config["max_position_embeddings"])
        self.batch_size = batch_size
        self._tok = None

    def __repr__(self) -> str:
        return f"LateEncoder({self.embedder!r})"

    def tokenizer(self):
        if self._tok is None:
            from chunkwise.models import load_tokenizer

            self._tok = load_tokenizer(self.embedder._dir / "tokenizer.json")
        return self._tok

    def tokenize(self, text: str) -> tuple[list[int], list[tuple[int, int]], list[int | None]]:
        """Content token ids, character offsets into ``text`` and word indices (no special tokens)."""
        enc = self.tokenizer().encode(text, add_special_tokens=False)
        return enc.ids, enc.offsets, enc.word_ids

    def token_states(self, windows: Sequence[Sequence[int]]):
        """Last hidden states of ``[CLS] + ids + [SEP]`` per window: one ``(len + 2, dim)`` array each."""
        import torch

        tok = self.tokenizer()
        cls, sep, pad = tok.token_to_id("[CLS]"), tok.token_to_id("[SEP]"), tok.token_to_id("[PAD]")
        width = max(len(w) for w in windows) + 2
        ids_ = torch.full((len(windows), width), pad, dtype=torch.long)
        mask = torch.zeros((len(windows), width), dtype=torch.long)
        for r, w in enumerate(windows):
            row = [cls, *w, sep]
            ids_[r, : len(row)] = torch.tensor(row, dtype=torch.long)
            mask[r, : len(row)] = 1
        net = self.embedder._load()[0].auto_model
        with torch.inference_mode():
            states = net(input_ids=ids_, attention_mask=mask, token_type_ids=torch.zeros_like(ids_)).last_hidden_state
        return [states[r, : len(w) + 2].float().numpy() for r, w in enumerate(windows)]
