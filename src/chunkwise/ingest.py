"""Idempotent ingestion (seed 001 block 7): per document a set difference on chunk ids.

Ids only in the new set are added, ids only in the store are removed, ids in both are kept; a kept
chunk is re-embedded only when its embed_key changed, and its metadata is refreshed in place. A
document whose source bytes, chunking config, access tags and embedder are all unchanged is skipped
without re-chunking. Each document is written in one transaction; documents under an ingested folder
that no longer exist lose their chunks; vectors are cached by embed_key and shared.

``embed_mode="late"`` embeds each document by late chunking (``embed/late.py``): keys come from the
window plan, which needs only the tokenizer, so the diff and a dry run never load the model, and only
the windows that hold a chunk missing its vector are encoded.
"""
from __future__ import annotations

import hashlib
import json
import os
from dataclasses import asdict, dataclass, field, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable, Mapping, Sequence

from chunkwise import api
from chunkwise.config import ChunkConfig
from chunkwise.enrich import build_records
from chunkwise.access import AccessTags, parse_acl_map
from chunkwise.enrich.acl import plan_access
from chunkwise.errors import ChunkwiseError, ConfigError


@dataclass
class IngestStats:
    added: int = 0
    removed: int = 0
    embedded: int = 0
    metadata_updated: int = 0
    unchanged: int = 0
    skipped_documents: int = 0
    in_store: int = 0
    errors: list[dict] = field(default_factory=list)

    def to_dict(self) -> dict:
        return asdict(self)


def _now() -> str:
    return datetime.now(timezone.utc).replace(microsecond=0).isoformat().replace("+00:00", "Z")


def ingest(
    paths: Sequence[str | os.PathLike],
    db: str | os.PathLike,
    config: ChunkConfig | None = None,
    *,
    embedder=None,
    acl: AccessTags | Sequence[str] | str = (),
    acl_map: Mapping[str, AccessTags | Sequence[str] | str] | None = None,
    dry_run: bool = False,
    now: str | None = None,
    progress: Callable[[str], None] | None = None,
    embed_mode: str = "plain",
) -> IngestStats:
    """Ingest files and folders into the store at ``db``; returns chunk-level statistics.

    ``embed_mode``: ``"plain"`` embeds each chunk's ``embed_text`` alone; ``"late"`` pools each
    chunk's vector from a transformer pass over its surrounding window (needs the minilm embedder)."""
    from chunkwise.store import SQLiteStore

    config = config or ChunkConfig()
    acl = AccessTags.parse(acl, "acl")  # one grammar for every entry point; bad tags fail before any work
    acl_map = parse_acl_map(acl_map or {}, "acl_map")
    late = _late_encoder(embed_mode, embedder)
    _check_fits_model(config, embedder)
    now = now or _now()
    model = embedder.name if embedder is not None else "none"
    chunker = api.make_chunker(config)
    stats = IngestStats()
    late_params = []
    if late is not None:
        from chunkwise.embed.late import DEFAULT_OVERLAP, late_model_name

        model = late_model_name(model)
        late_params = [late.max_tokens, DEFAULT_OVERLAP]
    # Everything besides the source bytes that decides a document's records; the same for the run.
    inputs = hashlib.sha256(json.dumps(
        [config.fingerprint(), model, list(acl), sorted((k, list(v)) for k, v in acl_map.items()),
         *late_params]
    ).encode()).hexdigest()[:32]
    with SQLiteStore(db) as store:
        run = None if dry_run else store.start_run(now)
        for raw in paths:
            root = Path(raw).resolve()
            base = root if root.is_dir() else root.parent
            seen: set[str] = set()
            known = store.document_states(str(base))
            for item in api.iter_documents([root], root=base, unchanged=lambda src: _unchanged(src, known, inputs)):
                if isinstance(item, api.Unchanged):  # same bytes, same inputs: skipped before reading
                    seen.add(item.doc_id)
                    stats.skipped_documents += 1
                    stats.unchanged += known[item.doc_id][2]
                    continue
                if isinstance(item, api.SourceFailure):
                    seen.add(item.source)  # a file that failed this time keeps its old chunks
                    if not item.skipped:
                        stats.errors.append({"path": item.source, "error": item.error})
                    continue
                seen.add(item.doc_id)
                if progress:
                    progress(item.doc_id)
                try:
                    access = plan_access(item, acl, acl_map)
                    stats.errors.extend({"path": item.doc_id, "error": p} for p in access.problems)
                    _ingest_document(store, item, str(base), chunker, config, embedder, model,
                                     access, now, stats, dry_run, inputs, late)
                except ChunkwiseError as exc:
                    stats.errors.append({"path": item.doc_id, "error": str(exc)})
            if root.is_dir():
                if dry_run:
                    stats.removed += _count_missing(store, str(base), seen)
                else:
                    with store.atomic():
                        stats.removed += store.remove_missing(str(base), seen)
        if not dry_run:
            from chunkwise import __version__

            with store.atomic():
                store.gc_vectors()
                store.put_settings({"config": json.dumps(asdict(config), default=list, sort_keys=True),
                                    "fingerprint": config.fingerprint(), "embedder": model,
                                    "tool_version": __version__})
                store.finish_run(run, _now(), stats.to_dict())
        stats.in_store = store.count()
    return stats


