"""Versions at query time: identical passages collapsed into one, superseded versions left out.

Runs on the ranked, permission-filtered hits, before merging and context assembly (seed 002's
"group top results by source_id and text hash", done for the caller): hits whose texts are the same
normalised words (case, punctuation, spacing and Unicode form aside; a changed number is a different
passage) become one hit — the best-ranked copy in a document that is not superseded, at the best
rank of the group — listing every other copy, with its document and offsets (``also_in``: another
document, or elsewhere in the same one), so that evaluation and citations can use each copy. With ``latest_only``
(the default, ``--all-versions`` turns it off) hits of superseded documents are then dropped; without
it they stay, each saying which newer versions exist (``superseded_by``).

Per caller, failing safe: the version graph is built only from stored links whose two documents the
caller may see (``Store.version_links`` filters inside the query), grown from the hits' documents.
A document D is superseded when a document N the caller may see reaches D through such links and D
does not reach N back (a cycle of declared links supersedes nobody). So a newer version the caller
may not see never hides an older one they may, and nothing they get reveals that it exists.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Callable, Iterable, Sequence

from chunkwise import ids
from chunkwise.enrich.versions import words
from chunkwise.retrieve.types import Hit, VersionRef, copies

FAMILY_LIMIT = 256  # documents one search explores around its hits (a bigger family is cut, never widened)


def caller_graph(links_of: Callable[[set[str]], Iterable], docs: Iterable[str],
                 limit: int = FAMILY_LIMIT) -> dict[str, set[str]]:
    """newer -> {older}: the links ``links_of(doc_ids)`` reports (only those the caller may see both
    ends of), followed breadth-first from ``docs``."""
    edges: dict[str, set[str]] = {}
    seen = set(docs)
    frontier = set(seen)
    while frontier and len(seen) <= limit:
        found = links_of(frontier)
        frontier = set()
        for link in found:
            edges.setdefault(link.newer, set()).add(link.older)
            for d in (link.newer, link.older):
                if d not in seen:
                    seen.add(d)
                    frontier.add(d)
    return edges


def superseded(edges: dict[str, set[str]]) -> dict[str, tuple[str, ...]]:
    """doc -> the documents that supersede it (reach it, and it does not reach them back)."""
    reach: dict[str, set[str]] = {}
    for start in edges:
        seen, stack = set(), [start]
        while stack:
            for nxt in edges.get(stack.pop(), ()):
                if nxt not in seen:
                    seen.add(nxt)
                    stack.append(nxt)
        reach[start] = seen
    out: dict[str, set[str]] = {}
    for newer, below in reach.items():
        for older in below:
            if older != newer and newer not in reach.get(older, ()):
                out.setdefault(older, set()).add(newer)
    return {d: tuple(sorted(n)) for d, n in out.items()}


def passage_key(text: str) -> str:
    """What makes two passages the same: their normalised words."""
    return ids.sha256_hex(" ".join(words(text)))


def collapse(hits: Sequence[Hit], newer: dict[str, tuple[str, ...]], *, latest_only: bool = True) -> list[Hit]:
    """The hits with identical passages collapsed and (``latest_only``) superseded ones dropped,
    re-ranked 1..n in their order."""
    groups: dict[str, list[Hit]] = {}
    for h in sorted(hits, key=lambda h: h.rank):
        groups.setdefault(passage_key(h.text), []).append(h)
    out: list[Hit] = []
    for members in groups.values():
        live = [h for h in members if h.doc_id not in newer]
        if latest_only and not live:
            continue
        keep, best = (live or members)[0], members[0]
        refs = [*keep.also_in, *(VersionRef(m.doc_id, m.source_uri, m.version, m.updated_at, m.chunk_id,
                                            m.start_char, m.end_char) for m in members)]
        out.append(replace(keep, rank=best.rank, score=best.score,
                           also_in=copies(refs, keep.doc_id, (keep.chunk_id,), (keep.start_char, keep.end_char)),
                           superseded_by=newer.get(keep.doc_id, ())))
    out.sort(key=lambda h: h.rank)
    return [replace(h, rank=i) for i, h in enumerate(out, start=1)]


def resolve_versions(hits: Sequence[Hit], links_of: Callable[[set[str]], Iterable], *,
                     latest_only: bool = True) -> list[Hit]:
    """``collapse`` with the caller's version graph around the hits' documents."""
    if not hits:
        return []
    graph = caller_graph(links_of, {h.doc_id for h in hits})
    return collapse(hits, superseded(graph), latest_only=latest_only)
