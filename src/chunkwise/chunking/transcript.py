"""Transcripts (issue 29 item 6): consecutive speaker turns share a chunk up to the budget, and an
answer that runs across two turns is always inside one chunk.

``auto`` packs whole turns greedily (cuts between turns rank above cuts inside one), so most pairs of
neighbouring turns already share a chunk. The pair on either side of a cut between two chunks does
not: for it a *bridge* chunk holds the last turn before the cut and the first one after it, when the
two fit together. Only a turn too long for one chunk is packed on its own (``oversized``), each later
piece repeating its ``[00:01:05] Marco:`` label (``atoms``), so timestamp and speaker stay with every
piece. Offsets stay the truth: a bridge is a slice like every chunk, its timestamps are in its text.
"""
from __future__ import annotations

from bisect import bisect_left, bisect_right
from typing import Sequence

from chunkwise.chunking.atoms import TURN, Atom
from chunkwise.chunking.base import Draft
from chunkwise.chunking.levels import Level
from chunkwise.chunking.sizing import Sizer


def oversized(text: str, turns: Sequence[Atom], sizer: Sizer, budget: int, max_chars: int) -> list[Atom]:
    """The turns that cannot be one chunk. A turn whose UTF-8 bytes fit the budget fits under every
    unit (a token, word or character is at least one byte), so only longer ones are measured."""
    big = [t for t in turns if t.end - t.start > max_chars or len(text[t.start:t.end].encode()) > budget]
    sizes = sizer.count_many([text[t.start:t.end] for t in big]) if big else []
    return [t for t, n in zip(big, sizes) if n > budget or t.end - t.start > max_chars]


def bridges(text: str, drafts: Sequence[Draft], turns: Sequence[Atom], sizer: Sizer, budget: int,
            max_chars: int) -> list[Draft]:
    """``drafts`` (in order) with a bridge chunk between every two chunks cut between neighbouring
    turns (the first may open with other text): the turn before the cut and the turn after it, when
    both fit together."""
    if len(turns) < 2 or len(drafts) < 2:
        return list(drafts)
    starts = [t.start for t in turns]
    spans: list[tuple[int, int, Draft]] = []
    for a, b in zip(drafts, drafts[1:]):
        if a.section != b.section:
            continue
        i = bisect_left(starts, b.start)  # the turn the next chunk starts with
        if i == 0 or i >= len(turns) or starts[i] != b.start:
            continue  # the cut is inside a turn (a long one): its pieces carry its label instead
        before, after = turns[i - 1], turns[i]
        if before.end > a.end or before.start < a.start or text[before.end:after.start].strip():
            continue
        spans.append((before.start, after.end, a))
    if not spans:
        return list(drafts)
    fit = [(s, e, a) for s, e, a in spans if e - s <= max_chars]
    sizes = sizer.count_many([text[s:e] for s, e, _ in fit])
    extra = [Draft(s, e, n, Level.ITEM, heading_path=a.heading_path, section=a.section, kind=TURN)
             for (s, e, a), n in zip(fit, sizes) if n <= budget]
    out = list(drafts)
    for d in extra:  # after the chunk it starts in: chunks stay ordered by start
        out.insert(bisect_right([x.start for x in out], d.start), d)
    return out
