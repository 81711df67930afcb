"""Context assembly: passages in rank order, each with its citation, under a hard token budget
measured with the generator's tokenizer. A passage is sent whole or not at all; what does not fit is
replaced by smaller complete evidence (the retrieved chunks an expansion grew from) or reported."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

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


def _overlaps(p: Passage, chosen: Sequence[Passage]) -> bool:
    return any(q.doc_id == p.doc_id and p.start_char < q.end_char and q.start_char < p.end_char for q in chosen)


def _covered(p: Passage, chosen: Sequence[Passage]) -> bool:
    return any(q.doc_id == p.doc_id and q.start_char <= p.start_char and p.end_char <= q.end_char for q in chosen)


def assemble(candidates: Sequence[Sequence[Passage]], budget: int | None,
             measure: Callable[[str], int], *, omitted: Sequence[Omission] = ()) -> Context:
    """``candidates[i]`` are the choices for rank i: the preferred passage first (expanded, or the
    retrieved one), then the smaller pieces to send instead if it does not fit (the retrieved chunks
    an expansion grew from). A passage is added only if the whole context, re-measured, stays within
    the budget — tokenizers are not additive across joins — and no span is sent twice."""
    chosen: list[Passage] = []
    blocks: list[str] = []
    notes = list(omitted)
    used = 0

    def try_add(p: Passage) -> bool:
        nonlocal used
        if _overlaps(p, chosen):
            return False
        block = render(p, len(chosen) + 1)
        # Counting the block alone (plus its separator) is exact for WordPiece and within a token or
        # two for BPE; near the budget the whole context is re-measured so the cap is exact.
        cost = used + measure(("\n" if blocks else "") + block)
        if budget is not None and cost > budget + SLACK:
            return False  # clearly over: joins change a count by a token or two, not by SLACK
        if budget is not None and cost > budget - SLACK:
            cost = measure("\n".join([*blocks, block]))
            if cost > budget:
                return False
        chosen.append(p)
        blocks.append(block)
        used = cost
        return True

    for choices in candidates:
        if not choices:
            continue
        head, rest = choices[0], choices[1:]
        if _covered(head, chosen):
            continue  # already sent inside an earlier passage (two children of one parent: one copy)
        if try_add(head):
            continue
        if not _overlaps(head, chosen):
            reason = "parent_over_budget" if head.expanded_from else "budget"
            notes.append(Omission(head.chunk_ids, reason,
                                  f"{head.doc_id} chars {head.start_char}-{head.end_char} does not fit the "
                                  f"{budget}-token budget ({used} used)"
                                  + ("; the retrieved chunks were tried instead" if rest else "")))
        for piece in rest:
            if not _covered(piece, chosen) and not try_add(piece) and not _overlaps(piece, chosen):
                notes.append(Omission(piece.chunk_ids, "budget",
                                      f"{piece.doc_id} chars {piece.start_char}-{piece.end_char} does not fit either"))
    text = "\n".join(blocks)
    tokens = measure(text) if text else 0
    while budget is not None and tokens > budget and chosen:  # only if a tokenizer was far from additive
        dropped = chosen.pop()
        blocks.pop()
        notes.append(Omission(dropped.chunk_ids, "budget", "dropped on the final exact count of the context"))
        text = "\n".join(blocks)
        tokens = measure(text) if text else 0
    return Context(tuple(chosen), text, tokens, tuple(notes))
