"""Idempotent ingestion: walk -> prepare -> embed -> write, one way, per PATH argument.

The walk (main process) hashes each file and skips the ones the store holds in this exact version
with these exact inputs before reading them; the rest become ``PrepareTask``s for the executor
(``executors.py``: in-process, or a worker pool), whose results stream through the embed stage
(``embed.py``: vectors for missing keys, batched across documents, no transaction open) into the
write stage (``write.py``: one short transaction per document). Documents under an ingested folder
that no longer exist lose their chunks; a file that fails keeps its previous chunks. The run ends by
re-deriving every version link from the documents now stored (``versions.py``).

Identity: a document is (root, path). A PATH inside a root the store already knows is ingested
under that root (re-ingesting a sub-folder or one file updates the same documents; only a folder
argument removes documents, and only inside itself); any other PATH becomes a new root. A new
document's id is its path unless another root already holds that id, then ``<root name>/<path>``;
a front matter ``id`` held by another document is refused for that file.

``embed_mode="late"`` embeds by late chunking (``embed/late.py``): keys come from the window plan,
which needs only the tokenizer, so the diff and a dry run never load the model.
"""
from __future__ import annotations

import contextlib
import itertools
import json
import os
import tempfile
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable, Iterator, Mapping, Sequence

from chunkwise import ids
from chunkwise.access import AccessTags, parse_acl_map
from chunkwise.config import ChunkConfig
from chunkwise.enrich.records import RECORD_FORMAT
from chunkwise.enrich.versions import RECIPE as VERSIONS_RECIPE
from chunkwise.errors import ChunkwiseError, ConfigError, StoreWriteError, about
from chunkwise.pipeline.chunk import make_chunker
from chunkwise.pipeline.embed import EmbedStage
from chunkwise.pipeline.packing import PackingPreparer
from chunkwise.pipeline.executors import Executor, contained, prepare_and_embed, session
from chunkwise.pipeline.prepare import Prepared, PrepareFailure, Preparer, PrepareSettings, PrepareTask
from chunkwise.pipeline.progress import NoProgress, Progress
from chunkwise.pipeline.schedule import largest_first
from chunkwise.pipeline.versions import derive_links
from chunkwise.pipeline.write import IngestStats, WriteSpec, WriteStage, Written, unchanged


_MAGIC = frozenset("*?[")


@dataclass(frozen=True)
class _Run:
    """The settings a run goes with, resolved against the store's (``settings.py``)."""

    config: ChunkConfig
    embedder: object | None
    late: object | None
    model: str  # the embed_model name in every key ("none" without vectors)
    late_params: list
    chunker: object | None  # None: built before the first file that needs preparing (a no-op run never does)


def _now() -> str:
    return datetime.now(timezone.utc).replace(microsecond=0).isoformat().replace("+00:00", "Z")


