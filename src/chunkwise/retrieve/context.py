"""Context assembly: passages in rank order, each with its citation, under a hard token budget
measured with the generator's tokenizer.

A passage that fits is sent whole. One that does not is cut at chunk boundaries around its best
chunk: the best chunk first, then what fits of its neighbours (the other hits by rank, then chunks an
expansion added, nearest first; an enclosing section only whole), and assembly goes on with the next
passage. So the top-ranked chunk is never lost to the budget while it alone fits, and ``omitted``
says what was cut from which passage and why. Text is never cut inside a chunk.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

from chunkwise.retrieve.passages import Group, Piece
from chunkwise.retrieve.types import Omission, Passage


def citation(p: Passage, number: int) -> str:
    parts = [p.source_uri or p.doc_id]
    if p.heading_path:
        parts.append(" > ".join(p.heading_path))
    if p.page is not None:
        parts.append(f"p. {p.page}")
    parts.append(f"chars {p.start_char}-{p.end_char}")
    return f"[{number}] " + " | ".join(parts)


def render(p: Passage, number: int) -> str:
    return f"{citation(p, number)}\n{p.text.strip()}\n"


SLACK = 8  # tokens of headroom below which the whole context is re-measured


@dataclass(frozen=True)
class Context:
    passages: tuple[Passage, ...]
    text: str
    tokens: int
    omitted: tuple[Omission, ...]
    planned: int = 0  # passages the hits made before the budget was applied


class _Budget:
    """The context so far and whether one more block fits it. Counting the block alone (plus its
    separator) is exact for WordPiece and within a token or two for BPE; near the budget the whole
    context is re-measured, so the cap is exact."""

    def __init__(self, budget: int | None, measure: Callable[[str], int]) -> None:
        self.budget, self.measure = budget, measure
        self.blocks: list[str] = []
        self.used = 0

    def cost(self, block: str) -> int | None:
        """Tokens of the context with ``block`` added, or None when it does not fit."""
        cost = self.used + self.measure(("\n" if self.blocks else "") + block)
        if self.budget is None:
            return cost
        if cost > self.budget + SLACK:
            return None  # clearly over: joins change a count by a token or two, not by SLACK
        if cost > self.budget - SLACK:
            cost = self.measure("\n".join([*self.blocks, block]))
            if cost > self.budget:
                return None
        return cost

    def add(self, block: str, cost: int) -> None:
        self.blocks.append(block)
        self.used = cost

    @property
    def left(self) -> str:
        return "no" if self.budget is None else f"{max(0, self.budget - self.used)}"


def _priority(pieces: Sequence[Piece], seed_at: int, i: int) -> tuple:
    p = pieces[i]
    return (0, p.rank, abs(i - seed_at)) if p.retrieved else (1, abs(i - seed_at), i)


def cut(g: Group, number: int, room: _Budget) -> tuple[list[Piece], int] | None:
    """The largest contiguous part of ``g`` around its seed that fits, grown one chunk at a time on
    the side whose next chunk ranks better; None when not even the seed fits."""
    pieces = g.pieces
    at = g.seed_index
    lo = hi = at
    cost = room.cost(render(g.passage(pieces[at:at + 1]), number))
    if cost is None:
        return None
    open_sides = {-1, 1}

    def allowed(i: int) -> bool:
        return 0 <= i < len(pieces) and (pieces[i].retrieved or not g.whole)

    while open_sides:
        sides = [s for s in sorted(open_sides) if allowed(lo - 1 if s < 0 else hi + 1)]
        if not sides:
            break
        side = min(sides, key=lambda s: _priority(pieces, at, lo - 1 if s < 0 else hi + 1))
        a, b = (lo - 1, hi) if side < 0 else (lo, hi + 1)
        trial = room.cost(render(g.passage(pieces[a:b + 1]), number))
        if trial is None:
            open_sides.discard(side)  # the budget only shrinks: that side stays closed
            continue
        lo, hi, cost = a, b, trial
    return list(pieces[lo:hi + 1]), cost


def assemble(groups: Sequence[Group], budget: int | None, measure: Callable[[str], int], *,
             omitted: Sequence[Omission] = ()) -> Context:
    """Send ``groups`` (best first, non-overlapping) under ``budget`` tokens: each whole if it fits,
    else cut around its best chunk (see :func:`cut`), else reported."""
    room = _Budget(budget, measure)
    chosen: list[Passage] = []
    notes = list(omitted)
    for g in groups:
        number = len(chosen) + 1
        whole = g.passage()
        block = render(whole, number)
        cost = room.cost(block)
        if cost is not None:
            chosen.append(whole)
            room.add(block, cost)
            continue
        left = room.left
        part = cut(g, number, room)
        if part is None:
            notes.append(Omission(whole.chunk_ids, "budget",
                                  f"{g.doc_id} chars {g.start_char}-{g.end_char}: not even its best chunk fits the "
                                  f"{left} tokens left of the {budget}-token budget"))
            continue
        pieces, cost = part
        sent = g.passage(pieces)
        chosen.append(sent)
        room.add(render(sent, number), cost)
        kept = {p.chunk_id for p in pieces}
        for retrieved, reason in ((True, "budget"), (False, f"{g.expansion}_over_budget")):
            lost = tuple(p.chunk_id for p in g.pieces if p.retrieved == retrieved and p.chunk_id not in kept)
            if lost:
                what = "chunks" if retrieved else f"chunks the {g.expansion} expansion added"
                notes.append(Omission(lost, reason,
                                      f"passage [{number}] ({g.doc_id} chars {g.start_char}-{g.end_char}) does not "
                                      f"fit the {left} tokens left of the {budget}-token budget: sent chars "
                                      f"{sent.start_char}-{sent.end_char} around its best chunk, cut {len(lost)} "
                                      f"{what}", number))
    text = "\n".join(room.blocks)
    tokens = measure(text) if text else 0
    while budget is not None and tokens > budget and chosen:  # only if a tokenizer was far from additive
        dropped = chosen.pop()
        room.blocks.pop()
        notes.append(Omission(dropped.chunk_ids, "budget", "dropped on the final exact count of the context"))
        text = "\n".join(room.blocks)
        tokens = measure(text) if text else 0
    return Context(tuple(chosen), text, tokens, tuple(notes), len(groups))
