"""Ingest on Ray: *prepare* on an actor pool, a batch of files per call; *embed* on actors holding
the model; *write* on the driver or on the cluster (``ingest --executor ray``). The actors are in
``rayactors``, the driver's ordered, bounded stream of batches and its fault handling in ``raystream``.

Why this shape: the walk (hashing, skipping unchanged files) stays where the store is and the
writes go through the store interface, so every guarantee of the local run holds unchanged —
per-document transactions with the diff taken inside the store's lock, set-difference stats,
removal of vanished files. What is expensive and has no store state moves to the cluster:

- *prepare*: a call takes a batch of tasks (``prepare_batch`` files: per-call costs shared, few
  files held back by a slow one); the bytes are read on the worker. Each prepare actor holds a
  ``sandbox.Pool`` of as many contained processes as a node's CPUs allow (up to 4;
  ``actor_workers``), so each file runs under the same ``Limits`` (``RLIMIT_AS``, wall time) as in
  the local pool and a segfault, panic, bomb or hang becomes that file's ``PrepareFailure`` with the
  very same message while the rest of the batch comes back. An actor that dies anyway (a node lost,
  a killed worker, Ray's memory monitor) is restarted and its batch retried (``raystream``).
- *embed*: a model runs on actors of its own (``num_gpus`` each on a cluster): an actor runs the
  local ``EmbedStage`` over a batch of prepared documents, asking the store (opened read-only on
  the worker) which embed keys lack a vector, so kept chunks are not re-embedded. A worker that
  cannot open the store embeds every key (correct, only slower). A cheap embedder (hashing) needs
  no actors: it runs where each file is prepared, as in the local pool, and the writer keeps the
  vectors the store lacks.
- *write*: on a store that takes several writers (PostgreSQL: ``Capabilities.parallel_writes``),
  actors open the store themselves (one connection each, kept for the run) and write each document
  in its own transaction; only a summary of each write comes back. With a cheap embedder or none
  the prepare actors write what they prepared (one pool, no hop through the object store); after
  embed actors (or with ``write_actors`` given) a write pool does. On SQLite (one writer at a time,
  so nothing to gain) documents are written by the driver. Either way results come back in input
  order; the driver holds the batches in flight (``window`` files at most), never the corpus.
  ``writes`` forces the driver or the cluster.

The actors are started when the first file needs preparing and come up while the walk goes on; a
run whose files are all unchanged starts no cluster and no actor (a no-op stays fast). This process
starts a local cluster (and stops it) unless Ray is already initialised or ``address`` names a
running one, which is then only connected to.
"""
from __future__ import annotations

import contextlib
import contextvars
import itertools
import logging
from dataclasses import dataclass, field
from typing import Callable, Iterable, Iterator

from chunkwise.errors import ConfigError, DependencyError
from chunkwise.sandbox.outcome import Limits
from chunkwise.pipeline.ray_address import check_reachable
from chunkwise.pipeline.rayactors import Embed, Prepare, Write
from chunkwise.pipeline.raystream import ACTOR_OPTIONS, Stages, _cause, ordered

RAY_INSTALL_HINT = "pip install 'chunkwise[ray]'"
_NOTHING = object()
_SESSION: contextvars.ContextVar = contextvars.ContextVar("chunkwise_ray_session")
_FILES_PER_BATCH = 16
_INFLIGHT_PER_ACTOR = 4  # batches out per prepare actor: one running, the next queued, room for slow ones
_ACTOR_WORKERS = 4
WRITES = ("auto", "driver", "workers")
log = logging.getLogger(__name__)


def _ray():
    try:
        import ray
    except ImportError as exc:
        raise DependencyError(f"--executor ray needs Ray ({exc}); install it with: {RAY_INSTALL_HINT}") from exc
    return ray


@dataclass(frozen=True)
class RayExecutor:
    """Where and how wide the Ray stages run. ``address``: a running cluster (``ray://…`` or
    ``HOST:PORT``; None: start a local one with ``num_cpus``, or use the one this process already
    initialised). ``prepare_actors``: actors preparing files, ``actor_workers`` files at once each
    in contained processes (None: the cluster's CPUs left after the embedders shared out, up to 4
    per actor and no more than the smallest node has, 1 per actor when it also writes); ``prepare_batch``: files per prepare call;
    ``embed_actors`` holding a model (not started for a cheap embedder), each with ``num_gpus``;
    ``window``: files in flight at most (what the driver holds at once); ``limits``: memory and wall time per file, as in the local pool;
    ``writes``: ``auto`` (on the cluster when the store takes parallel writers, else the driver),
    ``driver`` or ``workers``; ``write_actors``: a write pool of its own of this size (None: the
    prepare actors write, or after embed actors as many write actors as prepare actors)."""

    address: str | None = None
    prepare_actors: int | None = None
    embed_actors: int = 1
    num_gpus: float = 0.0
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
        for name in ("prepare_actors", "embed_actors", "prepare_batch", "actor_workers", "window",
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
        scope = _SESSION.get(None)
        with contextlib.ExitStack() as run:
            ray = (scope or run).enter_context(_cluster(self.address, self.num_cpus))
            stages = self._stages(ray, preparer, embed, spec)
            run.callback(stages.stop)
            inflight = max(1, min(_INFLIGHT_PER_ACTOR * len(stages.pools["prepare"]), self.window // self.prepare_batch))
            yield from ordered(ray, stages, itertools.chain([first], items), self.prepare_batch, inflight)

    def _stages(self, ray, preparer, embed, spec=None) -> Stages:
        """The run's actors, started at once (they come up while the walk goes on)."""
        remote = embed is not None and _embeds_remotely(embed)
        # No model to hold (a cheap embedder ran inside prepare): the writes fold into the prepare
        # actors, one pool doing every stage (unless write actors were counted out); else an embed
        # pool and a write pool follow.
        fused = spec is not None and not remote and self.write_actors is None
        (prepare_n, per_actor), embed_n, write_n, cpus = self._widths(ray, remote, spec is not None and not fused, fused)
        repair = (embed.embedder, embed.late) if embed is not None else (None, None)

        def actors(cls, n, *args, **resources):
            remote_cls = ray.remote(cls).options(**ACTOR_OPTIONS, **resources)
            return [remote_cls.remote(*args) for _ in range(n)]

        prepare = actors(Prepare, prepare_n, preparer, self.limits, per_actor, spec if fused else None, *repair,
                         num_cpus=cpus * per_actor)
        embedders = actors(Embed, embed_n, embed.embedder, embed.late, embed.store.opens_with, embed.batch_size,
                           embed.pool, self.num_gpus, num_cpus=cpus,
                           **({"num_gpus": self.num_gpus} if self.num_gpus else {})) if remote else []
        writers = actors(Write, write_n, spec, *repair, num_cpus=cpus) if write_n else []
        return Stages(ray, prepare, embedders, writers)

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
        raise ConfigError(f"cannot start or reach {where} ({_cause(ray, exc)}); check --ray-address (HOST:PORT of "
                          f"`ray start --head`), or drop it to start a local one") from exc
    try:
        yield ray
    finally:
        ray.shutdown()


__all__ = ["RAY_INSTALL_HINT", "RayExecutor", "WRITES"]