def ingest(
    paths: Sequence[str | os.PathLike],
    db,
    config: ChunkConfig | None = None,
    *,
    chunk_options: Mapping | None = None,
    default: ChunkConfig | None = None,
    embedder=None,
    acl: AccessTags | Sequence[str] | str = (),
    acl_map: Mapping[str, AccessTags | Sequence[str] | str] | None = None,
    dry_run: bool = False,
    now: str | None = None,
    progress: Progress | None = None,
    embed_mode: str = "plain",
    executor: Executor | None = None,
    workers: int = 1,
    limits=None,
    reconfigure: bool = False,
    warn: Callable[[str], None] | None = None,
    timeout: float = 60.0,
    include: Sequence[str] = (),
    exclude: Sequence[str] = (),
    strict: bool = False,
) -> IngestStats:
    """Ingest files and folders into the store at ``db`` (a path or URL); returns chunk statistics.

    Settings (``settings.py``): ``config`` is compared with the store's recorded config (None: use
    it, or ``default`` for a new store); ``chunk_options`` are ChunkConfig fields applied over that;
    ``embedder`` is an Embedder, None (no vectors), a name, or ``"auto"`` (the store's); a change
    is refused unless ``reconfigure``. ``embed_mode``: ``"plain"`` embeds each chunk's
    ``embed_text`` alone; ``"late"`` pools each chunk's vector from a transformer pass over its
    surrounding window (needs minilm); ``"auto"``: the store's. ``executor``: where *prepare* runs;
    by default ``workers`` worker processes (one at least: this process never parses), each file under ``limits`` (a
    ``sandbox.Limits``: memory and wall time per file), so a crash, a hang or a bomb is that file's
    error. ``progress``: a ``pipeline.progress.Progress`` (files prepared, chunks embedded,
    documents written). ``warn`` receives warnings the moment they are known (they are
    also in ``stats.warnings``). A second writer waits up to ``timeout`` seconds per write.

    Nothing is passed over silently: a file not read (a type chunkwise does not read, an empty
    file, a pipe) is counted by type in ``stats.skipped`` and an empty one is also a warning;
    ``strict`` makes each such file an error. A PATH that does not exist is a ``ConfigError``
    before anything is opened or created."""
    from chunkwise import __version__
    from chunkwise.pipeline.settings import check_model, resolve
    from chunkwise.store import is_server_url, open_store

    now = now or _now()
    # Prepared only in worker processes of this machine's pool, never in this process.
    own_pool = executor is None or getattr(executor, "in_workers", False)
    progress = progress or NoProgress()
    stats = IngestStats()
    acl = AccessTags.parse(acl, "acl")  # one grammar for every entry point; bad tags fail before any work
    acl_map = parse_acl_map(acl_map or {}, "acl_map")
    paths = _check_paths(paths)

    def note(message: str) -> None:
        stats.warnings.append(message)
        if warn is not None:
            warn(message)

    def setup(stored: Mapping[str, str], location: str, eager: bool = False) -> _Run:
        chosen = resolve(stored, location, config=config, options=chunk_options, default=default or ChunkConfig(),
                         embedder=embedder, embed_mode=embed_mode, reconfigure=reconfigure)
        if chosen.notice:
            note(chosen.notice)
        late = _late_encoder(chosen.embed_mode, chosen.embedder)
        model = chosen.embedder.name if chosen.embedder is not None else "none"
        late_params: list = []
        if late is not None:
            from chunkwise.embed.late import DEFAULT_OVERLAP, late_model_name

            model = late_model_name(model)
            late_params = [late.max_tokens, DEFAULT_OVERLAP]
        check_model(stored, location, model, reconfigure)
        # A bad tokenizer or config fails the run before any file is prepared, never per file: for a
        # new store here, before it is created; else before the first file that needs preparing, so a
        # no-op re-ingest never loads the tokenizer.
        resolve_tokenizer(chosen.config)
        return _Run(chosen.config, chosen.embedder, late, model, late_params,
                    make_chunker(chosen.config) if eager and not pooled(chosen.config) else None)

    def pooled(config: ChunkConfig) -> bool:
        """Whether only the pool's workers need the chunker (this process never prepares): then it
        is not built here, where it cost 0.2 s of the single main process's CPU per run."""
        return own_pool and ships_with(config)

    # A store that does not exist yet is not created for a run that cannot start.
    fresh = isinstance(db, (str, os.PathLike)) and not is_server_url(db) and not os.path.exists(db)
    planned = setup({}, os.fspath(db), eager=True) if fresh else None
    with _target(db, fresh and dry_run) as target, open_store(target, timeout=timeout) as store, \
            contextlib.ExitStack() as scope:
        stored = store.settings()
        r = planned if planned is not None and not stored else setup(stored, store.location)
        config, embedder, late, model, late_params = r.config, r.embedder, r.late, r.model, r.late_params
        if not acl and not acl_map:
            note("no access tags given (--acl or --acl-map): documents without an acl in their front matter are "
                 "stored in review and no search will ever return them")
        # Everything besides the source bytes that decides a document's records; the same for the run.
        # The record format is one of them: records of an older format are refreshed once, in place.
        inputs = ids.fingerprint([config.fingerprint(), model, list(acl),
                                  sorted((k, list(v)) for k, v in acl_map.items()), *late_params, RECORD_FORMAT,
                                  VERSIONS_RECIPE])
        # A cheap embedder (hashing) runs where each document is prepared, in the workers.
        local = embedder if late is None and not dry_run and getattr(embedder, "cheap", False) else None
        settings = PrepareSettings(config, model, acl, acl_map, now, late, local)
        # A big PDF's pages are shared among the pool's workers (pipeline/split.py) where the
        # executor runs split items (the contained pool; not Ray's actors). Its join carries every
        # page's scan to a worker: the pool's feeder never blocks on that send (sandbox/outbox.py),
        # which once deadlocked against a worker sending its answer.
        executor = executor or contained(workers, limits)
        preparer = Preparer(settings, r.chunker, split=getattr(executor, "shares", 1))
        warm = (lambda: None) if pooled(config) else preparer.warm_up  # workers warm up themselves
        scope.enter_context(session(executor))
        finish = None if dry_run else scope.enter_context(store.run(now))
        embed = EmbedStage(store, None if dry_run else (late or embedder), late=late, on_embedded=progress.embedded)
        prepared = 0  # documents read and written this run (none: the version links cannot have changed)
        for raw in paths:
            root, prefix, is_dir = _scope(store, Path(raw), dry_run)
            write = WriteStage(store, root=root, inputs=inputs, now=now, model=model, embedding=embedder is not None,
                               stats=stats, dry_run=dry_run)
            seen: set[str] = set()
            known: dict = {}
            tasks = largest_first(_tasks(store, Path(raw), root, prefix, inputs, stats, seen, progress, include,
                                         exclude, before_first=warm, known=known))
            batch = scope.enter_context(contextlib.ExitStack())
            batch.enter_context(write.batched())
            if hasattr(executor, "on_idle"):  # commit the open batch while the pool makes us wait (once it is old enough)
                executor.on_idle = write.idle
                batch.callback(setattr, executor, "on_idle", None)
            for item, vectors in _stages(executor, preparer, tasks, embed, progress, store, write, timeout):
                seen.add(item.task.rel)
                prepared += 1
                if isinstance(item, PrepareFailure):  # a file that failed this time keeps its old chunks
                    if item.skipped:
                        _skipped(item, stats, note, strict)
                    else:
                        stats.errors.append({"path": item.task.rel, "error": item.error})
                    continue
                if isinstance(item, Written):  # written on the cluster, in its own transaction
                    stats.merge(item.stats)
                    stats.errors.extend(item.stats.errors)
                    for message in item.stats.warnings:  # the extraction's, as in a local run
                        note(message)
                    progress.written()
                    continue
                stats.errors.extend({"path": item.task.rel, "error": p} for p in item.problems)
                for message in item.warnings:
                    note(about(item.task.rel, message))
                try:
                    write.write(item, vectors, repair=embed.repair)
                except StoreWriteError:  # a full disk fails the run, not each remaining document
                    raise
                except ChunkwiseError as exc:
                    stats.errors.append({"path": item.task.rel, "error": str(exc)})
                progress.written()
            batch.close()  # committed: what follows (removals, version links) takes its own transactions
            if is_dir and not seen.issuperset(known):  # documents gone from the folder (the walk saw the rest)
                stats.removed += store.remove_missing(root, prefix, seen, dry_run=dry_run)
        if not dry_run and (prepared or stats.removed):
            unresolved: list[str] = []
            store.relink_versions(lambda docs: derive_links(docs, unresolved.append))
            for message in unresolved:
                note(message)
        # The store's servability is counted when this run changed it (a scan of every chunk: 0.045 s
        # of CPU on 10,812; a whole no-op run of 10,000 files took 0.39 s) and recorded with it; a run
        # that changed nothing states the recorded verdict again, so a re-run still says what is held.
        changed = bool(stats.added or stats.removed or stats.metadata_updated or stats.embedded)
        verdict = _servability(store) if changed and not dry_run else stored.get(SERVABILITY, "")
        if not dry_run:
            finish(_now(), stats.to_dict(), {
                "config": config.to_json(), "fingerprint": config.fingerprint(), "embedder": model,
                "tool_version": __version__, **({SERVABILITY: verdict} if changed else {})})
        if verdict and not dry_run:
            again = "" if changed else " (as the last run that wrote counted it; chunkwise check counts afresh)"
            note(f"{store.location}: {verdict}{again}; see chunkwise review --db {store.location}")
        stats.in_store = store.count()
    return stats


