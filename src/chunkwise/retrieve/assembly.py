"""From an ordered, permission-filtered hit list to the context: bounded passages, expansion, budget.

``assemble_hits`` is the whole of it, and a function of the hit list only (plus, for expansion, a
``ChunkSource`` and the caller's groups): whatever reorders or collapses hits (versions, dedup) runs
before it. Steps:

1. hits -> at most ``k`` passages, each grown around its best hit within the passage budget
   (``passages.group_hits``);
2. expansion, best passage first. Neighbours are chunks of their own: one that overlaps another
   passage's text is left to that passage, so passages stay distinct. An enclosing section, and a
   page (``page``, ``pages``: with the pages either side), is one unit: the passages whose hits lie in it become one passage (two children of one parent: one
   copy), minus what a better passage already sends. When a passage is absorbed this way, the next
   hits make new passages, so ``k`` distinct passages come back whenever the hits hold them;
3. the budget (``context.assemble``): whole passages, else each cut around its best chunk.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Callable, Sequence

from chunkwise.errors import BudgetExceeded, ExpansionError, ParentNotPermitted, StaleLink
from chunkwise.retrieve.context import Context, assemble
from chunkwise.retrieve.expand import EXPANDERS, UNITS, ChunkSource
from chunkwise.retrieve.passages import (DEFAULT_PASSAGE_BUDGET, Group, Piece, group_hits, overlaps,
                                         with_pieces)
from chunkwise.retrieve.types import Hit, Omission


def assemble_hits(hits: Sequence[Hit], *, k: int, measure: Callable[[str], int], budget: int | None = None,
                  passage_budget: int | None = DEFAULT_PASSAGE_BUDGET, expand: str = "none",
                  source: ChunkSource | None = None, groups=()) -> Context:
    """``hits``: ranked (``rank`` 1 = best), every one permitted to the caller. ``measure``: the
    generator tokenizer's count; ``budget`` caps the context, ``passage_budget`` one merged passage."""
    plan = group_hits(hits, k, measure, passage_budget, by_page=expand in UNITS)
    notes = list(plan.omitted)
    grow = EXPANDERS.get(expand)
    if grow is None:
        return assemble(plan.groups, budget, measure, omitted=notes)
    if source is None:
        raise ValueError(f"expansion {expand!r} needs a ChunkSource")
    done: list[Group] = []
    queue, rest = list(plan.groups), plan.rest
    while True:
        while queue:
            g = queue.pop(0)
            try:
                g, absorbed = _expand(g, queue, done, expand, grow, source, groups)
            except ExpansionError as exc:
                notes.append(Omission(g.retrieved_ids, reason(exc, expand), str(exc)))
                absorbed = []
            queue = [q for q in queue if q not in absorbed]
            done.append(g)
        if len(done) >= k or not rest:
            break
        more = group_hits(rest, k - len(done), measure, passage_budget,
                          fixed=[(g.doc_id, g.start_char, g.end_char) for g in done], by_page=expand in UNITS)
        notes.extend(more.omitted)
        queue, rest = list(more.groups), more.rest
        if not queue:
            break
    return assemble(done, budget, measure, omitted=notes)


REFETCH = 4  # at most k x overfetch x 16 hits are ranked for one search


def assemble_ranked(fetch: Callable[[int], tuple[Sequence[Hit], bool]], *, k: int, overfetch: int = 3,
                    **options) -> Context:
    """:func:`assemble_hits` over ``fetch(n)`` -> (the top ``n`` permitted hits, whether the ranker
    had no more). Starts at ``k x overfetch``; when the hits make fewer than ``k`` distinct passages
    (merged, or absorbed by an expansion) and the ranker had more, fetches twice as many, up to
    ``REFETCH`` times."""
    n = k * overfetch
    for _ in range(REFETCH + 1):
        hits, exhausted = fetch(n)
        ctx = assemble_hits(hits, k=k, **options)
        if ctx.planned >= k or exhausted:
            break
        n *= 2
    return ctx


def _expand(g: Group, later: Sequence[Group], earlier: Sequence[Group], expand: str, grow, source,
            groups) -> tuple[Group, list[Group]]:
    """``g`` grown by ``grow``, and the later groups it absorbed. Rows that overlap what an earlier
    passage sends are left out; neighbours that overlap a later passage's hits too."""
    absorbed: list[Group] = []
    hits = list(g.pieces)
    whole = expand == "parent"  # sent whole or not at all; a page is cut around its best chunk instead
    unit = whole or expand in UNITS  # passages whose hits lie inside it become one passage
    while True:
        rows = grow(source, replace(g, pieces=tuple(hits)).passage(), groups)
        if not unit:
            break
        inside = [q for q in later if q not in absorbed
                  and any(q.overlaps(r.doc_id, r.start_char, r.end_char) for r in rows)]
        if not inside:
            break
        absorbed.extend(inside)
        hits.extend(p for q in inside for p in q.pieces)
    ids = {p.chunk_id for p in hits}
    taken = [(q.doc_id, q.start_char, q.end_char) for q in earlier]
    if not unit:
        taken += [(q.doc_id, p.start_char, p.end_char) for q in later for p in q.pieces if p.retrieved]
    added = [Piece.of_row(r) for r in rows if r.chunk_id not in ids
             and not any(d == r.doc_id and overlaps(s, e, r.start_char, r.end_char) for d, s, e in taken)]
    return with_pieces(g, hits + added, expand, whole), absorbed


def reason(exc: ExpansionError, expand: str) -> str:
    """The omission reason of a refused expansion, naming the expansion asked for."""
    if isinstance(exc, StaleLink):
        return "stale_link"
    if isinstance(exc, ParentNotPermitted):
        return "parent_not_permitted"
    if isinstance(exc, BudgetExceeded):
        return f"{expand}_over_budget"
    return "expansion_failed"
