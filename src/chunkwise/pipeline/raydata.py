"""Ingest on Ray Data: *prepare* as a map over file paths (``map_batches``, a batch of paths per
call), *embed* as ``map_batches`` on an actor pool holding the model, *write* on the driver from a
streamed iterator or on the cluster (``ingest --executor ray``).

Why this shape: the walk (hashing, skipping unchanged files) stays where the store is and the
writes go through the store interface, so every guarantee of the local run holds unchanged —
per-document transactions with the diff taken inside the store's lock, set-difference stats,
removal of vanished files. What is expensive and has no store state moves to the cluster:

- *prepare*: each Ray Data row is one file's path and identity (``PrepareTask``'s fields); the bytes
  are read on the worker. A call takes a batch of files (``prepare_batch``: per-call costs shared,
  few files held back by a slow one). Each prepare actor holds a ``sandbox.Pool`` of as many
  contained processes as a node's CPUs allow (up to 4; ``actor_workers``), so each file runs under
  the same ``Limits`` (``RLIMIT_AS``, wall time) as in the local pool and a segfault, panic, bomb
  or hang becomes that file's ``PrepareFailure`` with the very same message while the rest of the
  batch comes back. An actor that dies anyway (a node lost, Ray's memory monitor) is restarted by
  Ray Data and its batch retried — prepare is pure, so a retry changes nothing.
- *embed*: a model runs on an actor pool of its own: an actor runs the local ``EmbedStage`` over a
  batch of prepared documents (``num_gpus`` per actor on a cluster), asking the store (opened
  read-only on the worker) which embed keys lack a vector, so kept chunks are not re-embedded. A
  worker that cannot open the store embeds every key (correct, only slower). Vectors for one key
  are the model's, whichever actor computed them. A cheap embedder (hashing) needs no actors: it
  runs where each file is prepared, as in the local pool, and the writer keeps the vectors the
  store lacks.
- *write*: on a store that takes several writers (PostgreSQL: ``Capabilities.parallel_writes``), actors
  open the store themselves (one connection each, kept for the run) and write each document in
  its own transaction (the diff taken under the store's per-document lock, as on the driver); only
  a summary of each write (its stats and errors) comes back. With a cheap embedder or none the
  prepare actors write what they prepared (one pool, no hop through the object store); after
  embed actors (or with ``write_actors`` given) a write pool does. On SQLite (one writer at a
  time, so nothing to gain) documents are written by the driver. Either way rows come back in
  input order (``preserve_order``) through ``iter_batches``; the driver holds one window of tasks
  (``window`` files) and Ray's bounded read-ahead, never the corpus. ``writes`` forces the driver
  or the cluster.

A run whose files are all unchanged creates no dataset and starts no cluster (a no-op stays fast).
This process starts a local cluster (and stops it) unless Ray is already initialised or ``address``
names a running one, which is then only connected to.
"""
from __future__ import annotations

import contextlib
import contextvars
import itertools
import logging
import pickle
import threading
from dataclasses import dataclass, field
from typing import Callable, Iterable, Iterator

from chunkwise.errors import ChunkwiseError, ConfigError, DependencyError
from chunkwise.sandbox.outcome import Limits
from chunkwise.pipeline.ray_address import check_reachable