def _late_encoder(embed_mode: str, embedder):
    """The token-state encoder for ``embed_mode="late"``; None for plain. Fails before any work."""
    if embed_mode == "plain":
        return None
    if embed_mode != "late":
        raise ConfigError(f"unknown embed mode {embed_mode!r}; use plain (each chunk alone) or late (late chunking)")
    if embedder is None:
        raise ConfigError("--embed-mode late needs an embedder; use --embedder minilm")
    from chunkwise.embed.late import LateEncoder

    return LateEncoder(embedder)


def _late_records(doc, chunks, records, regions, late):
    """Records keyed by their late-chunking windows, and the plan that computes their vectors.
    Front matter is a segment of its own: never context for a chunk."""
    from chunkwise.embed.late import plan_late

    if doc.body_start:
        regions = [(0, doc.body_start, "front matter"), *regions]
    plan = plan_late(doc.text, [(c.start_char, c.end_char) for c in chunks], model=late, regions=regions)
    keyed = [replace(r, embed_key=p.key, embed_window=plan.label(i))
             for i, (r, p) in enumerate(zip(records, plan.picks))]
    return keyed, plan


def _check_fits_model(config: ChunkConfig, embedder) -> None:
    """Fail before any work when chunks could exceed what the model reads (it would silently embed
    only their head): the cap plus [CLS]/[SEP] must fit the model's window."""
    limit = getattr(embedder, "max_tokens", None)
    if not limit or config.unit != "tokens" or config.tokenizer.lower() not in ("minilm", "all-minilm-l6-v2"):
        return
    need = config.size + (0 if config.special_tokens else 2)
    if need > limit:
        raise ConfigError(
            f"chunks of {config.size} tokens plus [CLS]/[SEP] exceed {embedder.name}'s {limit}-token window; "
            f"use --size {limit - 2} (or --size {limit} --special-tokens)"
        )


def _count_missing(store, root: str, seen: set[str]) -> int:
    rows = store.db.execute("SELECT doc_id, chunk_count FROM documents WHERE root = ?", (root,))
    return sum(n for d, n in rows if d not in seen)


def _unchanged(src, known: dict, inputs: str) -> bool:
    state = known.get(src.doc_id)
    return state is not None and state[0] == src.sha256 and state[1] == inputs


def _ingest_document(store, doc, root, chunker, config, embedder, model, access, now, stats, dry_run, inputs,
                     late) -> None:
    state = store.document_state(doc.doc_id)
    if state is not None and state[0] == doc.sha256 and state[1] == inputs:
        stats.skipped_documents += 1
        stats.unchanged += state[2]
        return
    regions = access.regions
    chunks = api.chunk_document(doc, api.for_document(chunker, doc), boundaries=access.boundaries)
    records = build_records(doc, chunks, chunker=config.fingerprint(), header_mode=config.header,
                            embed_model=model, now=now, access=access)
    plan = None
    if late is not None:
        records, plan = _late_records(doc, chunks, records, regions, late)
    new = {r.chunk_id: r.to_dict() for r in records}
    if dry_run:
        _diff(store.records_of(doc.doc_id), new, embedder, stats)
        return
    doc_row = {
        "doc_id": doc.doc_id, "root": root, "source_uri": doc.source, "source_version": doc.sha256,
        "inputs": inputs, "title": doc.title, "author": str((doc.metadata or {}).get("author") or ""),
        "updated_at": str((doc.metadata or {}).get("updated_at") or ""), "ingested_at": now,
        "chunk_count": len(records),
    }
    # The diff is taken inside the write lock: a concurrent ingest may have written this document
    # since it was read, and a diff against a stale read would insert duplicates.
    with store.atomic():
        state = store.document_state(doc.doc_id)
        if state is not None and state[0] == doc.sha256 and state[1] == inputs:
            stats.skipped_documents += 1
            stats.unchanged += state[2]
            return
        added, updated, removed, need = _diff(store.records_of(doc.doc_id), new, embedder, stats)
        vectors = []
        if embedder is not None:
            missing = sorted(store.missing_vectors(r["embed_key"] for r in need))
            if plan is not None:
                from chunkwise.embed.late import encode_plan

                where = {r.embed_key: i for i, r in enumerate(records)}
                vectors.extend(zip(missing, (v.vector for v in encode_plan(plan, late, [where[k] for k in missing]))))
            else:
                texts = {r["embed_key"]: r["embed_text"] for r in need}
                for i in range(0, len(missing), 64):
                    keys = missing[i : i + 64]
                    vectors.extend(zip(keys, embedder.embed([texts[k] for k in keys])))
        store.write_document(doc_row, added, updated, removed)
        if vectors:
            store.put_vectors(model, [(k, list(map(float, v))) for k, v in vectors])


def _diff(old: dict, new: dict, embedder, stats: IngestStats):
    """Set difference on chunk ids; returns (added, updated, removed, records needing a vector)."""
    added = [r for cid, r in new.items() if cid not in old]
    removed = [cid for cid in old if cid not in new]
    updated, need = [], list(added)
    for cid, r in new.items():
        if cid not in old:
            continue
        before = dict(old[cid], ingested_at=r["ingested_at"])
        if before["embed_key"] != r["embed_key"]:
            need.append(r)
        if before != r:
            updated.append(r)  # refreshed in place; a new source version alone is not counted as a change
        if dict(before, source_version=r["source_version"]) != r:
            stats.metadata_updated += 1
        else:
            stats.unchanged += 1
    stats.added += len(added)
    stats.removed += len(removed)
    if embedder is not None:
        stats.embedded += len(need)
    return added, updated, removed, need