SERVABILITY = "servability"  # the store setting holding the last verdict ("" when every chunk is served)


def _servability(store) -> str:
    """How many of the store's chunks can never be served, and why; "" when every one can."""
    counts = store.counts()
    if not counts.chunks or counts.servable >= counts.chunks:
        return ""
    reasons = ", ".join(f"{k} {v}" for k, v in sorted(counts.review_reasons.items()))
    what = (f"none of its {counts.chunks} chunks can be served" if not counts.servable else
            f"{counts.chunks - counts.servable} of its {counts.chunks} chunks can never be served")
    return f"{what} ({reasons or 'no access tags'})"


def _check_paths(paths) -> list:
    """The PATH arguments as a list (one path alone is a list of one), refusing a PATH that does not
    exist (a glob may match nothing): a typo is a usage error, and the run must not create an empty
    store or count the path as one failed file."""
    paths = [paths] if isinstance(paths, (str, os.PathLike)) else list(paths)
    if not paths:
        raise ConfigError("nothing to ingest: name at least one file, folder or glob")
    for raw in paths:
        if not os.path.lexists(raw) and not _MAGIC.intersection(os.fspath(raw)):
            raise ConfigError(f"{os.fspath(raw)}: no such file or folder")
    return paths


def _skipped(item: PrepareFailure, stats: IngestStats, note: Callable[[str], None], strict: bool) -> None:
    """A file the run did not read: counted by type; with ``strict`` an error, else an empty file or
    a pipe is a warning (a type chunkwise does not read is only counted: folders hold many)."""
    stats.skip(item.task.rel)
    if strict:
        stats.errors.append({"path": item.task.rel, "error": f"{item.error} (--strict: every file must be read)"})
    elif "unsupported file" not in item.error:
        note(item.error)


