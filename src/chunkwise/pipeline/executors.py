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
