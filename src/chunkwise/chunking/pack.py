"""THE packing algorithm, written once.

Strategies say where a cut may go and how good it is (``Level``). ``pack`` measures the text between
the coarse candidates in one batched sizer call and walks forward greedily: from the current start it
finds how far the budget reaches (bisect on prefix sums) and cuts at the *highest* level available in
that reach, as far as possible. Only when no candidate lies in reach does it look inside the one
segment that is too long — lazily, level by level: finer finders (sentences), then words, then the
units of a single over-long word — each measured in one batched call for that segment alone. Text is
never re-tokenized candidate by candidate, and sentence detection runs only where it is needed.
"""
from __future__ import annotations

import re
from bisect import bisect_left, bisect_right, insort
from dataclasses import dataclass
from itertools import accumulate
from operator import itemgetter, sub
from typing import Callable, Iterable, Sequence

from chunkwise.chunking.levels import Level
from chunkwise.chunking.sizing import Sizer

# A finder gives the cuts inside ``text[start:end]``: ``(position, Level)`` pairs, or already merged
# as ``merge_cuts`` would merge them (sorted unique positions strictly inside, and their levels).
Finder = Callable[[str, int, int], "Iterable[tuple[int, Level]] | tuple[list[int], list[Level]]"]
# Sizes of top-level segments given as (start, end) spans, for text whose embedded form is not the
# slice (a table row rendered as "Header: Value" pairs).
Measure = Callable[[Sequence[tuple[int, int]]], list[int]]

_NONWS = re.compile(r"\S")
# Scripts written without spaces between words (Japanese, Chinese): each character is a word. Hangul
# is not among them: Korean separates words with spaces, so a cut between two syllables is mid-word.
_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u3000-\u303f\uff00-\uffef"
_CJK_CHAR = re.compile(rf"[{_CJK}]")
# A "word" for fine cuts: a run of non-space characters, except that each CJK character stands alone.
_FINE_WORD = re.compile(rf"[{_CJK}]|[^\s{_CJK}]+")
# For a sizer that counts whitespace-separated words, a CJK run is one word: cutting it finer would
# measure each character as a word of its own and overestimate the run.
_SPACE_WORD = re.compile(r"\S+")
# Python calls these whitespace; tokenizers treat them as control characters and delete them, so a
# cut next to one may join two words into one token.
_SOFT_SPACE = frozenset("\x0b\x0c\x1c\x1d\x1e\x1f\x85")
_PLAIN_SPACE = frozenset(" \n\t\r")
_LEVEL_OF = itemgetter(1)


def hard_space(ch: str) -> bool:
    return ch.isspace() and ch not in _SOFT_SPACE


def clean_cut(text: str, p: int) -> bool:
    """A cut with real whitespace on one side keeps every tokenizer's word intact."""
    if p <= 0 or p >= len(text):
        return True
    a, b = text[p - 1], text[p]
    return a in _PLAIN_SPACE or b in _PLAIN_SPACE or hard_space(a) or hard_space(b)


def _cjk_pair(text: str, p: int) -> bool:
    return 0 < p < len(text) and bool(_CJK_CHAR.match(text, p - 1)) and bool(_CJK_CHAR.match(text, p))


@dataclass(frozen=True, slots=True)
class Region:
    """A stretch packed on its own: pieces never cross its edges and overlap never reaches back over
    its start (a topic run, a speaker turn, a table). A piece that does not start at the region's
    start pays ``repeat_units`` and ``repeat_chars`` from its budgets: the text its embedded form
    repeats (a table's header rows, a speaker's label)."""

    start: int
    end: int
    repeat_units: int = 0
    repeat_chars: int = 0


@dataclass(frozen=True, slots=True)
class Piece:
    start: int
    end: int
    size: int  # body units (an estimate when ``exact`` is False; chunkers re-measure those)
    level: Level
    review: bool = False
    exact: bool = True  # False when a cut inside the piece, or at an end, splits a word
    reason: str = ""  # why a flagged piece is flagged: char_split (a cut inside one unit)


