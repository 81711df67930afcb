"""The Ray actors of ``--executor ray``: *prepare* (contained processes), *embed* (a model) and
*write* (the store, opened on the worker). Plain classes: ``raystream`` turns them into Ray actors
and calls them with a batch (a list) at a time; nothing here imports Ray, so they are tested and
pickled like any value.

Why plain actors and not Ray Data: a Ray Data run costs seconds of fixed start on top of the
actors' (a streaming executor, its stats actor, ``import ray.data`` with pyarrow in every actor) —
measured 4.6-10 s for a trivial pipeline on this machine, against 1.1 s for two plain actors —
and the stages need nothing Ray Data adds: batches are lists, the order is kept by the driver.
"""
from __future__ import annotations

import contextlib
import logging
import threading
from typing import Iterable

from chunkwise.errors import ChunkwiseError, StoreWriteError, about
from chunkwise.sandbox.outcome import Limits

log = logging.getLogger(__name__)


class Prepare:
    """A batch of files, each contained in this actor's sandbox worker processes (a crash, a bomb or
    a hang is that file's ``PrepareFailure``; the worker is replaced). With a ``spec`` it then
    writes them as a write actor does (the stages folded into one actor)."""

    def __init__(self, preparer, limits: Limits, workers: int = 1, spec=None, embedder=None, late=None) -> None:
        from chunkwise.sandbox import Pool

        self.pool = Pool(preparer, workers=workers, limits=limits, isolate=True)
        self.writer = Write(spec, embedder, late) if spec is not None else None

    def run(self, tasks: list) -> list:
        from chunkwise.pipeline.prepare import PrepareFailure

        items = (out.value if out.ok else PrepareFailure(out.item, out.failure.reason) for out in self.pool.map(tasks))
        if self.writer is not None:  # each written as it comes, while the sandbox prepares the next files
            return self.writer.write(items, [None] * len(tasks))
        return list(items)

    def __del__(self) -> None:
        pool = getattr(self, "pool", None)
        if pool is not None:
            pool.close()


class _NothingStored:
    """The vector lookup of a worker that cannot open the store: every key is embedded."""

    def vectors(self, keys, *, values: bool = True) -> dict:
        return {}


class Embed:
    """Holds the embedder: the vectors each prepared document of a batch needs."""

    def __init__(self, embedder, late, location: str, batch_size: int, pool: int, num_gpus: float) -> None:
        if num_gpus and getattr(embedder, "device", None) == "cpu" and getattr(embedder, "_model", None) is None:
            embedder.device = "cuda"  # the actor was given a GPU: the model loads onto it
        self.embedder, self.late, self.location = embedder, late, location
        self.batch_size, self.pool = batch_size, pool
        self.reachable = True

    @contextlib.contextmanager
    def _lookup(self):
        """The store, read-only, for one batch."""
        from chunkwise.store import open_store

        if self.reachable:
            try:
                store = open_store(self.location, readonly=True)
            except ChunkwiseError as exc:
                log.warning("chunkwise: %s; this worker embeds every key", exc)
                self.reachable = False
            else:
                with store:
                    yield store
                return
        yield _NothingStored()

    def run(self, items: list) -> list[dict]:
        from chunkwise.pipeline.embed import EmbedStage

        with self._lookup() as store:
            stage = EmbedStage(store, self.embedder, late=self.late, batch_size=self.batch_size, pool=self.pool)
            return [v for _, v in stage.run(items)]


class Write:
    """Writes prepared documents, one short transaction each, through the store interface; only a
    summary of each write (``Written``) goes back. ``embedder``/``late``: to take a cheap embedder's
    vectors the store lacks, and to re-embed keys a concurrent run collected between embedding and
    writing (a model loads only then). The store stays open for the actor's life, one connection
    per thread Ray calls from (an SQLite connection serves its own thread).

    A write that fails because the store cannot take it (``StoreWriteError``: a full disk, a server
    out of space) fails the run, as on the driver: every later document would fail alike, and the
    run must stop with one message rather than list each file."""

    def __init__(self, spec, embedder=None, late=None) -> None:
        self.spec, self.embedder, self.late = spec, embedder, late
        self.local, self.opened = threading.local(), []

    def _store(self):
        store = getattr(self.local, "store", None)
        if store is None:
            from chunkwise.store import open_store

            store = self.local.store = open_store(self.spec.location, timeout=self.spec.timeout)
            self.opened.append(store)
        return store

    def run(self, items: list, vectors: list | None = None) -> list:
        return self.write(items, vectors if vectors is not None else [None] * len(items))

    def write(self, items: Iterable, vectors: Iterable) -> list:
        """``Written`` summaries (``PrepareFailure``s as they are), in order. ``vectors``: a document's
        from the embed actors, or None (a cheap embedder's: the ones the store lacks)."""
        from chunkwise.pipeline.embed import EmbedStage
        from chunkwise.pipeline.prepare import PrepareFailure
        from chunkwise.pipeline.write import IngestStats, WriteStage, Written

        spec, store, out = self.spec, self._store(), []
        embed = EmbedStage(store, self.embedder, late=self.late)
        for item, got in zip(items, vectors):
            if isinstance(item, PrepareFailure):
                out.append(item)
                continue
            if got is None:  # what the store lacks of the vectors made with the document
                ((_, got),) = embed.run([item]) if self.embedder is not None else ((item, {}),)
            stats = IngestStats(errors=[{"path": item.task.rel, "error": p} for p in item.problems],
                                warnings=[about(item.task.rel, w) for w in item.warnings])
            write = WriteStage(store, root=spec.root, inputs=spec.inputs, now=spec.now, model=spec.model,
                               embedding=spec.embedding, stats=stats)
            try:
                write.write(item, got, repair=embed.repair)
            except StoreWriteError:
                raise
            except ChunkwiseError as exc:
                stats.errors.append({"path": item.task.rel, "error": str(exc)})
            out.append(Written(item.task, stats, len(got)))
        return out

    def __del__(self) -> None:
        for store in getattr(self, "opened", ()):
            with contextlib.suppress(Exception):  # another thread's SQLite connection: the process exit closes it
                store.close()
