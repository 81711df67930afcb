"""Contained execution: one picklable function over many items; a crash costs that item only.

Why: *prepare* (and an audit) feeds untrusted bytes to native parsers. markdown-it-pyrs segfaults on
~50,000 nested block quotes and panics (a ``BaseException``) on some pipe-table lines; a decompression bomb or a
pathological regex can eat the machine's memory or never return. In a worker process each item runs
under an address-space limit (``RLIMIT_AS``, set in the worker around the call) and a wall-time limit
(the parent kills the worker); a crash, a hang, a ``MemoryError`` or a panic becomes a
:class:`Failure` for that item, the worker is replaced, and every other item's result is exactly what
a run without the bad item gives. Results come back in input order, whatever finished first.

``workers=1`` never forks: the function runs in the calling process (debuggable, no pickling), Python
exceptions (panics included) are still reported per item, but a native crash, a hang or a bomb is not
contained there. Workers are started by the ``spawn`` method: a fresh interpreter, never a fork of a
parent that may hold torch/tokenizers thread pools (forking those deadlocks), and a direct child that
the kernel kills when the pool's owner dies (``PR_SET_PDEATHSIG``), so an item stuck in native code
never outlives a killed run. One exception, asked for with ``fork_first`` (the doors' single worker,
``pipeline.contained``; ingest's and audit's pools): the pool's initial workers are forked from a parent
that is safe to fork (Linux, one thread, no torch/onnxruntime/Ray loaded, under half the worker's memory
limit: ``processes.fork_safe``), so a run does not pay a second interpreter's imports and tokenizer
load per worker (~0.3 s of CPU each, serial before the first file); each file is still parsed only in a
worker, under the same absolute limits, and a replacement is spawned. Linux only for the memory limit and that guarantee
(it reads ``/proc/self/statm``); elsewhere items run without one.
"""
from __future__ import annotations

import itertools
import os
import time
from typing import Any, Callable, Iterable, Iterator

from chunkwise.errors import ConfigError
from chunkwise.sandbox.outcome import Failure, Fanout, Join, Limits, Outcome, call, run_fanout


_NOTHING = object()