def skip_ws(text: str, pos: int, end: int) -> int:
    # The usual cases (at a word, or one space before it) without a regex call; ``\s`` is ``str.isspace``.
    if pos < end and not text[pos].isspace():
        return pos
    if pos + 1 < end and not text[pos + 1].isspace():
        return pos + 1
    m = _NONWS.search(text, pos, end)
    return m.start() if m else end


def trim_end(text: str, start: int, end: int) -> int:
    while end > start and text[end - 1].isspace():
        end -= 1
    return end


def merge_cuts(cuts: Iterable[tuple[int, Level]], start: int, end: int) -> tuple[list[int], list[Level]]:
    """Sorted unique cut positions strictly inside (start, end), each with its best level."""
    # Sorted by level (stable, in C), so a position's highest level is the one the dict keeps.
    best = dict(sorted(cuts, key=_LEVEL_OF))
    positions = sorted(best)
    lo, hi = bisect_right(positions, start), bisect_left(positions, end)
    if lo or hi < len(positions):
        positions = positions[lo:hi]
    return positions, list(map(best.__getitem__, positions))


def word_cuts(text: str, start: int, end: int, words: re.Pattern = _FINE_WORD) -> list[tuple[int, Level]]:
    """Word ends (each CJK character is a word of its own, unless ``words`` says otherwise)."""
    return [(m.end(), Level.WORD) for m in words.finditer(text, start, end)]


class _Ctx:
    """What every level of one ``pack`` call shares."""

    __slots__ = ("text", "sizer", "finders", "dirty", "long", "max_chars", "measure", "words")

    def __init__(self, text: str, sizer: Sizer, finders: Sequence[Finder], budget: int, max_chars: int,
                 measure: "Measure | None" = None):
        self.text = text
        self.max_chars = max_chars  # for the piece being cut (a region's repeated text lowers it)
        self.measure = measure
        self.sizer = sizer
        self.words = _SPACE_WORD if getattr(sizer, "name", "") == "words" else _FINE_WORD
        self.finders = finders
        self.dirty: list[int] = []  # sorted cut positions that split a word
        # A segment this many characters long will almost surely need cutting inside: it is measured
        # through its finer child straight away rather than measured twice.
        self.long = 4 * budget


