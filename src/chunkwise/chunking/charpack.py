"""``pack_rows`` for character sizes: the same walk, where a segment's size is its length.

Why: with characters every count is a subtraction and the prefix sums are the cut positions
themselves, yet the generic ``_Segments`` still builds count lists and prefix sums for each level and
makes a chain of calls per piece (``reach``, ``_units_before``, ``best_cut``, ``child``, the child's
``reach``, ``skip_ws``, ``trim_end``): ~6 us a piece, most of ``recursive@800``'s time. Here the same
levels (the top cuts, each finder's, words, single characters) are built at the same moments, with
the same eager children and the same dirty cuts, and one loop walks them with bisections on the
positions alone. The rows are ``pack_rows``' rows, field for field (a test holds them equal). The
lazy build order is kept on purpose: a piece's budget counts from the start of the innermost segment
*built so far* that holds its start (``_Segments._units_before``), so which levels exist changes
where a cut falls.

Only ``overlap=0`` with no regions, window or measure (what the recursive and paragraphs strategies
ask); ``pack_chars`` returns None for anything else and the caller packs generically.
"""
from __future__ import annotations

from bisect import bisect_left, bisect_right, insort
from itertools import compress, count
from operator import itemgetter, not_, sub
from typing import Iterable, Sequence

from chunkwise.chunking.levels import Level
from chunkwise.chunking.pack import (
    _FINE_WORD, _PLAIN_SPACE, Finder, _cjk_pair, clean_cut, merge_cuts, skip_ws, trim_end, word_cuts,
)
from chunkwise.chunking.sizing import CharSizer

_END, _UNIT, _WORD = Level.END, Level.UNIT, Level.WORD
_UNBUILT = object()  # a segment whose finer level is not built yet (None: there is none)


class _Node:
    """One level of cuts over ``[pos[0], pos[-1])``: ``_Segments`` without counts. ``kids[k]`` is the
    finer level inside segment ``k`` once built: a ``_Node``, a ``_Leaf``, or None (nothing finer)."""

    __slots__ = ("pos", "lev", "kids", "depth", "order", "by_level")

    def __init__(self, pos: list[int], lev: list, depth: int):
        self.pos, self.lev, self.depth = pos, lev, depth
        self.kids: dict = {}
        self.order: list | None = None  # None: one level, the furthest candidate in reach wins
        self.by_level: dict = {}


class _Leaf:
    """The characters of one word longer than the budget (``_Units``; ``run``: ``_CharRun``, a word
    longer than twice the character bound)."""

    __slots__ = ("a", "b", "run")

    def __init__(self, a: int, b: int, run: bool):
        self.a, self.b, self.run = a, b, run


class _State:
    __slots__ = ("text", "finders", "chars", "long", "dirty")

    def __init__(self, text: str, finders: Sequence[Finder], chars: int, long: int, flags: bool = True):
        self.text, self.finders, self.chars, self.long = text, finders, chars, long
        # ``_Ctx.dirty``: sorted cut positions that split a word (None: not collected, see ``pack_chars``)
        self.dirty: list[int] | None = [] if flags else None


def _node(st: _State, a: int, b: int, cuts, depth: int, eager: bool) -> _Node:
    """``_Segments(ctx, a, b, cuts, depth)``: its positions and levels, its dirty cuts, and (``eager``:
    built without counts, as the top level and every lazily built level are) the children its
    ``_measure`` builds at once, one level finer inside each segment longer than ``long``."""
    text = st.text
    positions, levels = cuts if isinstance(cuts, tuple) else merge_cuts(cuts, a, b)
    pos = [a, *positions, b]
    node = _Node(pos, [_END, *levels, _END], depth)
    if levels and levels.count(levels[0]) != len(levels):  # C-level filters: the top level holds every line
        kinds = set(levels)
        by_level = {level: list(compress(count(1), map(level.__eq__, levels))) for level in kinds}
        by_level.setdefault(_END, []).append(len(pos) - 1)
        # The lowest level is not searched: with no higher candidate in reach, the furthest one is it.
        node.by_level, node.order = by_level, sorted(by_level, reverse=True)[:-1]
    if positions and st.dirty is not None:
        plain = _PLAIN_SPACE.__contains__
        doubt = list(compress(positions, map(not_, map(plain, itemgetter(*positions)(text) if len(positions) > 1
                                                            else text[positions[0]]))))
        for p in doubt:
            if text[p - 1] in _PLAIN_SPACE:
                continue
            if not (text[p].isspace() or text[p - 1].isspace()) or not clean_cut(text, p):
                insort(st.dirty, p)
    n_fine = len(st.finders)
    # Deeper levels are counted without a plan (``_measure``); most levels have no long segment.
    if eager and depth <= n_fine and max(map(sub, pos[1:], pos)) > st.long:
        finder = st.finders[depth] if depth < n_fine else None
        long = st.long
        for k in list(compress(count(), map(long.__lt__, map(sub, pos[1:], pos)))):
            x, y = pos[k], pos[k + 1]
            found = finder(text, x, y) if finder else word_cuts(text, x, y, _FINE_WORD)
            node.kids[k] = _node(st, x, y, found if isinstance(found, tuple) else merge_cuts(found, x, y),
                                 depth + 1, False)
    return node


def _child(st: _State, depth: int, a: int, b: int) -> "_Node | _Leaf | None":
    """``pack.child_of`` for characters."""
    n_fine = len(st.finders)
    if depth < n_fine:
        cuts: Iterable = st.finders[depth](st.text, a, b)
    elif depth == n_fine:
        cuts = word_cuts(st.text, a, b, _FINE_WORD)
    elif depth == n_fine + 1 and b - a > 1:
        return _Leaf(a, b, b - a > 2 * st.chars)
    else:
        return None
    return _node(st, a, b, cuts, depth + 1, True)


