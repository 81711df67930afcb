"""Which version of a document a query asks about.

Why: serving only the latest version is right for "what is the notice period?" and wrong for "what
did the 2023 policy say?" — a user asking about an old version does not know ``--all-versions``
exists. ``versions="auto"`` (the default) reads the query: no mention of a version or a date keeps
the latest version only; a named version label ("v2", "version 1.3") or a year ("2023") serves,
in each family of versions, the version it names (by label, or the version in force in that year:
the latest one dated on or before its end), falling back to every version when none matches; a
vague reference ("previous", "old", "earlier", "before", "original", "superseded") serves every
version, latest first within a family.

Only the caller's own view is used: the families are the version links the caller may see both ends
of (``caller_graph``), and the dates and labels are those of the hits, so nothing here can reveal a
version the caller may not read.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Callable, Iterable, Sequence

from chunkwise.retrieve.types import Hit
from chunkwise.retrieve.versions import caller_graph, superseded

_LABEL = re.compile(r"\b(?:v|ver\.?|version|rev\.?|revision|release)\s*(\d+(?:\.\d+){0,3})\b", re.I)
_YEAR = re.compile(r"(?<![\d.])((?:19|20)\d\d)(?![\d.])")
_VAGUE = re.compile(r"\b(previous(?:ly)?|prior|old(?:er)?|earlier|former(?:ly)?|original(?:ly)?|"
                    r"superseded|outdated|before|used to|last year)\b", re.I)


@dataclass(frozen=True)
class VersionIntent:
    """What a query says about versions: labels and years it names, or only that it looks back."""

    labels: tuple[str, ...] = ()
    years: tuple[int, ...] = ()
    looks_back: bool = False

    @property
    def asks_history(self) -> bool:
        return bool(self.labels or self.years or self.looks_back)


def parse(query: str) -> VersionIntent:
    """The version intent of ``query`` (pure; a bare number such as "30 days" is not a version)."""
    labels = tuple(dict.fromkeys(_norm_label(m) for m in _LABEL.findall(query)))
    years = tuple(dict.fromkeys(int(y) for y in _YEAR.findall(query)))
    return VersionIntent(labels, years, bool(_VAGUE.search(query)))


def _norm_label(label: str) -> str:
    """"2", "2.0", "v2.0.0" are one label: trailing ".0" parts dropped, leading zeros too."""
    parts = [str(int(p)) for p in re.findall(r"\d+", label)]
    while len(parts) > 1 and parts[-1] == "0":
        parts.pop()
    return ".".join(parts)


def families(links_of: Callable[[set[str]], Iterable], docs: Iterable[str]) -> tuple[dict[str, int], dict[str, tuple[str, ...]]]:
    """(doc -> family number, doc -> the documents superseding it): the connected components of the
    caller's version graph around ``docs`` (a document without links is a family of its own)."""
    docs = set(docs)
    edges = caller_graph(links_of, docs)
    parent: dict[str, str] = {}

    def find(d: str) -> str:
        while parent.setdefault(d, d) != d:
            parent[d] = parent[parent[d]]
            d = parent[d]
        return d

    for newer, olders in edges.items():
        for older in olders:
            parent[find(newer)] = find(older)
    roots: dict[str, int] = {}
    return {d: roots.setdefault(find(d), len(roots)) for d in sorted(docs | set(parent))}, superseded(edges)


def _copies(hit: Hit):
    """(doc_id, version label, date) of every document a hit's text stands for: its own, then the
    identical passages collapsed into it."""
    yield hit.doc_id, hit.version, hit.updated_at
    for ref in hit.also_in:
        yield ref.doc_id, ref.version, ref.updated_at


def _labelled(version: str, labels: tuple[str, ...]) -> bool:
    return bool(version) and any(_norm_label(m) in labels for m in re.findall(r"\d+(?:\.\d+)*", version))


def _in_force(copies: Sequence[tuple[str, str, str]], year: int, newer: dict[str, tuple[str, ...]]) -> set[str]:
    """The documents in force at the end of ``year``: those labelled with the year, else those dated
    on or before 31 December of it that no newer version dated by then supersedes."""
    labelled = {d for d, v, _ in copies if v and str(year) in v}
    if labelled:
        return labelled
    dates = {d: u for d, _, u in copies if u[:4].isdigit()}
    by_then = {d for d, u in dates.items() if int(u[:4]) <= year}
    return {d for d in by_then if not any(n in by_then for n in newer.get(d, ()))}


def select(hits: Sequence[Hit], intent: VersionIntent, family: dict[str, int],
           newer: dict[str, tuple[str, ...]] | None = None) -> list[Hit]:
    """The hits of every version (``hits`` were resolved with ``latest_only=False``) narrowed to what
    ``intent`` names, family by family, and re-ranked 1..n. A hit stays when its own document or an
    identical passage collapsed into it is the one named. Within a family the intent does not narrow
    (nothing named, or nothing matched), the family's positions are refilled newest version first."""
    copies: dict[int, dict[str, tuple[str, str, str]]] = {}
    for h in hits:
        for c in _copies(h):
            copies.setdefault(family.get(h.doc_id, -1), {}).setdefault(c[0], c)
    wanted: dict[int, set[str]] = {}
    for fam, docs in copies.items():
        if fam < 0 or len(docs) < 2:
            continue
        chosen = {d for d, v, _ in docs.values() if _labelled(v, intent.labels)} if intent.labels else set()
        if not chosen and intent.years:
            chosen = set().union(*(_in_force(list(docs.values()), y, newer or {}) for y in intent.years))
        if chosen:
            wanted[fam] = chosen
    by_family: dict[int, list[Hit]] = {}
    for h in hits:
        by_family.setdefault(family.get(h.doc_id, -1), []).append(h)
    out: list[tuple[int, Hit]] = []
    for fam, members in by_family.items():
        if fam in wanted:
            out.extend((h.rank, h) for h in members if {c[0] for c in _copies(h)} & wanted[fam])
        elif fam < 0:
            out.extend((h.rank, h) for h in members)
        else:
            newest_first = sorted(members, key=lambda h: (bool(h.superseded_by), _recency(h)))
            out.extend(zip(sorted(h.rank for h in members), newest_first))
    out.sort(key=lambda pair: pair[0])
    return [replace(h, rank=i) for i, (_, h) in enumerate(out, start=1)]


def _recency(h: Hit) -> tuple:
    """Newest first: a later date sorts earlier (dates are ISO strings; undated last)."""
    return (0, tuple(-ord(c) for c in h.updated_at)) if h.updated_at else (1, ())
