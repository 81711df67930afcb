"""Version links over the whole store, re-derived at the end of every ingest run.

``derive_links`` is pure: every document row (with its ``versioning`` JSON, see enrich/versions.py)
in, every link out. The store calls it inside one write transaction and replaces all links with the
result (``Store.relink_versions``), so a re-ingest, an edit that makes two texts drift apart, a
deleted version or a changed front matter all leave exactly the links the store's current documents
imply, and a second identical run writes the same links.

Every link depends on its two documents only (a declared name is matched against every document
it names, never "the first"; a detected pair on the two fingerprints and their versions/dates; in a
band shared by more than 64 documents each is compared with its 64 successors by id only), so
what a caller gets from the links among the documents they may see never depends on one they may not
see (retrieve/versions.py reads only links whose two ends the caller may see).
"""
from __future__ import annotations

import posixpath
from typing import Callable, Sequence

from chunkwise.enrich.versions import BAND, EMPTY, NEAR_DUPLICATE, VersionInfo, order, similarity
from chunkwise.store.base import DocumentRow, VersionLink

DECLARED, DETECTED = "declared", "detected"
_BUCKET = 64  # members of one LSH bucket compared with each other (identical copies: a chain, not all pairs)


def derive_links(docs: Sequence[DocumentRow], warn: Callable[[str], None] | None = None) -> list[VersionLink]:
    """Declared links (front matter ``supersedes``) and detected ones (near-duplicates whose version
    or date differ; a pair with a declared link either way is not detected again). Names that match
    no document are reported to ``warn`` (the link appears when that document is ingested)."""
    infos = {d.doc_id: VersionInfo.from_json(d.versioning) for d in docs}
    out: dict[tuple[str, str], VersionLink] = {}
    for d in docs:
        for name in infos[d.doc_id].supersedes:
            targets = _resolve(d, name, docs)
            if not targets and warn is not None:
                warn(f"{d.path}: supersedes {name!r}, which is no document in this store (yet); linked once it is")
            for t in targets:
                out.setdefault((d.doc_id, t), VersionLink(d.doc_id, t, DECLARED, 1.0))
    declared = {frozenset(k) for k in out}
    by_id = {d.doc_id: d for d in docs}
    for a, b in _candidates(infos):
        if frozenset((a, b)) in declared:
            continue
        sim = similarity(infos[a].minhash, infos[b].minhash)
        if sim < NEAR_DUPLICATE:
            continue
        way = order(infos[a].version, by_id[a].updated_at, infos[b].version, by_id[b].updated_at)
        if way:
            newer, older = (a, b) if way > 0 else (b, a)
            out[(newer, older)] = VersionLink(newer, older, DETECTED, round(sim, 4))
    return sorted(out.values(), key=lambda link: (link.newer, link.older))


def _resolve(doc: DocumentRow, name: str, docs: Sequence[DocumentRow]) -> list[str]:
    """Every other document ``name`` may mean: its id, or its path relative to ``doc``'s folder or root."""
    name = name.strip()
    paths = {posixpath.normpath(posixpath.join(posixpath.dirname(doc.path), name)), posixpath.normpath(name)}
    return sorted({d.doc_id for d in docs if d.doc_id != doc.doc_id
                   and (d.doc_id == name or (d.root == doc.root and d.path in paths))})


def _candidates(infos: dict[str, VersionInfo]) -> list[tuple[str, str]]:
    """Pairs of fingerprinted documents that agree on at least one whole band.

    Run once per ingest over every document of the store, serially at the end of the run: one table
    per band (no ``(band, values)`` key built per band), bands cut by ``zip`` and an empty one told by
    one tuple comparison (a signature's length is a multiple of ``BAND``; else sliced as before)."""
    tables: list[dict[tuple, list[str]]] = []
    empty = (EMPTY,) * BAND
    for doc_id in sorted(infos):
        sig = infos[doc_id].minhash
        if len(sig) % BAND:
            parts = [sig[n : n + BAND] for n in range(0, len(sig), BAND)]
        else:
            parts = zip(*[iter(sig)] * BAND)
        tables.extend({} for _ in range(-(-len(sig) // BAND) - len(tables)))
        for table, part in zip(tables, parts):
            if part == empty or (len(part) != BAND and part.count(EMPTY) == len(part)):  # no shingle: matches nothing
                continue
            members = table.get(part)
            if members is None:
                table[part] = [doc_id]
            else:
                members.append(doc_id)
    pairs: set[tuple[str, str]] = set()
    for table in tables:
        for members in table.values():
            for i, a in enumerate(members):
                for b in members[i + 1 : i + 1 + _BUCKET]:
                    pairs.add((a, b))
    return sorted(pairs)
