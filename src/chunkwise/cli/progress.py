"""The ingest progress bar: files prepared (and skipped unchanged), chunks made, chunks embedded,
documents written.

One tqdm line on stderr, so a run shows which stage it waits on: files prepared running ahead of
documents written means embedding or the store is the bottleneck. Disabled, it costs nothing.
"""
from __future__ import annotations

import sys
import time


class IngestBar:
    """A ``pipeline.progress.Progress`` drawn with tqdm; a context manager that closes the line."""

    def __init__(self, enabled: bool, file=None, mininterval: float = 0.2) -> None:
        self.enabled = enabled
        self.counts = {"skipped": 0, "chunks": 0, "embedded": 0, "written": 0}
        self._bar = None
        self._interval, self._shown = mininterval, 0.0
        if enabled:
            from tqdm import tqdm

            self._bar = tqdm(unit=" files", desc="prepared", file=file or sys.stderr, leave=False,
                             mininterval=mininterval, dynamic_ncols=True)

    def __enter__(self) -> IngestBar:
        return self

    def __exit__(self, *exc) -> None:
        if self._bar is not None:
            self._bar.close()

    def write(self, line: str) -> None:
        """A line on stderr above the bar (a warning), never through it."""
        if self._bar is not None:
            self._bar.write(line, file=sys.stderr)
        else:
            print(line, file=sys.stderr)

    def skipped(self, n: int = 1) -> None:
        self._add("skipped", n)

    def prepared(self, n: int = 1) -> None:
        if self._bar is not None:
            self._bar.update(n)

    def embedded(self, n: int) -> None:
        self._add("embedded", n)

    def chunked(self, n: int) -> None:
        self._add("chunks", n)

    def written(self, n: int = 1) -> None:
        self._add("written", n)

    def _add(self, key: str, n: int) -> None:
        self.counts[key] += n
        now = time.monotonic()
        if self._bar is not None and now - self._shown >= self._interval:
            self._shown = now
            c = self.counts
            self._bar.set_postfix_str(f"{c['chunks']:,} chunks, {c['embedded']:,} embedded, {c['written']:,} "
                                      f"written, {c['skipped']:,} unchanged")