class _Segments:
    """A region cut at its candidates, measured once, with prefix sums for O(log n) reach queries.
    Segments too long for the budget get a child one level finer, built on first need."""

    def __init__(self, ctx: _Ctx, start: int, end: int, cuts: Iterable[tuple[int, Level]], depth: int,
                 counts: list[int] | None = None):
        text = ctx.text
        positions, levels = cuts if isinstance(cuts, tuple) else merge_cuts(cuts, start, end)
        self.ctx = ctx
        self.depth = depth
        self.pos = [start, *positions, end]
        self.lev = [Level.END, *levels, Level.END]
        self._children: dict[int, _Segments | None] = {}
        if counts is None:
            counts = self._measure()
        self.prefix = [0, *accumulate(counts)]
        self.by_level: dict[Level, list[int]] = {}
        kinds = set(levels)
        if len(kinds) == 1:  # one level (fixed windows: every word end): no per-cut bookkeeping
            self.by_level[levels[0]] = list(range(1, len(self.pos) - 1))
            self.by_level.setdefault(Level.END, []).append(len(self.pos) - 1)
        else:  # one comprehension a level (a few levels): cheaper than a setdefault a cut
            self.by_level = {level: [i for i, lv in enumerate(levels, 1) if lv == level] for level in kinds}
            self.by_level.setdefault(Level.END, []).append(len(self.pos) - 1)
        self.order = sorted(self.by_level, reverse=True)
        plain = _PLAIN_SPACE
        for p in [p for p in positions if text[p] not in plain and text[p - 1] not in plain]:
            # No space at all on either side (a "." inside a number) is dirty without the full test.
            if not (text[p].isspace() or text[p - 1].isspace()) or not clean_cut(text, p):
                insort(ctx.dirty, p)

    def _measure(self) -> list[int]:
        """Counts of every segment in one batched call. A segment long enough that it will surely be
        cut inside is measured through its finer pieces instead (found now, counted in the same
        call), so no text is measured twice."""
        ctx, text = self.ctx, self.ctx.text
        if self.depth == 0 and ctx.measure is not None:
            return ctx.measure(list(zip(self.pos, self.pos[1:])))
        finder = ctx.finders[self.depth] if self.depth < len(ctx.finders) else None
        pos = self.pos
        if (finder is None and self.depth != len(ctx.finders)) or max(map(sub, pos[1:], pos), default=0) <= ctx.long:
            return ctx.sizer.count_spans(text, pos[:-1], pos[1:])  # the common case, without a per-segment plan
        # Only the long segments get a plan: the rest are counted as they are, in the same call.
        long = ctx.long
        longs = [k for k, (a, b) in enumerate(zip(pos, pos[1:])) if b - a > long]
        piece_starts: list[int] = []
        piece_ends: list[int] = []
        fines: list[tuple] = []
        at = 0
        for k in longs:
            a, b = pos[k], pos[k + 1]
            piece_starts += pos[at:k]
            piece_ends += pos[at + 1 : k + 1]
            found = finder(text, a, b) if finder else word_cuts(text, a, b, ctx.words)
            fine = found if isinstance(found, tuple) else merge_cuts(found, a, b)
            piece_starts.append(a)
            piece_starts += fine[0]
            piece_ends += fine[0]
            piece_ends.append(b)
            fines.append(fine)
            at = k + 1
        piece_starts += pos[at:-1]
        piece_ends += pos[at + 1 :]
        all_counts = ctx.sizer.count_spans(text, piece_starts, piece_ends)
        counts: list[int] = []
        i = 0
        at = 0
        for k, fine in zip(longs, fines):
            counts += all_counts[i : i + k - at]
            i += k - at
            n = len(fine[0]) + 1
            part = all_counts[i : i + n]
            i += n
            self._children[k] = _Segments(ctx, pos[k], pos[k + 1], fine, self.depth + 1, part)
            counts.append(sum(part))
            at = k + 1
        counts += all_counts[i:]
        return counts

    @property
    def total(self) -> int:
        return self.prefix[-1]

    def segment_of(self, s: int) -> int:
        return bisect_right(self.pos, s) - 1

    def child(self, k: int) -> "_Segments | None":
        if k not in self._children:
            self._children[k] = child_of(self.ctx, self.depth, self.pos[k], self.pos[k + 1],
                                         self.prefix[k + 1] - self.prefix[k])
        return self._children[k]

    def units_before(self, s: int) -> tuple[int, bool]:
        """Units from the region start to ``s`` (a segment start, or a position inside a child), and
        whether that figure is exact: a child measured word by word may not sum to its parent's count
        (a kana word counted per character), and then any size derived from it is an estimate."""
        k = bisect_right(self.pos, s) - 1
        return self._units_before(s, k)

    def _units_before(self, s: int, k: int) -> tuple[int, bool]:
        if s == self.pos[k]:
            return self.prefix[k], True
        kid = self._children.get(k)
        if kid is None:
            return self.prefix[k], True
        inner, exact = kid.units_before(s)
        return self.prefix[k] + inner, exact and kid.total == self.prefix[k + 1] - self.prefix[k]

    def best_cut(self, k: int, j: int) -> int:
        """Highest-level candidate index in (k, j], the furthest one at that level."""
        for level in self.order:
            lst = self.by_level[level]
            i = bisect_right(lst, j) - 1
            if i >= 0 and lst[i] > k:
                return lst[i]
        raise AssertionError("best_cut called with an empty range")

    def reach(self, s: int, budget: int, overlap: int, limit: int | None = None
              ) -> tuple[int, int, Level, int, bool, bool]:
        """Cut for a piece starting at ``s`` and ending by ``limit`` (a region end; a cut position):
        (cut position, units used, level, next start, exact, cut by the character bound inside a unit)."""
        pos, prefix = self.pos, self.prefix
        k = bisect_right(pos, s) - 1
        base, exact = (prefix[k], True) if s == pos[k] or k not in self._children else self._units_before(s, k)
        j = bisect_right(prefix, base + budget) - 1
        # The character bound, then the limit: each searched only when the candidate lies past it.
        if pos[j] > s + self.ctx.max_chars:
            j = bisect_right(pos, s + self.ctx.max_chars) - 1
        if limit is not None and pos[j] > limit:
            j = bisect_right(pos, limit) - 1
        if j > k:
            c = self.best_cut(k, j)
            nxt = self.pos[c]
            if overlap and c < len(self.pos) - 1:
                q = max(bisect_left(self.prefix, self.prefix[c] - overlap), k + 1)
                if q < c:
                    nxt = self.pos[q]
            return self.pos[c], self.prefix[c] - base, self.lev[c], nxt, exact, False
        kid = self.child(k)
        if kid is None:  # a single unit: nothing finer exists
            p = self.pos[k + 1]
            if p - s > self.ctx.max_chars:  # ... and it is longer than the character bound
                p = s + self.ctx.max_chars
                return p, max(1, self.prefix[k + 1] - base), Level.UNIT, p, False, True
            return p, self.prefix[k + 1] - base, Level.UNIT, p, exact, False
        return kid.reach(s, budget, overlap)