def _base(node: _Node, k: int, s: int) -> tuple[int, bool]:
    """``_Segments._units_before`` as a position: the start of the innermost built segment holding
    ``s`` (``s`` itself inside a leaf), and whether the count to it is exact (not inside a run)."""
    while True:
        p = node.pos[k]
        if s == p:
            return p, True
        kid = node.kids.get(k)
        if kid is None:
            return p, True
        if type(kid) is _Leaf:
            return s, not kid.run
        node, k = kid, bisect_right(kid.pos, s) - 1


def _best(node: _Node, k: int, j: int) -> int:
    """``_Segments.best_cut``: the highest-level candidate index in (k, j], the furthest at that level
    (``order`` holds every level but the lowest)."""
    by_level = node.by_level
    for level in node.order:
        lst = by_level[level]
        i = bisect_right(lst, j) - 1
        if i >= 0 and lst[i] > k:
            return lst[i]
    return j


def fits(sizer, overlap: int) -> bool:
    """Whether ``pack_chars`` packs for this sizer and overlap (else it returns None)."""
    return type(sizer) is CharSizer and not overlap


def merge_levels(found: Iterable[tuple[Level, list[int]]], start: int, end: int) -> tuple[list[int], list[Level]]:
    """``merge_cuts`` of each level's sorted cut positions, without a ``(position, level)`` pair a cut:
    the lower levels go in first, so a position's highest level is the one the dict keeps."""
    best: dict[int, Level] = {}
    for level, positions in sorted(found, key=itemgetter(0)):
        best.update(dict.fromkeys(positions, level))
    positions = sorted(best)  # sorted runs: one merge
    lo, hi = bisect_right(positions, start), bisect_left(positions, end)
    if lo or hi < len(positions):
        positions = positions[lo:hi]
    return positions, list(map(best.__getitem__, positions))


def pack_chars(text: str, start: int, end: int, cuts, sizer, budget: int, *, overlap: int = 0,
               fine: Sequence[Finder] = (), max_chars: int | None = None, flags: bool = True
               ) -> list[tuple] | None:
    """``pack_rows(text, start, end, cuts, sizer, budget, overlap=overlap, fine=fine,
    max_chars=max_chars)`` when ``sizer`` counts characters and ``overlap`` is 0; else None.

    ``flags=False``: a row's ``exact`` does not say whether a cut inside it or at an edge splits a
    word (no dirty cuts are collected, no edge is tested): for a caller that never reads it, as
    ``finalize_rows`` does not for characters (a character count is the slice's length, whatever the
    cut). The edges, sizes, levels and other flags are the same."""
    if not fits(sizer, overlap) or budget < 1 or (max_chars is not None and max_chars < 1):
        return None
    chars = max_chars or len(text) + 1
    st = _State(text, fine, chars, 4 * budget, flags)
    if isinstance(cuts, tuple) and not isinstance(cuts[0], list):
        cuts = (list(map(int, cuts[0])), list(cuts[1]))
    top = _node(st, start, end, cuts, 0, True)
    top_pos, top_kids = top.pos, top.kids
    dirty = st.dirty
    plain = _PLAIN_SPACE
    n_text = len(text)
    rows: list[tuple] = []
    add = rows.append
    s = skip_ws(text, start, end)
    while s < end:
        node = top
        k = bisect_right(top_pos, s) - 1
        base = top_pos[k]
        exact = True
        if s != base and k in top_kids:
            base, exact = _base(top, k, s)
        char_cut = False
        while True:
            pos = node.pos
            bound = base + budget
            if bound > s + chars:
                bound = s + chars
            j = bisect_right(pos, bound) - 1
            if j > k:
                c = j if node.order is None else _best(node, k, j)
                p = pos[c]
                used = p - base
                level = node.lev[c]
                break
            kid = node.kids.get(k, _UNBUILT)
            fresh = kid is _UNBUILT
            if fresh:
                kid = node.kids[k] = _child(st, node.depth, pos[k], pos[k + 1])
            if kid is None:  # a single character: nothing finer exists
                p = pos[k + 1]
                level = _UNIT
                if p - s > chars:
                    used, p, exact, char_cut = max(1, p - base), s + chars, False, True
                else:
                    used = p - base
                break
            if type(kid) is _Leaf:
                if kid.run:  # ``_CharRun.reach``: every ``chars`` characters, flagged
                    p = min(kid.b, s + chars)
                    exact = False
                    if p - s <= budget:
                        used, char_cut = p - s, p < kid.b
                    else:
                        p = s + budget
                        used = budget
                    level = _UNIT
                else:  # ``_Units.reach``
                    p = min(s + budget, kid.b, s + chars)
                    used, exact = p - s, True
                    level = _WORD if _cjk_pair(text, p) else _UNIT
                break
            node = kid
            k = bisect_right(kid.pos, s) - 1
            if fresh:  # a new level may hold ``s`` in a segment that starts later than ``base``
                base, exact = _base(kid, k, s)
        if p >= end:
            after = end
        elif not text[p].isspace():
            after = p
        elif p + 1 < end and not text[p + 1].isspace():
            after = p + 1
        else:
            after = skip_ws(text, p, end)
        e = trim_end(text, s, p) if text[p - 1].isspace() else p
        if dirty is not None:
            exact = (exact and (not dirty or (i := bisect_right(dirty, s)) == len(dirty) or dirty[i] >= e)
                     and (text[s - 1] in plain or clean_cut(text, s))
                     and (p == n_text or text[p] in plain or clean_cut(text, p)))
        add((s, e, used, level, char_cut, exact, "char_split" if char_cut else ""))
        s = after
    return rows
