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

T = TypeVar("T")
R = TypeVar("R")


class Executor(Protocol):
    def map(self, fn: Callable[[T], R], items: Iterable[T]) -> Iterator[R]: ...


class InlineExecutor:
    """Prepare in this process, one item at a time (``--workers 1``: nothing forks, debuggable)."""

    def map(self, fn: Callable[[T], R], items: Iterable[T]) -> Iterator[R]:
        return (fn(item) for item in items)


def contained(workers: int = 1, limits=None) -> Executor:
    """Prepare in ``workers`` contained processes (``sandbox``; 1: in this process, nothing forks),
    each file under ``limits`` (default ``sandbox.Limits()``): a file whose preparation crashes,
    panics, hangs or runs out of memory becomes a ``PrepareFailure`` saying so, in its place."""
    from chunkwise.pipeline.prepare import PrepareFailure
    from chunkwise.sandbox import Limits, PoolExecutor

    def failed(task, failure):
        return PrepareFailure(task, failure.reason)

    return PoolExecutor(workers, failed, limits or Limits())
