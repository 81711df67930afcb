"""Ingest on Ray Data: *prepare* as a ``map`` over file paths, *embed* as ``map_batches`` on an actor
pool holding the model, *write* on the driver from a streamed iterator (``ingest --executor ray``).

Why this shape: the walk (hashing, skipping unchanged files) and the writes stay where the store is,
so every guarantee of the local run holds unchanged — per-document transactions with the diff taken
inside the store's lock, set-difference stats, removal of vanished files. What is expensive and has
no store state moves to the cluster:

- *prepare*: each Ray Data row is one file's path and identity (``PrepareTask``'s fields); the bytes
  are read on the worker. Each prepare actor holds a one-process ``sandbox.Pool``, so a file runs
  under the same ``Limits`` (``RLIMIT_AS``, wall time) as in the local pool and a segfault, panic,
  bomb or hang becomes that file's ``PrepareFailure`` with the very same message. An actor that dies
  anyway (a node lost, Ray's memory monitor) is restarted by Ray Data and its rows retried — prepare
  is pure, so a retry changes nothing.
- *embed*: an actor runs the local ``EmbedStage`` over a batch of prepared documents (``num_gpus``
  per actor on a cluster), asking the store (opened read-only on the worker) which embed keys lack
  a vector, so kept chunks are not re-embedded. A worker that cannot open the store embeds every key
  (correct, only slower). Vectors for one key are the model's, whichever actor computed them.
- *write*: on a store that takes several writers (PostgreSQL: ``Store.parallel_writes``), write
  actors open the store themselves and write each document in its own transaction (the diff taken
  under the store's per-document lock, as on the driver); only a summary of each write (its stats
  and errors) comes back. On SQLite (one writer at a time, so nothing to gain) documents are written
  by the driver. Either way rows come back in input order (``preserve_order``) through
  ``iter_batches``; the driver holds one window of tasks (``window`` files) and Ray's bounded
  read-ahead, never the corpus. ``writes`` forces one or the other.

A run whose files are all unchanged creates no dataset and starts no cluster (a no-op stays fast).
This process starts a local cluster (and stops it) unless Ray is already initialised or ``address``
names a running one, which is then only connected to.
"""
from __future__ import annotations

import contextlib
import contextvars
import logging
import pickle
from dataclasses import dataclass, field
from typing import Callable, Iterable, Iterator

from chunkwise.errors import ChunkwiseError, ConfigError, DependencyError
from chunkwise.sandbox.outcome import Limits

RAY_INSTALL_HINT = "pip install 'chunkwise[ray]'"
_NOTHING = object()
_SESSION: contextvars.ContextVar = contextvars.ContextVar("chunkwise_ray_session")
_FILES_PER_BLOCK = 4
_BLOCKS = 1000
_TASK_FIELDS = ("path", "rel", "doc_id", "media_type", "sha256", "size")
WRITES = ("auto", "driver", "workers")
log = logging.getLogger(__name__)


def _ray():
    try:
        import ray
        import ray.data
    except ImportError as exc:
        raise DependencyError(f"--executor ray needs Ray Data ({exc}); install it with: {RAY_INSTALL_HINT}") from exc
    return ray


