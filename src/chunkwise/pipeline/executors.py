"""Where *prepare* runs: the seam a process pool (or a distributed engine) plugs into.

An executor is anything with ``map(fn, items) -> iterator of fn(item)``, **in input order**, that
pulls ``items`` lazily (bounded read-ahead) so a big corpus is never held in memory. ``fn`` is a
picklable ``pipeline.prepare.Preparer``; items are picklable ``PrepareTask`` values (or
``PrepareFailure``s, which the preparer hands back untouched). Whatever runs ``fn`` — this process,
a worker with memory and time limits, a Ray task — the results must be the ones ``fn`` returns
here; a worker that dies should yield a ``PrepareFailure`` for its item and carry on.
"""
from __future__ import annotations

from typing import Callable, Iterable, Iterator, Protocol, TypeVar

from chunkwise.errors import ConfigError

T = TypeVar("T")
R = TypeVar("R")


class Executor(Protocol):
    def map(self, fn: Callable[[T], R], items: Iterable[T]) -> Iterator[R]: ...


class InlineExecutor:
    """Prepare in this process, one item at a time: no containment at all (debugging, tests that
    patch the preparer); nothing in the command line or ``api.ingest`` uses it."""

    def map(self, fn: Callable[[T], R], items: Iterable[T]) -> Iterator[R]:
        return (fn(item) for item in items)


def contained(workers: int = 1, limits=None) -> Executor:
    """Prepare in ``workers`` contained processes (``sandbox``; one worker is a process too: this
    process never parses a file), each file under ``limits`` (default ``sandbox.Limits()``): a file
    whose preparation crashes, panics, hangs or runs out of memory becomes a ``PrepareFailure``
    saying so, in its place. No process starts for a run with nothing to prepare."""
    from chunkwise.pipeline.prepare import PrepareFailure
    from chunkwise.sandbox import Limits, PoolExecutor

    def failed(task, failure):
        return PrepareFailure(task, failure.reason)

    # The initial workers are forked where ``sandbox.processes.fork_safe`` allows it (this process
    # then holds no model runtime and one thread): a spawned worker's imports cost ~0.3 s of CPU
    # each before its first file, serial at the start of every run (2,000 small files: ~6 s of
    # work at two workers). A forked worker never uses the store's connection it inherits (SQLite's
    # locks belong to this process; the descriptors close with the worker); replacements spawn.
    # Files run largest first (pipeline/schedule.py): the results of the small ones a worker
    # prepares while a big one runs elsewhere wait here in order, so the window is wide. Small
    # files cross to a worker several at a time (``sandbox.bundle``): each still runs alone there.
    return PoolExecutor(workers, failed, limits or Limits(), window=WINDOW_PER_WORKER * workers, isolate=True,
                        bundle=(small_file, BUNDLE_FILES), fork_first=True)


WINDOW_PER_WORKER = 32
BUNDLE_FILES = 16  # small files per worker message
BUNDLE_BYTES = 32 * 1024  # a file this size or smaller is small (never a PDF: a PDF may be split)


def small_file(item) -> bool:
    """Whether ``item`` (a ``PrepareTask``, or a ``PrepareFailure`` the walk found) is cheap enough
    to share a worker message with others: its own cost is then mostly the message's."""
    from chunkwise.pipeline.prepare import PrepareFailure
    from chunkwise.sources.sniff import PDF

    if isinstance(item, PrepareFailure):  # found by the walk: handed back untouched
        return True
    return 0 < item.size <= BUNDLE_BYTES and item.media_type != PDF


EXECUTORS = ("local", "ray")


def make_executor(name: str = "local", *, workers: int | None = None, limits=None, ray_address: str | None = None,
                  ray_gpus: float = 0.0, ray_embedders: int = 1) -> Executor:
    """An executor by name: ``local`` (``workers`` contained processes, default 1) or ``ray``
    (``pipeline.raydata.RayExecutor``: ``workers`` prepare actors, default the cluster's CPUs left
    after ``ray_embedders`` embed actors with ``ray_gpus`` each (none for a cheap embedder), shared
    out as actors of several contained processes; ``ray_address`` a running cluster)."""
    if name == "local":
        if ray_address or ray_gpus or ray_embedders != 1:
            raise ConfigError("--ray-address, --ray-gpus and --ray-embedders need --executor ray")
        return contained(workers or 1, limits)
    if name == "ray":
        from chunkwise.pipeline.raydata import RayExecutor
        from chunkwise.sandbox import Limits

        return RayExecutor(address=ray_address, prepare_actors=workers, embed_actors=ray_embedders,
                           num_gpus=ray_gpus, limits=limits or Limits())
    raise ConfigError(f"unknown executor {name!r}; use one of: {', '.join(EXECUTORS)}")


def session(executor: Executor):
    """The scope an executor keeps its resources in for a whole run (Ray: one cluster for every
    PATH), when it has one."""
    import contextlib

    own = getattr(executor, "session", None)
    return own() if own is not None else contextlib.nullcontext(executor)


def prepare_and_embed(executor: Executor, preparer, tasks: Iterable, embed, progress) -> Iterator[tuple[object, dict]]:
    """(prepared item, vectors it needs) in input order: prepare on ``executor`` then the embed stage
    here, unless the executor runs both stages itself (``prepare_and_embed``: Ray's actor pools)."""
    from chunkwise.pipeline.progress import counted

    own = getattr(executor, "prepare_and_embed", None)
    if own is not None:
        return own(preparer, tasks, embed, progress)
    return embed.run(counted(executor.map(preparer, tasks), progress))