RAY_INSTALL_HINT = "pip install 'chunkwise[ray]'"
_NOTHING = object()
_SESSION: contextvars.ContextVar = contextvars.ContextVar("chunkwise_ray_session")
_FILES_PER_BATCH = 16
_BATCHES = 1000
_ACTOR_WORKERS = 4
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
    initialised). ``prepare_actors``: actors preparing files, ``actor_workers`` files at once each
    in contained processes (None: the cluster's CPUs left after the embedders shared out, up to 4
    per actor and no more than the smallest node has, 1 per actor when it also writes); ``prepare_batch``: files per prepare call;
    ``embed_actors`` holding a model (not started for a cheap embedder), each with ``num_gpus``;
    ``embed_batch``: documents per embed batch; ``window``: files per Ray Data run (what the
    driver holds at once); ``limits``: memory and wall time per file, as in the local pool;
    ``writes``: ``auto`` (on the cluster when the store takes parallel writers, else the driver),
    ``driver`` or ``workers``; ``write_actors``: a write pool of its own of this size (None: the
    prepare actors write, or after embed actors as many write actors as prepare actors)."""

    address: str | None = None
    prepare_actors: int | None = None
    embed_actors: int = 1
    num_gpus: float = 0.0
    embed_batch: int = 16
    prepare_batch: int = _FILES_PER_BATCH
    actor_workers: int | None = None
    window: int = 50_000
    limits: Limits = field(default_factory=Limits)
    num_cpus: int | None = None
    writes: str = "auto"
    write_actors: int | None = None

    def __post_init__(self):
        if self.writes not in WRITES:
            raise ConfigError(f"Ray executor: writes must be one of {', '.join(WRITES)}, got {self.writes!r}")
        for name in ("prepare_actors", "embed_actors", "embed_batch", "prepare_batch", "actor_workers", "window",
                     "num_cpus", "write_actors"):
            value = getattr(self, name)
            if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
                raise ConfigError(f"Ray executor: {name} must be a positive integer, got {value!r}")
        if isinstance(self.num_gpus, bool) or not isinstance(self.num_gpus, (int, float)) or self.num_gpus < 0:
            raise ConfigError(f"Ray executor: num_gpus must be a number >= 0, got {self.num_gpus!r}")
        if self.address is not None and not (isinstance(self.address, str) and self.address.strip()):
            raise ConfigError(f"--ray-address must name a cluster (HOST:PORT or ray://HOST:PORT), got {self.address!r}")
        ray = _ray()  # fail before any work when Ray is missing
        if self.address is not None and not ray.is_initialized():
            check_reachable(self.address)

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
        """(prepared item, vectors it needs) in input order, like ``embed.run(executor.map(...))``.
        A model runs on embed actors; a cheap embedder (hashing) already ran where each file was
        prepared, so this process only takes the vectors the store lacks, as a local run does."""
        remote = embed if _embeds_remotely(embed) else None

        def prepared():
            for item, vectors in self._run(preparer, items, remote):
                if progress is not None:
                    progress.prepared()
                    if getattr(item, "records", None) and hasattr(progress, "chunked"):
                        progress.chunked(len(item.records))
                    if vectors and embed.on_embedded:
                        embed.on_embedded(len(vectors))
                yield item, vectors

        if remote is not None:
            yield from prepared()
        else:
            yield from embed.run(item for item, _ in prepared())

    def writes_in_workers(self, store) -> bool:
        """Whether documents are written by write actors (see ``writes``) rather than the driver."""
        return self.writes == "workers" or self.writes == "auto" and store.capabilities.parallel_writes

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
        remote = embed is not None and _embeds_remotely(embed)
        # No model to hold (a cheap embedder ran inside prepare): the writes fold into the prepare
        # actors, one pool doing every stage (unless write actors were counted out); else an embed
        # pool and a write pool follow.
        fused = spec is not None and not remote and self.write_actors is None
        (prepare_n, per_actor), embed_n, write_n, cpus = self._widths(ray, remote, spec is not None and not fused, fused)
        # Batches of files per prepare call (per-call costs shared; a slow file holds back few
        # others), at most _BATCHES per window; a block is one batch.
        per_batch = max(self.prepare_batch, -(-len(rows) // _BATCHES))
        ds = ray.data.from_items(rows, override_num_blocks=-(-len(rows) // per_batch))
        pool = ray.data.ActorPoolStrategy
        repair = (embed.embedder, embed.late) if embed is not None else (None, None)
        ds = ds.map_batches(_Prepare, fn_constructor_args=(preparer, self.limits, per_actor, spec if fused else None,
                                                           *repair),
                            batch_size=None, batch_format="numpy", compute=pool(size=prepare_n),
                            num_cpus=cpus * per_actor)
        if remote:
            ds = ds.map_batches(_Embed, fn_constructor_args=(embed.embedder, embed.late, embed.store.opens_with,
                                                             embed.batch_size, embed.pool, self.num_gpus),
                                batch_size=self.embed_batch, batch_format="numpy", compute=pool(size=embed_n),
                                num_cpus=cpus, **({"num_gpus": self.num_gpus} if self.num_gpus else {}))
        if write_n:  # write actors: each document in its own transaction
            ds = ds.map_batches(_Write, fn_constructor_args=(spec, *repair), batch_size=self.embed_batch,
                                batch_format="numpy", compute=pool(size=write_n), num_cpus=cpus)
        try:
            for batch in ds.iter_batches(batch_size=None, batch_format="numpy", prefetch_batches=2):
                vectors = batch["vectors"] if "vectors" in batch else [None] * len(batch["seq"])
                yield from zip((int(s) for s in batch["seq"]), batch["item"], vectors)
        except ray.exceptions.RayError as exc:
            inner = _inner(exc)
            if isinstance(inner, ChunkwiseError):  # the run's own error (a bad model file, an embedding service down)
                raise inner from None
            raise ChunkwiseError(f"the Ray pipeline failed: {_cause(exc)}") from exc

    def _widths(self, ray, embedding: bool, writing: bool, fused: bool = False) -> tuple[tuple[int, int], int, int, float]:
        """((prepare actors, sandbox workers each), embed actors, write actors, CPUs per worker):
        what was asked, or the cluster's CPUs shared out. A prepare actor prepares files in as many
        contained processes at once as a node's CPUs allow (up to 4): fewer Ray processes to start
        and feed for the same cores; one that also writes (``fused``) has one, as its own writes
        keep pace with one process preparing. All pools together ask no more CPUs than the cluster
        has (an actor that cannot get its CPUs would never start)."""
        total = max(1, int(ray.cluster_resources().get("CPU", 1)))
        embed_n = self.embed_actors if embedding else 0
        free = max(1, total - embed_n)
        if self.actor_workers is not None:
            per_actor = self.actor_workers
        elif self.prepare_actors is not None:
            per_actor = max(1, free // self.prepare_actors)
        else:
            per_actor = 1 if fused else max(1, min(_ACTOR_WORKERS, free, _smallest_node(ray)))
        prepare_n = self.prepare_actors or max(1, free // per_actor)
        write_n = (self.write_actors or prepare_n) if writing else 0
        cpus = min(1.0, total / (prepare_n * per_actor + embed_n + write_n))
        return (prepare_n, per_actor), embed_n, write_n, cpus


def _smallest_node(ray) -> int:
    """The CPUs of the cluster's smallest node: an actor asking more could never be placed."""
    cpus = [int(n.get("Resources", {}).get("CPU", 0)) for n in ray.nodes() if n.get("Alive")]
    return min((c for c in cpus if c > 0), default=1)