def _stages(executor, preparer, tasks, embed, progress, store, write, timeout):
    """(item, vectors) from *prepare* and *embed*; with an executor that writes on its workers (Ray
    on a store that takes parallel writers) the items come back already written (``Written``)."""
    if write.dry_run or not getattr(executor, "writes_in_workers", lambda _: False)(store):
        from chunkwise.sandbox import PoolExecutor

        if isinstance(executor, PoolExecutor):  # records cross a pipe: packed, written a batch at a time
            preparer = PackingPreparer(preparer, store.capabilities.row_codec)
        return prepare_and_embed(executor, preparer, tasks, embed, progress)
    spec = WriteSpec(store.opens_with, write.root, write.inputs, write.now, write.model, write.embedding, timeout)
    return ((item, {}) for item in executor.prepare_embed_write(preparer, tasks, embed, spec, progress))


@contextlib.contextmanager
def _target(db, empty: bool):
    """``db``, or for a dry run against a store not made yet an empty one in a temporary folder:
    a dry run writes nothing, not even the new store's file."""
    if not empty:
        yield db
        return
    with tempfile.TemporaryDirectory(prefix="chunkwise-dry-run-") as folder:
        yield os.path.join(folder, "store.db")


def _scope(store, path: Path, dry_run: bool) -> tuple[str, str, bool]:
    """(root, prefix under it, whether PATH is a folder) for one PATH argument (see the module doc).
    The prefix selects the documents PATH can reach: a folder's ``sub/``, a file's own path."""
    target = Path(os.path.abspath(path))
    is_dir = target.is_dir()
    folder, single = (target, False) if is_dir else (target.parent, True)
    if not os.path.lexists(target) and _MAGIC.intersection(str(path)):  # a glob: its fixed leading folders
        parts = []
        for part in Path(path).parts[:-1]:
            if _MAGIC.intersection(part):
                break
            parts.append(part)
        folder, single = Path(os.path.abspath(os.path.join(*parts) if parts else ".")), False
    root = next((r for r in sorted(store.roots(), key=len, reverse=True)
                 if folder == Path(r) or folder.is_relative_to(r)), None)
    if root is None:
        root = str(folder)
        if not dry_run:
            store.add_root(root)
    rel = (target if single else folder).relative_to(root).as_posix()
    prefix = rel if single else "" if rel == "." else rel + "/"
    return root, prefix, is_dir