def child_of(ctx: _Ctx, depth: int, a: int, b: int, units: int):
    """The finer level inside the segment ``[a, b)`` of a level at ``depth`` (``units`` long), or
    None when nothing finer exists."""
    n_fine = len(ctx.finders)
    if depth < n_fine:
        cuts: Iterable = ctx.finders[depth](ctx.text, a, b)
    elif depth == n_fine:
        cuts = word_cuts(ctx.text, a, b, ctx.words)
    elif depth == n_fine + 1 and b - a > 2 * ctx.max_chars:
        return _CharRun(ctx, a, b, units)
    elif depth == n_fine + 1 and (b - a > 1):
        st, en = ctx.sizer.spans(ctx.text[a:b])
        return _Units(ctx, a, b, st, en) if len(st) > 1 else None
    else:
        return None
    return _Segments(ctx, a, b, cuts, depth + 1)


class _Units:
    """The bottom level: the units (tokens, characters) of one word longer than the budget. Cuts are
    computed from the unit spans directly, never materialised (a 20 MB run without spaces is 20
    million characters)."""

    def __init__(self, ctx: _Ctx, start: int, end: int, starts: Sequence[int], ends: Sequence[int]):
        self.ctx, self.start, self.end, self.starts, self.ends = ctx, start, end, starts, ends
        self.total = len(starts)

    def units_before(self, s: int) -> tuple[int, bool]:
        return bisect_left(self.starts, s - self.start), True

    def reach(self, s: int, budget: int, overlap: int) -> tuple[int, int, Level, int, bool, bool]:
        a, text, max_chars = self.start, self.ctx.text, self.ctx.max_chars
        rel = s - a
        t0 = bisect_right(self.ends, rel)  # the first unit ending after s
        if t0 >= self.total:  # only text no unit covers (control characters) is left
            p = min(self.end, s + max_chars)
            return p, 0, Level.UNIT, p, False, p < self.end
        partial = self.starts[t0] < rel  # s lies inside a unit (a character cut came before)
        t1 = min(t0 + budget, self.total, bisect_right(self.ends, rel + max_chars))
        if t1 <= t0:  # one unit longer than the character bound (a 100-character word is one [UNK])
            p = s + max_chars
            return p, 1, Level.UNIT, p, False, True
        starts, ends = self.starts, self.ends
        # Units that share a character (a Hangul syllable decomposed into jamo pieces) cannot be
        # parted by a character cut: back off to a unit that ends where the next one starts.
        while t0 + 1 < t1 < self.total and starts[t1] < ends[t1 - 1]:
            t1 -= 1
        shared = t1 < self.total and starts[t1] < ends[t1 - 1]
        p = a + ends[t1 - 1]  # when t1 reaches the last unit, the parent decides what follows
        level = Level.WORD if _cjk_pair(text, p) else Level.UNIT
        nxt = a + starts[t1 - overlap] if overlap and t1 - overlap > t0 and t1 < self.total else p
        return p, t1 - t0, level, nxt, not (partial or shared), False