def default_workers() -> int:
    """The CPUs this process may run on (``os.cpu_count()`` ignores affinity masks and cgroups)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


WORKERS_PER_CPU = 4  # more processes than this per CPU only adds memory and start-up time


def check_workers(workers: int) -> int:
    """``workers``, refused (before any process starts) below 1 or above ``WORKERS_PER_CPU`` times
    the CPUs this process may use: each worker is a Python interpreter with its own memory limit, so
    a typo such as ``--workers 100000`` would otherwise fork until the machine gives out."""
    cpus = default_workers()
    most = WORKERS_PER_CPU * cpus
    if workers < 1:
        raise ConfigError(f"workers must be at least 1, got {workers}")
    if workers > most:
        raise ConfigError(f"--workers {workers} is more than {WORKERS_PER_CPU} per CPU ({cpus} CPUs here: at most "
                          f"{most}); more processes than CPUs only wait their turn")
    return workers


def run(fn: Callable[[Any], Any], items: Iterable[Any], *, workers: int = 1, limits: Limits = Limits(),
        window: int | None = None, isolate: bool = False, idle: Callable[[], None] | None = None,
        fork_first: bool = False, bundle: tuple[Callable[[Any], bool], int] | None = None) -> Iterator[Outcome]:
    """``fn`` over ``items``, one :class:`Outcome` per item in input order (a generator: items are
    drawn lazily, at most ``window`` ahead of the consumer; ``idle()`` runs before the consumer
    would wait for a worker, and again every ``processes.IDLE_TICK`` while it waits). ``bundle``:
    ``(small, size)``: consecutive items ``small(item)`` says are small cross to a worker up to
    ``size`` at a time (``sandbox.bundle``). See :class:`Pool` to reuse workers."""
    with Pool(fn, workers=workers, limits=limits, isolate=isolate, fork_first=fork_first) as pool:
        yield from pool.map(items, window=window, idle=idle, bundle=bundle)


class Pool:
    """A pool of contained workers running ``fn``; ``workers=1`` runs in-process. Use as a context
    manager (workers are stopped on exit) and call :meth:`map` as often as needed. When ``fn`` has a
    ``warm_up()`` method, each worker calls it once before its first item: what it loads (a
    tokenizer, a model) counts against no item's time or memory limit. ``isolate``: contain items
    in a worker process even with one worker (a Ray actor contains its files this way).
    ``fork_first``: start the initial workers by ``fork`` where ``processes.fork_safe`` allows it (see
    the module docstring); replacements are always spawned."""

    def __init__(self, fn: Callable[[Any], Any], *, workers: int = 1, limits: Limits = Limits(),
                 isolate: bool = False, fork_first: bool = False):
        check_workers(workers)
        self.fn, self.workers, self.limits, self.isolate = fn, workers, limits, isolate
        self.fork_first = fork_first
        self._procs: Any = None

    def __enter__(self) -> Pool:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        if self._procs is not None:
            self._procs.close()
            self._procs = None

    def map(self, items: Iterable[Any], window: int | None = None, idle: Callable[[], None] | None = None,
            bundle: tuple[Callable[[Any], bool], int] | None = None) -> Iterator[Outcome]:
        """One :class:`Outcome` per item, in input order. At most ``window`` items (default: eight
        per worker) are drawn from ``items`` and not yet yielded, so a slow consumer holds the
        workers back instead of letting results pile up. ``bundle``: ``(small, size)``, see
        :func:`run` (a bundle counts as one item of the window)."""
        if self.workers == 1 and not self.isolate:
            for index, item in enumerate(items):
                start = time.perf_counter()
                value, failure = call(self.fn, item)
                if failure is None and isinstance(value, Fanout):
                    value, failure = run_fanout(self.fn, value)
                yield Outcome(index, item, value, failure, time.perf_counter() - start)
            return
        items = iter(items)
        first = next(items, _NOTHING)
        if first is _NOTHING:  # nothing to do (a no-op re-ingest): no process is started
            return
        items = itertools.chain([first], items)
        if self._procs is None or self._procs.closing:
            from chunkwise.sandbox.processes import Processes

            self._procs = Processes(self.fn, self.workers, self.limits, self.fork_first)
        window = max(1, window or 8 * self.workers)
        if bundle is None:
            yield from self._procs.map(items, window, idle)
            return
        from chunkwise.sandbox.bundle import unbundled

        small, size = bundle
        units = max(2 * self.workers + 2, window // size)  # bundles in flight: about ``window`` items
        yield from unbundled(lambda chunk: self._procs.map(chunk, units, idle), items, small, size)


class PoolExecutor:
    """The pipeline's executor seam (``map(fn, items)``: results in input order, items drawn lazily)
    over a contained pool: a failed item yields ``on_failure(item, failure)`` in its place."""

    def __init__(self, workers: int, on_failure: Callable[[Any, Failure], Any], limits: Limits = Limits(),
                 window: int | None = None, isolate: bool = False,
                 bundle: tuple[Callable[[Any], bool], int] | None = None, fork_first: bool = False):
        check_workers(workers)
        self.fork_first = fork_first
        self.workers, self.on_failure, self.limits, self.window = workers, on_failure, limits, window
        self.isolate, self.bundle = isolate, bundle
        self.shares = workers  # the workers a split item's parts (``Fanout``) run on
        self.on_idle: Callable[[], None] | None = None  # set by a consumer that can use the waits

    @property
    def in_workers(self) -> bool:
        """Whether every item runs in a worker process (never in the calling one)."""
        return self.isolate or self.workers > 1

    def map(self, fn: Callable[[Any], Any], items: Iterable[Any]) -> Iterator[Any]:
        for out in run(fn, items, workers=self.workers, limits=self.limits, window=self.window, isolate=self.isolate,
                       idle=self.on_idle, bundle=self.bundle, fork_first=self.fork_first):
            yield out.value if out.ok else self.on_failure(out.item, out.failure)


__all__ = ["Failure", "Fanout", "Join", "Limits", "Outcome", "Pool", "PoolExecutor", "WORKERS_PER_CPU", "check_workers", "default_workers",
           "run"]