def _tasks(store, path: Path, root: str, prefix: str, inputs: str, stats: IngestStats,
           seen: set[str], progress: Progress, include=(), exclude=(),
           before_first: Callable[[], None] = lambda: None, known: dict | None = None,
           ) -> Iterator[PrepareTask | PrepareFailure]:
    """The walk: a task per file to prepare; unchanged files are counted and skipped unread.
    ``before_first`` runs once, before the first file to prepare is handed on; ``known`` receives
    the stored documents under ``root``/``prefix`` (path -> state)."""
    from chunkwise.sources import SourceError, iter_sources

    known = known if known is not None else {}
    known.update(store.document_states(root, prefix))

    def held(rel: str, sha256: str) -> bool:  # same bytes, same inputs: skipped, never read again
        state = known.get(rel)
        if state is None or not unchanged(state, sha256, inputs):
            return False
        seen.add(rel)
        stats.skipped_documents += 1
        stats.unchanged += state.chunk_count
        progress.skipped()
        return True

    first = True
    for src in iter_sources([path], root=root, include=include, exclude=exclude, held=held if known else None):
        if isinstance(src, SourceError):
            rel = src.doc_id or str(src.path)
            yield PrepareFailure(PrepareTask(str(src.path), rel, rel, "", ""), src.error, src.skipped)
            continue
        if first:
            before_first()
            first = False
        yield PrepareTask(str(src.path), src.doc_id, _doc_id(store, root, src.doc_id), src.media_type, src.sha256,
                          src.size)


def _doc_id(store, root: str, rel: str) -> str:
    """The id for the document at ``rel`` under ``root``: its path, unless another document holds it."""
    name = Path(root).name or "root"
    candidates = itertools.chain([rel, f"{name}/{rel}"], (f"{name}-{i}/{rel}" for i in range(2, 1000)))
    for candidate in candidates:  # lazily: nearly always the first is free
        held = store.doc_id_owner(candidate)  # (root, path): not the whole documents row, per walked file
        if held is None or tuple(held) == (root, rel):
            return candidate
    raise ConfigError(f"{rel}: no free document id under {root}")  # pragma: no cover - 1000 roots named alike


def resolve_tokenizer(config: ChunkConfig) -> None:
    """Fail fast, without loading it, when the configured tokenizer cannot be found."""
    if config.unit == "tokens":
        from chunkwise.chunking.sizing import resolve_tokenizer_file, tiktoken_encoding

        if tiktoken_encoding(config.tokenizer, config.backend) is None:
            resolve_tokenizer_file(config.tokenizer)


def ships_with(config: ChunkConfig) -> bool:
    """Whether the chunker of ``config`` loads only what chunkwise ships (its tokenizer: MiniLM's, a
    tiktoken encoding, or none; not the semantic strategy's model), so it cannot fail to load: a
    worker may be the first to build it. A tokenizer file a user names is loaded here first, so a
    bad one fails the run before the store is created (as ``resolve_tokenizer`` cannot tell)."""
    if config.strategy == "semantic":
        return False
    if config.unit != "tokens":
        return True
    from chunkwise.chunking.sizing import resolve_tokenizer_file, tiktoken_encoding
    from chunkwise.models import minilm_tokenizer_path

    return tiktoken_encoding(config.tokenizer, config.backend) is not None or \
        resolve_tokenizer_file(config.tokenizer) == minilm_tokenizer_path()


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


__all__ = ["IngestStats", "Prepared", "ingest"]
