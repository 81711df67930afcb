"""What an ingest reports while it runs: files prepared or skipped, chunks made, chunks embedded,
documents written.

The stages call a ``Progress`` as work leaves them, so a display (the CLI's bar) shows where a run
spends its time: prepare in the workers, embedding in this process, writes in the store.
"""
from __future__ import annotations

from typing import Iterable, Iterator, Protocol, TypeVar

T = TypeVar("T")


class Progress(Protocol):
    def skipped(self, n: int = 1) -> None: ...  # unchanged files, passed over before reading

    def prepared(self, n: int = 1) -> None: ...  # files out of prepare (failures included)

    def embedded(self, n: int) -> None: ...  # texts given a vector

    def chunked(self, n: int) -> None: ...  # chunks the prepared files gave (optional: looked up by name)

    def written(self, n: int = 1) -> None: ...  # documents written (or diffed, in a dry run)


class NoProgress:
    def skipped(self, n: int = 1) -> None:
        pass

    def prepared(self, n: int = 1) -> None:
        pass

    def embedded(self, n: int) -> None:
        pass

    def chunked(self, n: int) -> None:
        pass

    def written(self, n: int = 1) -> None:
        pass


def counted(items: Iterable[T], progress: Progress) -> Iterator[T]:
    """``items`` unchanged, each reported as prepared (and its chunks as made) when it arrives."""
    chunked = getattr(progress, "chunked", None)  # a Progress written before chunk counts has none
    for item in items:
        progress.prepared()
        records = getattr(item, "records", None)
        if chunked is not None and records:
            chunked(len(records))
        yield item
