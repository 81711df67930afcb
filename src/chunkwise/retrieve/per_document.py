"""k distinct documents instead of k passages (``per="document"``).

A question asked of a corpus often wants *which documents* answer it: ``k`` passages can all come
from one long document. Here ``k`` counts documents. The hits kept are those ranked above the first
hit of the (k+1)-th distinct document, so every passage sent ranks above any document left out;
they are regrouped by document (documents in the order of their best hit, each document's hits best
first) and assembled as usual (``assembly.assemble_hits``), so a document's best passage leads its
group and the budget, when tight, cuts the later documents first (``omitted`` says so).
"""
from __future__ import annotations

from dataclasses import replace
from typing import Callable, Sequence

from chunkwise.retrieve.assembly import REFETCH, assemble_hits
from chunkwise.retrieve.context import Context
from chunkwise.retrieve.types import Hit

PER = ("passage", "document")  # what k counts


def first_documents(hits: Sequence[Hit], k: int) -> tuple[list[Hit], int]:
    """The hits of the first ``k`` distinct documents (by rank) that rank above the first hit of
    any other document, regrouped: document by document, each best first, re-ranked 1..n in that
    order. Also returns how many documents they hold."""
    order = sorted(hits, key=lambda h: (h.rank, -h.score, h.chunk_id))
    docs: dict[str, int] = {}
    kept: list[Hit] = []
    for h in order:
        if h.doc_id not in docs:
            if len(docs) == k:
                break
            docs[h.doc_id] = len(docs)
        kept.append(h)
    kept.sort(key=lambda h: docs[h.doc_id])  # stable: each document's hits stay best first
    return [replace(h, rank=i) for i, h in enumerate(kept, start=1)], len(docs)


def assemble_documents(fetch: Callable[[int], tuple[Sequence[Hit], bool]], *, k: int, overfetch: int = 3,
                       **options) -> Context:
    """Like ``assembly.assemble_ranked`` with ``k`` documents: fetches ``k x overfetch`` hits, twice
    as many (up to ``REFETCH`` times) while they hold fewer than ``k`` documents and the ranker has
    more."""
    n = k * overfetch
    for _ in range(REFETCH + 1):
        hits, exhausted = fetch(n)
        kept, found = first_documents(hits, k)
        if found >= k or exhausted:
            break
        n *= 2
    return assemble_hits(kept, k=max(1, len(kept)), **options)