def _embeds_remotely(embed) -> bool:
    """Whether the run's embedder needs actors of its own: a model does; a cheap embedder (hashing)
    ran where each document was prepared and only its vectors the store lacks are kept."""
    return embed.embedder is not None and (embed.late is not None or not getattr(embed.embedder, "cheap", False))


class _Prepare:
    """A Ray Data actor: a batch of files, each contained in this actor's sandbox worker process
    (a crash, a bomb or a hang is that file's ``PrepareFailure``; the worker is replaced). With a
    ``spec`` it then writes them as a write actor does (the stages folded into one pool)."""

    def __init__(self, preparer, limits: Limits, workers: int = 1, spec=None, embedder=None, late=None) -> None:
        from chunkwise.sandbox import Pool
        self.pool = Pool(preparer, workers=workers, limits=limits, isolate=True)
        self.writer = _Write(spec, embedder, late) if spec is not None else None

    def __call__(self, batch: dict) -> dict:
        from chunkwise.pipeline.prepare import PrepareFailure, PrepareTask

        columns = [batch[f] for f in _TASK_FIELDS]
        tasks = [PrepareTask(*(str(v) for v in row[:-1]), int(row[-1])) for row in zip(*columns)]
        items = (out.value if out.ok else PrepareFailure(out.item, out.failure.reason) for out in self.pool.map(tasks))
        if self.writer is not None:  # each written as it comes, while the sandbox prepares the next files
            return {"seq": batch["seq"], "item": self.writer.write(items, itertools.repeat(None))}
        return {"seq": batch["seq"], "item": [pickle.dumps(item, protocol=5) for item in items]}

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
    interface; only a summary of each write (``Written``) goes back. ``embedder``/``late``: to take
    a cheap embedder's vectors the store lacks, and to re-embed keys a concurrent run collected
    between embedding and writing (a model loads only then). The store stays open for the actor's
    life, one connection per thread Ray calls from (an SQLite connection serves its own thread)."""

    def __init__(self, spec: WriteSpec, embedder=None, late=None) -> None:
        self.spec, self.embedder, self.late = spec, embedder, late
        self.local, self.opened = threading.local(), []

    def _store(self):
        store = getattr(self.local, "store", None)
        if store is None:
            from chunkwise.store import open_store

            store = self.local.store = open_store(self.spec.location, timeout=self.spec.timeout)
            self.opened.append(store)
        return store

    def __call__(self, batch: dict) -> dict:
        vectors = batch["vectors"] if "vectors" in batch else [None] * len(batch["item"])
        items = [pickle.loads(raw) for raw in batch["item"]]
        return {"seq": batch["seq"], "item": self.write(items, [pickle.loads(v) if v is not None else None
                                                                for v in vectors])}

    def write(self, items: Iterable, vectors: Iterable) -> list[bytes]:
        """Pickled ``Written`` summaries (``PrepareFailure``s as they are), in order. ``vectors``: a
        document's from the embed actors, or None (a cheap embedder's: the ones the store lacks)."""
        from chunkwise.pipeline.embed import EmbedStage
        from chunkwise.pipeline.prepare import PrepareFailure
        from chunkwise.pipeline.write import IngestStats, WriteStage, Written

        spec, store, out = self.spec, self._store(), []
        embed = EmbedStage(store, self.embedder, late=self.late)
        for item, got in zip(items, vectors):
            if isinstance(item, PrepareFailure):
                out.append(pickle.dumps(item, protocol=5))
                continue
            if got is None:  # what the store lacks of the vectors made with the document
                ((_, got),) = embed.run([item]) if self.embedder is not None else ((item, {}),)
            stats = IngestStats(errors=[{"path": item.task.rel, "error": p} for p in item.problems],
                                warnings=[f"{item.task.rel}: {w}" for w in item.warnings])
            write = WriteStage(store, root=spec.root, inputs=spec.inputs, now=spec.now, model=spec.model,
                               embedding=spec.embedding, stats=stats)
            try:
                write.write(item, got, repair=embed.repair)
            except ChunkwiseError as exc:
                stats.errors.append({"path": item.task.rel, "error": str(exc)})
            out.append(pickle.dumps(Written(item.task, stats, len(got)), protocol=5))
        return out

    def __del__(self) -> None:
        for store in getattr(self, "opened", ()):
            with contextlib.suppress(Exception):  # another thread's SQLite connection: the process exit closes it
                store.close()


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
