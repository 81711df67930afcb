"""The order files are handed to the workers: largest first, within a bounded look-ahead.

Why: the files of a real corpus differ in cost by three orders of magnitude (a 600-page PDF takes
half the CPU of the 159 PDF, DOCX and HTML files of ``../shared/data``). Handed out in walk order,
such a file often starts late and one worker finishes it alone while the other idles: two workers
gave ~1.5x one. Started first (longest processing time first, a classic makespan heuristic), the
small files fill the other worker meanwhile. The order depends only on the walk (sizes, then walk
order), never on the worker count or timing, so every worker count writes the documents in the same
order and gives the same store. The look-ahead is bounded (files and bytes) so a huge corpus is
never listed whole in memory.
"""
from __future__ import annotations

from typing import Iterable, Iterator, TypeVar

T = TypeVar("T")

LOOKAHEAD_FILES = 256  # the walk of this many small files delays the first one by ~0.1 s
LOOKAHEAD_BYTES = 256 * 1024 * 1024


def largest_first(tasks: Iterable[T], files: int = LOOKAHEAD_FILES, nbytes: int = LOOKAHEAD_BYTES) -> Iterator[T]:
    """``tasks`` (anything with a ``size``, or a ``task.size``: 0 when unknown), reordered by size,
    largest first, within consecutive groups of at most ``files`` tasks and about ``nbytes`` bytes;
    equal sizes keep their walk order."""
    group: list[tuple[int, int, T]] = []
    held = 0
    for i, task in enumerate(tasks):
        size = _size(task)
        group.append((-size, i, task))
        held += size
        if len(group) >= files or held >= nbytes:
            yield from _sorted(group)
            group, held = [], 0
    yield from _sorted(group)


def _sorted(group: list) -> Iterator:
    group.sort(key=lambda entry: entry[:2])
    return (task for _, _, task in group)


def _size(task) -> int:
    size = getattr(task, "size", None)
    if size is None:
        size = getattr(getattr(task, "task", None), "size", 0)
    return int(size or 0)