@dataclass(frozen=True)
class RayExecutor:
    """Where and how wide the Ray stages run. ``address``: a running cluster (``ray://…`` or
    ``HOST:PORT``; None: start a local one with ``num_cpus``, or use the one this process already
    initialised). ``prepare_actors``: actors preparing files (None: the cluster's CPUs left after
    the embedders, at least 1); ``embed_actors`` holding the model, each with ``num_gpus``;
    ``embed_batch``: documents per embed batch; ``window``: files per Ray Data run (what the
    driver holds at once); ``limits``: memory and wall time per file, as in the local pool;
    ``writes``: ``auto`` (write actors when the store takes parallel writers, else the driver),
    ``driver`` or ``workers``; ``write_actors``: how many (None: as many as prepare actors)."""

    address: str | None = None
    prepare_actors: int | None = None
    embed_actors: int = 1
    num_gpus: float = 0.0
    embed_batch: int = 16
    window: int = 50_000
    limits: Limits = field(default_factory=Limits)
    num_cpus: int | None = None
    writes: str = "auto"
    write_actors: int | None = None

    def __post_init__(self):
        if self.writes not in WRITES:
            raise ConfigError(f"Ray executor: writes must be one of {', '.join(WRITES)}, got {self.writes!r}")
        for name in ("prepare_actors", "embed_actors", "embed_batch", "window", "num_cpus", "write_actors"):
            value = getattr(self, name)
            if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
                raise ConfigError(f"Ray executor: {name} must be a positive integer, got {value!r}")
        if isinstance(self.num_gpus, bool) or not isinstance(self.num_gpus, (int, float)) or self.num_gpus < 0:
            raise ConfigError(f"Ray executor: num_gpus must be a number >= 0, got {self.num_gpus!r}")
        if self.address is not None and not (isinstance(self.address, str) and self.address.strip()):
            raise ConfigError(f"--ray-address must name a cluster (HOST:PORT or ray://HOST:PORT), got {self.address!r}")
        _ray()  # fail before any work when Ray is missing

    @contextlib.contextmanager
    def session(self):
        """Keep a cluster this executor starts (or connects to) up until the block ends, so an ingest
        of several PATHs starts it once; nothing starts until a file needs preparing."""
        stack = contextlib.ExitStack()
        token = _SESSION.set(stack)
        try:
            with stack:
                yield self
        finally:
            _SESSION.reset(token)

    def map(self, fn: Callable, items: Iterable) -> Iterator:
        """The executor seam (prepare only, results in input order)."""
        for item, _ in self._run(fn, items, None):
            yield item

    def prepare_and_embed(self, preparer, items: Iterable, embed, progress=None) -> Iterator[tuple[object, dict]]:
        """(prepared item, vectors it needs) in input order, like ``embed.run(executor.map(...))``."""
        for item, vectors in self._run(preparer, items, embed if embed.embedder is not None else None):
            if progress is not None:
                progress.prepared()
                if vectors and embed.on_embedded:
                    embed.on_embedded(len(vectors))
            yield item, vectors

    def writes_in_workers(self, store) -> bool:
        """Whether documents are written by write actors (see ``writes``) rather than the driver."""
        return self.writes == "workers" or self.writes == "auto" and bool(getattr(store, "parallel_writes", False))

    def prepare_embed_write(self, preparer, items: Iterable, embed, spec,
                            progress=None) -> Iterator[object]:
        """Every stage on the cluster (``spec``: a ``pipeline.write.WriteSpec``): ``Written`` summaries
        (and the ``PrepareFailure``s) in input order."""
        from chunkwise.pipeline.write import Written

        for item, _ in self._run(preparer, items, embed if embed.embedder is not None else None, spec):
            if progress is not None:
                progress.prepared()
                if isinstance(item, Written) and item.vectors and embed.on_embedded:
                    embed.on_embedded(item.vectors)
            yield item

    def _run(self, preparer, items: Iterable, embed, spec=None) -> Iterator[tuple[object, dict]]:
        items = iter(items)
        first = next(items, _NOTHING)
        if first is _NOTHING:  # nothing to prepare (a no-op re-ingest): no cluster is started
            return
        window: list = [first]
        scope = _SESSION.get(None)
        with contextlib.ExitStack() as run:
            ray = (scope or run).enter_context(_cluster(self.address, self.num_cpus))
            run.enter_context(_data_context(ray))
            for item in items:
                window.append(item)
                if len(window) >= self.window:
                    yield from self._window(ray, window, preparer, embed, spec)
                    window = []
            if window:
                yield from self._window(ray, window, preparer, embed, spec)

    def _window(self, ray, window: list, preparer, embed, spec=None) -> Iterator[tuple[object, dict]]:
        from chunkwise.pipeline.prepare import PrepareTask

        rows = [{"seq": i, **{f: getattr(t, f) for f in _TASK_FIELDS}}
                for i, t in enumerate(window) if isinstance(t, PrepareTask)]
        results = self._results(ray, rows, preparer, embed, spec) if rows else iter(())
        pending: dict[int, tuple[bytes, bytes | None]] = {}
        for i, task in enumerate(window):
            if not isinstance(task, PrepareTask):  # found while walking: passes through in order
                yield task, {}
                continue
            while i not in pending:
                try:
                    seq, item, vectors = next(results)
                except StopIteration:
                    raise ChunkwiseError(f"the Ray pipeline lost {task.rel}") from None
                pending[seq] = (item, vectors)
            item, vectors = pending.pop(i)
            yield pickle.loads(item), pickle.loads(vectors) if vectors is not None else {}

    def _results(self, ray, rows: list[dict], preparer, embed, spec=None) -> Iterator[tuple[int, bytes, bytes | None]]:
        prepare_n, embed_n, cpus = self._widths(ray, embed is not None)
        # Blocks of a few files (a slow file holds back few others), at most _BLOCKS per window.
        per_block = max(_FILES_PER_BLOCK, -(-len(rows) // _BLOCKS))
        ds = ray.data.from_items(rows, override_num_blocks=-(-len(rows) // per_block))
        pool = ray.data.ActorPoolStrategy
        ds = ds.map(_Prepare, fn_constructor_args=(preparer, self.limits), compute=pool(size=prepare_n), num_cpus=cpus)
        if embed is not None:
            ds = ds.map_batches(_Embed, fn_constructor_args=(embed.embedder, embed.late, embed.store.opens_with, embed.batch_size,
                                                             embed.pool, self.num_gpus),
                                batch_size=self.embed_batch, batch_format="numpy", compute=pool(size=embed_n),
                                num_cpus=cpus, **({"num_gpus": self.num_gpus} if self.num_gpus else {}))
        if spec is not None:  # write actors: each document in its own transaction, on the cluster
            repair = (embed.embedder, embed.late) if embed is not None else (None, None)
            ds = ds.map_batches(_Write, fn_constructor_args=(spec, *repair), batch_size=self.embed_batch,
                                batch_format="numpy", compute=pool(size=self.write_actors or prepare_n), num_cpus=cpus)
        try:
            for batch in ds.iter_batches(batch_size=self.embed_batch, batch_format="numpy", prefetch_batches=1):
                vectors = batch["vectors"] if "vectors" in batch else [None] * len(batch["seq"])
                yield from zip((int(s) for s in batch["seq"]), batch["item"], vectors)
        except ray.exceptions.RayError as exc:
            inner = _inner(exc)
            if isinstance(inner, ChunkwiseError):  # the run's own error (a bad model file, an embedding service down)
                raise inner from None
            raise ChunkwiseError(f"the Ray pipeline failed: {_cause(exc)}") from exc

    def _widths(self, ray, embedding: bool) -> tuple[int, int, float]:
        """(prepare actors, embed actors, CPUs each): what was asked, or the cluster's CPUs shared
        out; actors that ask more CPUs than the cluster has get a share each (they would never start)."""
        total = max(1, int(ray.cluster_resources().get("CPU", 1)))
        embed_n = self.embed_actors if embedding else 0
        prepare_n = self.prepare_actors or max(1, total - embed_n)
        return prepare_n, embed_n, min(1.0, total / (prepare_n + embed_n))


class _Prepare:
    """A Ray Data actor: one file per row, contained in this actor's sandbox worker process."""

    def __init__(self, preparer, limits: Limits) -> None:
        from chunkwise.sandbox import Pool

        self.pool = Pool(preparer, workers=1, limits=limits, isolate=True)

    def __call__(self, row: dict) -> dict:
        from chunkwise.pipeline.prepare import PrepareFailure, PrepareTask

        task = PrepareTask(*(str(row[f]) for f in _TASK_FIELDS[:-1]), int(row["size"]))
        (out,) = list(self.pool.map([task]))
        item = out.value if out.ok else PrepareFailure(task, out.failure.reason)
        return {"seq": int(row["seq"]), "item": pickle.dumps(item, protocol=5)}

    def __del__(self) -> None:
        pool = getattr(self, "pool", None)
        if pool is not None:
            pool.close()


class _NothingStored:
    """The vector lookup of a worker that cannot open the store: every key is embedded."""

    def missing_vectors(self, keys) -> set[str]:
        return set(keys)


class _Embed:
    """A Ray Data actor holding the embedder: vectors for a batch of prepared documents."""

    def __init__(self, embedder, late, location: str, batch_size: int, pool: int, num_gpus: float) -> None:
        if num_gpus and getattr(embedder, "device", None) == "cpu" and getattr(embedder, "_model", None) is None:
            embedder.device = "cuda"  # the actor was given a GPU: the model loads onto it
        self.embedder, self.late, self.location = embedder, late, location
        self.batch_size, self.pool = batch_size, pool
        self.reachable = True

    @contextlib.contextmanager
    def _lookup(self):
        """The store, read-only, for one batch (a connection per batch: Ray may call from any thread)."""
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

    def __call__(self, batch: dict) -> dict:
        from chunkwise.pipeline.embed import EmbedStage

        items = [pickle.loads(b) for b in batch["item"]]
        with self._lookup() as store:
            stage = EmbedStage(store, self.embedder, late=self.late, batch_size=self.batch_size, pool=self.pool)
            vectors = [pickle.dumps(v, protocol=5) for _, v in stage.run(items)]
        return {"seq": batch["seq"], "item": batch["item"], "vectors": vectors}


class _Write:
    """A Ray Data actor writing prepared documents, one short transaction each, through the store
    interface (a connection per batch: Ray may call from any thread). ``embedder``/``late``: to
    re-embed keys a concurrent run collected between embedding and writing (loaded only then)."""

    def __init__(self, spec: WriteSpec, embedder=None, late=None) -> None:
        self.spec, self.embedder, self.late = spec, embedder, late

    def __call__(self, batch: dict) -> dict:
        from chunkwise.pipeline.embed import EmbedStage
        from chunkwise.pipeline.prepare import PrepareFailure
        from chunkwise.pipeline.write import IngestStats, WriteStage, Written
        from chunkwise.store import open_store

        spec, out = self.spec, []
        vectors = batch["vectors"] if "vectors" in batch else [None] * len(batch["item"])
        with open_store(spec.location, timeout=spec.timeout) as store:
            embed = EmbedStage(store, self.embedder, late=self.late)
            for raw, packed in zip(batch["item"], vectors):
                item = pickle.loads(raw)
                if isinstance(item, PrepareFailure):
                    out.append(raw)
                    continue
                got = pickle.loads(packed) if packed is not None else {}
                stats = IngestStats(errors=[{"path": item.task.rel, "error": p} for p in item.problems])
                write = WriteStage(store, root=spec.root, inputs=spec.inputs, now=spec.now, model=spec.model,
                                   embedding=spec.embedding, stats=stats)
                try:
                    write.write(item, got, repair=embed.repair)
                except ChunkwiseError as exc:
                    stats.errors.append({"path": item.task.rel, "error": str(exc)})
                out.append(pickle.dumps(Written(item.task, stats, len(got)), protocol=5))
        return {"seq": batch["seq"], "item": out}


@contextlib.contextmanager
def _cluster(address: str | None, num_cpus: int | None):
    """Ray, initialised for this run: an existing session is used as it is; otherwise this process
    connects to ``address`` or starts a local cluster, and disconnects (stops it) afterwards."""
    ray = _ray()
    if ray.is_initialized():
        yield ray
        return
    quiet = {"include_dashboard": False, "logging_level": logging.WARNING, "log_to_driver": True}
    try:
        if address:
            ray.init(address=address, **quiet)
        else:
            ray.init(num_cpus=num_cpus, **quiet)
    except (ConnectionError, ValueError, RuntimeError) as exc:
        with contextlib.suppress(Exception):
            ray.shutdown()
        where = f"the Ray cluster at {address}" if address else "a local Ray cluster"
        raise ConfigError(f"cannot start or reach {where} ({_cause(exc)}); check --ray-address (HOST:PORT of "
                          f"`ray start --head`), or drop it to start a local one") from exc
    try:
        yield ray
    finally:
        ray.shutdown()


@contextlib.contextmanager
def _data_context(ray):
    """Rows in input order (the store's row keys and the error list match a local run), and no
    progress bars on the terminal (the CLI draws its own; ``--json`` keeps stdout clean)."""
    ctx = ray.data.DataContext.get_current()
    saved = (ctx.execution_options.preserve_order, ctx.enable_progress_bars, ctx.print_on_execution_start)
    chatter = logging.getLogger("ray.data")
    level = chatter.level
    ctx.execution_options.preserve_order = True
    ctx.enable_progress_bars = False
    ctx.print_on_execution_start = False
    chatter.setLevel(logging.ERROR)  # "execution finished", "progress bars disabled": not the user's business
    try:
        yield
    finally:
        ctx.execution_options.preserve_order, ctx.enable_progress_bars, ctx.print_on_execution_start = saved
        chatter.setLevel(level)


def _inner(exc: BaseException) -> BaseException:
    """The worker's own exception inside Ray's wrappers."""
    seen, todo, last = set(), [exc], exc
    while todo:
        e = todo.pop(0)
        if e is None or id(e) in seen:
            continue
        seen.add(id(e))
        if isinstance(e, ChunkwiseError) and not isinstance(e, _ray().exceptions.RayError):
            return e
        last = e
        todo += [getattr(e, "cause", None), e.__cause__, e.__context__]
    return last


def _cause(exc: BaseException) -> str:
    """The innermost error's one line (Ray wraps a worker's exception in its own)."""
    inner = _inner(exc)
    text = str(inner).strip().splitlines()
    return f"{type(inner).__name__}: {text[-1] if text else ''}".rstrip(": ")


__all__ = ["RAY_INSTALL_HINT", "RayExecutor", "WRITES"]