class _CharRun:
    """The bottom level for a word far longer than the character bound (a 20 MB run without spaces):
    it is cut every ``max_chars`` characters without tokenizing the whole word (offsets of one long
    word cost a tokenizer superlinear time). Each window is counted; one over the unit budget is
    cut at its own unit spans."""

    def __init__(self, ctx: _Ctx, start: int, end: int, units: int):
        self.ctx, self.start, self.end, self.total = ctx, start, end, units

    def units_before(self, s: int) -> tuple[int, bool]:
        return self.total * (s - self.start) // (self.end - self.start), False

    def reach(self, s: int, budget: int, overlap: int) -> tuple[int, int, Level, int, bool, bool]:
        ctx = self.ctx
        p = min(self.end, s + ctx.max_chars)
        n = ctx.sizer.count_many([ctx.text[s:p]])[0]
        if n <= budget:
            return p, n, Level.UNIT, p, False, p < self.end
        st, en = ctx.sizer.spans(ctx.text[s:p])
        p = s + en[min(budget, len(en)) - 1]
        return p, budget, Level.UNIT, p, False, False


def pack_rows(
    text: str,
    start: int,
    end: int,
    cuts: Iterable[tuple[int, Level]],
    sizer: Sizer,
    budget: int,
    overlap: int = 0,
    floor: Level = Level.WORD,
    floors: Sequence[tuple[int, int, Level]] = (),
    fine: Sequence[Finder] = (),
    max_chars: int | None = None,
    regions: Sequence[Region] = (),
    measure: Measure | None = None,
    window: tuple[int, int] | None = None,
) -> list[tuple]:
    """``pack`` as rows: the fields of each ``Piece`` as a tuple, in their order (a chunker that
    reads them straight into its chunks builds no object per piece).

    Pack ``text[start:end]`` into pieces of at most ``budget`` units and ``max_chars`` characters.

    ``cuts`` are the candidates known up front; ``fine`` are finders run lazily inside a segment that
    has none in reach (e.g. sentences inside an over-long paragraph), before words and units.
    ``floor`` (or a per-range entry of ``floors``) is the lowest level a cut is meant to use (a code
    line or a table row is kept whole); below it the packer cuts only inside a unit longer than the
    budget, at the best finer level, and does not flag it (see the comment at the flag).
    ``max_chars`` bounds the text a unit count cannot (WordPiece counts a 20 MB word as one token):
    cuts are chosen inside both bounds, and a single unit longer than it is cut at characters
    (flagged ``char_split``; the piece's size is then an estimate for the caller to re-measure).
    ``regions`` (disjoint, inside the range) are packed each on its own (see ``Region``); text
    between them is packed as regions of its own. ``measure`` sizes the top-level segments when the
    embedded text is not the slice.
    ``window=(W, K)`` counts overlap in top-level segments instead of units (sentence windows): a
    piece spans at most W segments, the next one starts W - K segments after its start (at least one
    later, at most where it ended), and a piece that starts inside a segment (the rest of one too
    long for the budget, cut finer) ends with that segment. ``overlap`` must then be 0.
    """
    if budget < 1:
        raise ValueError("budget must be at least one unit")
    if max_chars is not None and max_chars < 1:
        raise ValueError("max_chars must be at least one character")
    if window is not None and not (window[0] >= 1 and 0 <= window[1] < window[0] and not overlap):
        raise ValueError("window needs W >= 1, 0 <= K < W, and no unit overlap")
    chars = max_chars or len(text) + 1
    ctx = _Ctx(text, sizer, fine, budget, chars, measure)
    regs = sorted((r for r in regions if r.start < r.end), key=lambda r: r.start)
    if regs:  # region edges are cuts of the highest level: a region that fits is one piece
        cuts = [*(zip(*cuts) if isinstance(cuts, tuple) else cuts),
                *((x, Level.END) for r in regs for x in (r.start, r.end))]
    edges = sorted({start, end, *(x for r in regs for x in (r.start, r.end) if start < x < end)})
    by_start = {r.start: r for r in regs}
    top = None
    if window is None and isinstance(cuts, tuple) and measure is None:  # one level of cuts: arrays
        from chunkwise.chunking.flat import flat_segments

        top = flat_segments(ctx, start, end, cuts, child_of, clean_cut)
    if top is None:
        if isinstance(cuts, tuple) and not isinstance(cuts[0], list):
            cuts = (list(map(int, cuts[0])), list(cuts[1]))
        top = _Segments(ctx, start, end, cuts, 0)
    pieces: list[tuple] = []
    n_text = len(text)
    s = skip_ws(text, start, end)
    last_cut = start
    reg_at = -1  # start of the region the current piece lies in
    limit, piece_budget = end, budget  # without regions, the same for every piece
    while s < end:
        if regs:
            i = bisect_right(edges, s) - 1
            limit = edges[i + 1]
            reg = by_start.get(edges[i])
            piece_budget = budget
            ctx.max_chars = chars
            if reg is not None and reg_at == edges[i]:  # not the region's first piece: pay its repeat
                piece_budget = max(1, budget - reg.repeat_units)
                ctx.max_chars = max(1, chars - reg.repeat_chars)
            reg_at = edges[i]
        if window is None:
            reach = limit
        elif skip_ws(text, top.pos[k := top.segment_of(s)], top.pos[k + 1]) >= s:  # at most W whole segments
            reach = min(limit, top.pos[min(k + window[0], len(top.pos) - 1)])
        else:  # the rest of a segment that was cut finer
            reach = min(limit, top.pos[k + 1])
        p, used, level, nxt, exact, char_cut = top.reach(s, piece_budget, overlap, reach)
        if window is not None:
            c = bisect_left(top.pos, p)
            if c < len(top.pos) and top.pos[c] == p:
                nxt = top.pos[max(k + 1, min(k + window[0] - window[1], c))]
        after = limit if p >= limit else skip_ws(text, p, limit)  # where the text goes on after the cut
        if after >= limit:
            nxt = p  # overlap never reaches back into a finished region
        e = trim_end(text, s, p)
        if pieces and e <= pieces[-1][1] and last_cut > s:
            # The overlap start could not reach past the previous piece (the next unit is too big to
            # join it): a piece inside the previous one adds nothing, so continue from its cut (a
            # window: from the next window's start).
            s = skip_ws(text, nxt if window is not None and nxt > s else last_cut, end)
            continue
        last_cut = p
        # A cut below the floor (a code line or table row cut inside, a word cut at its tokens) is
        # the repair, not a fault: the packer goes below the floor only where no cut at the floor
        # lies in reach, i.e. inside a unit longer than the budget, and there it takes the best
        # finer level that keeps the cap (sentence, word, token); the rest of the unit joins what
        # follows. Only a cut inside one unit (``char_split``: a unit longer than the character
        # bound) leaves text no reader can trust, and only that is flagged for review.
        review = char_cut
        reason = "char_split" if char_cut else ""
        dirty = ctx.dirty
        exact = (exact and (not dirty or (i := bisect_right(dirty, s)) == len(dirty) or dirty[i] >= e)
                 and (text[s - 1] in _PLAIN_SPACE or clean_cut(text, s))  # the usual case first
                 and (p == n_text or text[p] in _PLAIN_SPACE or clean_cut(text, p)))
        pieces.append((s, e, used, level, review, exact, reason))
        if nxt <= s:
            nxt = p
        s = after if nxt == p and limit == end and p < end else skip_ws(text, nxt, end)
    return pieces


def pack(*args, **kw) -> list[Piece]:
    """Pack ``text[start:end]`` into ``Piece``s: ``pack_rows`` (same arguments), each row a ``Piece``."""
    return [Piece(*row) for row in pack_rows(*args, **kw)]
