"""Quality gate over a store (``chunkwise check``) and the index manifest (``chunkwise manifest``).

The gate fails on what makes an index wrong to serve: duplicate ids, empty chunks, chunks over the
cap (re-measured with the configured sizer, header included), two embedding models mixed in one
collection, and vectors missing for chunks or left behind. Chunks in ``review`` (no access tags,
split below their floor) are counted: retrieval never serves them, so they are a warning, not a
failure.
"""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path

from chunkwise.config import ChunkConfig
from chunkwise.errors import InputError


@dataclass
class CheckReport:
    chunks: int = 0
    ready: int = 0
    review: int = 0
    duplicate_ids: int = 0
    empty_text: int = 0
    oversized: int = 0
    missing_acl: int = 0
    review_reasons: dict = field(default_factory=dict)
    embed_models: list = field(default_factory=list)
    missing_vectors: int = 0
    orphan_vectors: int = 0
    failures: list = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.failures

    def to_dict(self) -> dict:
        return {**asdict(self), "ok": self.ok}


def _open(db: str | Path):
    from chunkwise.store import SQLiteStore

    if not Path(db).exists():
        raise InputError(f"{db}: no such store; create it with chunkwise ingest PATH --db {db}")
    return SQLiteStore(db)


def check(db: str | Path) -> CheckReport:
    from chunkwise.chunking.router import build_chunker

    r = CheckReport()
    with _open(db) as store:
        q = store.db.execute
        r.chunks = store.count()
        r.duplicate_ids = q("SELECT count(*) - count(DISTINCT chunk_id) FROM chunks").fetchone()[0]
        r.empty_text = q("SELECT count(*) FROM chunks WHERE trim(text) = ''").fetchone()[0]
        r.missing_acl = q("SELECT count(*) FROM chunks WHERE acl IN ('', '[]')").fetchone()[0]
        r.ready = q("SELECT count(*) FROM chunks WHERE quality = 'ready'").fetchone()[0]
        r.review = r.chunks - r.ready
        for (rec,) in q("SELECT record FROM chunks WHERE quality = 'review'"):
            for reason in json.loads(rec)["reasons"]:
                r.review_reasons[reason] = r.review_reasons.get(reason, 0) + 1
        r.embed_models = sorted(m for (m,) in q("SELECT DISTINCT embed_model FROM chunks"))
        if r.embed_models and r.embed_models != ["none"]:
            r.missing_vectors = q("SELECT count(*) FROM chunks WHERE embed_key NOT IN (SELECT embed_key FROM vectors)"
                                  ).fetchone()[0]
        r.orphan_vectors = q("SELECT count(*) FROM vectors WHERE embed_key NOT IN (SELECT embed_key FROM chunks)"
                             ).fetchone()[0]
        settings = store.settings()
        if "config" in settings:
            cfg = json.loads(settings["config"])
            cfg["separators"] = tuple(cfg["separators"]) if cfg.get("separators") else None
            config = ChunkConfig(**{k: v for k, v in cfg.items() if k != "extra"})
            sizer = build_chunker(config).sizer
            rows = q("SELECT embed_text FROM chunks").fetchall()
            sizes = sizer.count_many([t for (t,) in rows])
            r.oversized = sum(1 for n in sizes if n + sizer.overhead > config.size)
    for name, bad in (("duplicate chunk ids", r.duplicate_ids), ("empty chunks", r.empty_text),
                      ("chunks over the cap", r.oversized), ("chunks without a vector", r.missing_vectors),
                      ("vectors no chunk uses", r.orphan_vectors)):
        if bad:
            r.failures.append(f"{bad} {name}")
    if len(r.embed_models) > 1:
        r.failures.append(f"embedding models mixed in one collection: {', '.join(r.embed_models)}; re-ingest with one")
    return r


def manifest(db: str | Path) -> dict:
    """What an index release is made of: enough to replace it whole instead of mixing versions."""
    with _open(db) as store:
        settings = store.settings()
        docs = [
            {"doc_id": d, "source_uri": u, "source_version": v, "chunks": n, "ingested_at": t}
            for d, u, v, n, t in store.db.execute(
                "SELECT doc_id, source_uri, source_version, chunk_count, ingested_at FROM documents ORDER BY doc_id")
        ]
    config = json.loads(settings.get("config", "{}"))
    return {
        "tool_version": settings.get("tool_version"),
        "config": config,
        "fingerprint": settings.get("fingerprint"),
        "tokenizer": f"{config.get('unit')}:{config.get('tokenizer')}" if config else None,
        "embed_model": settings.get("embedder"),
        "documents": docs,
        "chunks": sum(d["chunks"] for d in docs),
    }
