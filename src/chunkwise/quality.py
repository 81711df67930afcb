"""Quality gate over a store (``chunkwise check``) and the index manifest (``chunkwise manifest``).

The gate fails on what makes an index wrong to serve: duplicate ids, empty chunks, chunks over the
cap (re-measured with the configured sizer, header included), two embedding models mixed in one
collection, vectors missing for chunks or left behind — and a store that can serve nothing at all
(every chunk in ``review`` or untagged: the usual result of ingesting without access tags). Chunks
that can never be served in an otherwise servable store are a loud warning with their counts and
reasons (a failure with ``strict``): retrieval never returns them.
"""
from __future__ import annotations

import json
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path

from chunkwise.config import ChunkConfig
from chunkwise.enrich.versions import VersionInfo


@dataclass
class CheckReport:
    chunks: int = 0
    ready: int = 0
    review: int = 0
    servable: int = 0
    duplicate_ids: int = 0
    empty_text: int = 0
    oversized: int = 0
    missing_acl: int = 0
    review_reasons: dict = field(default_factory=dict)
    embed_models: list = field(default_factory=list)
    missing_vectors: int = 0
    orphan_vectors: int = 0
    stale_search_rows: int = 0
    failures: list = field(default_factory=list)
    warnings: list = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.failures

    def to_dict(self) -> dict:
        return {**asdict(self), "ok": self.ok}


def _open(db):
    from chunkwise.errors import StoreError
    from chunkwise.store import open_store

    store = open_store(db, readonly=True)
    if store.capabilities.filtered_reads:  # a reader under row-level security would count only rows nobody's groups chose
        location = store.location
        store.close()
        raise StoreError(f"{location}: this role reads the store through row-level security (it sees only a "
                         f"caller's rows); check and manifest need the store's owner role in --db")
    return store


def check(db: str | Path, strict: bool = False) -> CheckReport:
    from chunkwise.chunking.router import build_chunker

    r = CheckReport()
    with _open(db) as store:
        c = store.counts()
        r.chunks, r.ready, r.review, r.servable = c.chunks, c.ready, c.chunks - c.ready, c.servable
        r.duplicate_ids, r.empty_text, r.missing_acl = c.duplicate_ids, c.empty_text, c.missing_acl
        r.review_reasons = dict(c.review_reasons)
        r.embed_models, r.missing_vectors, r.orphan_vectors = list(c.embed_models), c.missing_vectors, c.orphan_vectors
        r.stale_search_rows = c.stale_search_rows
        settings = store.settings()
        if "config" in settings:
            config = ChunkConfig.from_json(settings["config"])
            sizer = build_chunker(config).sizer
            sizes = sizer.count_many([c.record["embed_text"] for c in store.chunks()])
            r.oversized = sum(1 for n in sizes if n + sizer.overhead > config.size)
    for name, bad in (("duplicate chunk ids", r.duplicate_ids), ("empty chunks", r.empty_text),
                      ("chunks over the cap", r.oversized), ("chunks without a vector", r.missing_vectors),
                      ("vectors no chunk uses", r.orphan_vectors),
                      ("search rows out of step with their chunks (PostgreSQL's dense table; re-ingest the "
                       "documents or restore the store)", r.stale_search_rows)):
        if bad:
            r.failures.append(f"{bad} {name}")
    if len(r.embed_models) > 1:
        r.failures.append(f"embedding models mixed in one collection: {', '.join(r.embed_models)}; re-ingest with one")
    if not r.chunks:  # a release gate that passes an empty index lets a wrong --db or folder through
        r.failures.append("nothing can be served: the store holds no chunks (ingest documents into it first)")
    unservable = r.chunks - r.servable
    if unservable:
        why = ", ".join(f"{k} {v}" for k, v in sorted(r.review_reasons.items())) or f"missing_acl {r.missing_acl}"
        hint = "; re-ingest with --acl TAG or --acl-map FILE" if r.missing_acl else ""
        if not r.servable:
            r.failures.append(f"nothing can be served: all {r.chunks} chunks are in review or untagged ({why}){hint}")
        else:
            message = (f"{unservable} of {r.chunks} chunks can never be served ({why}){hint}; chunkwise review "
                       f"lists them and releases those a person has checked")
            (r.failures if strict else r.warnings).append(message)
    return r


def manifest(db: str | Path) -> dict:
    """What an index release is made of: enough to replace it whole instead of mixing versions."""
    with _open(db) as store:
        settings = store.settings()
        docs = [{"doc_id": d.doc_id, "root": d.root, "path": d.path, "source_uri": d.source_uri,
                 "source_version": d.source_version, "chunks": d.chunk_count, "ingested_at": d.ingested_at,
                 "routes": _routes(store.records_of(d.doc_id).values()),
                 "version": VersionInfo.from_json(d.versioning).version, "updated_at": d.updated_at}
                for d in store.documents()]
        links = [{"newer": x.newer, "older": x.older, "how": x.how, "similarity": x.similarity}
                 for x in store.version_links(None, None)]
    config = json.loads(settings.get("config", "{}"))
    routes: Counter = Counter()
    for d in docs:
        routes.update(d["routes"])
    return {
        "tool_version": settings.get("tool_version"),
        "config": config,
        "fingerprint": settings.get("fingerprint"),
        "tokenizer": f"{config.get('unit')}:{config.get('tokenizer')}" if config else None,
        "embed_model": settings.get("embedder"),
        "routes": dict(sorted(routes.items())),
        "documents": docs,
        "version_links": links,  # newer supersedes older (declared or detected; see enrich/versions.py)
        "chunks": sum(d["chunks"] for d in docs),
    }


def _routes(records) -> dict[str, int]:
    """Chunks per route (``strategy:content type``, e.g. ``auto:transcript``); records written
    before routes were recorded count as ``unrecorded`` (a re-ingest refreshes them in place)."""
    return dict(sorted(Counter(r.get("route") or UNRECORDED for r in records).items()))


UNRECORDED = "unrecorded"
