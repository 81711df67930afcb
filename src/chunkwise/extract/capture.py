"""Parser warnings captured per file: what pypdf, pdfminer, python-docx, openpyxl... log or ``warn``
while one file is extracted becomes that file's warnings (the run's report, ``audit``, ``extract``),
never lines on the terminal: 1,480 lines of "Ignoring wrong pointing object" say nothing about which
file they came from.

Logging: while any file is being extracted, one handler sits on the root logger and takes the
WARNING-and-above records of the threads that are extracting; a record of another thread goes where
it would have gone (Python's last-resort stderr handler when the root has no other handler). The
handler is removed when the last extraction ends, so ``logging.basicConfig`` afterwards still works.
``warnings.warn``: recorded with ``catch_warnings`` on the main thread only (it swaps module globals,
which is not thread-safe); elsewhere warnings keep their usual route.
"""
from __future__ import annotations

import logging
import re
import threading
import warnings
from collections import Counter
from contextlib import contextmanager
from pathlib import PurePath

MAX_DISTINCT = 8  # distinct messages kept per file; the rest are counted in one line
MAX_CHARS = 240  # a message longer than this is cut (some parsers log whole objects)
_NUMBER = re.compile(r"\d+")


class _Router(logging.Handler):
    """Root handler: records of a collecting thread into its list, the others to the last resort."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.sinks: dict[int, list[str]] = {}

    def emit(self, record: logging.LogRecord) -> None:
        sink = self.sinks.get(record.thread) if record.thread is not None else None
        if sink is not None:
            try:
                sink.append(f"{record.name.split('.')[0]}: {record.getMessage()}")
            except Exception:  # noqa: BLE001 - a record whose message cannot be formatted
                sink.append(f"{record.name.split('.')[0]}: {record.msg!s}")
            return
        root = logging.getLogger()
        if all(h is self for h in root.handlers) and logging.lastResort is not None \
                and record.levelno >= logging.lastResort.level:
            logging.lastResort.handle(record)  # what Python does when no handler is configured


_router = _Router()
_lock = threading.Lock()
_users = 0


def _attach(sink: list[str]) -> None:
    global _users
    with _lock:
        _router.sinks[threading.get_ident()] = sink
        _users += 1
        if _users == 1:
            logging.getLogger().addHandler(_router)


def _detach() -> None:
    global _users
    with _lock:
        _router.sinks.pop(threading.get_ident(), None)
        _users -= 1
        if _users == 0:
            logging.getLogger().removeHandler(_router)


@contextmanager
def captured():
    """Collect what parsers log or warn inside the block; yields a list that ``summary`` turns into
    the file's warning lines. Nests: an inner block collects into its own list."""
    sink: list[str] = []
    outer = _router.sinks.get(threading.get_ident())
    _attach(sink)
    try:
        if threading.current_thread() is threading.main_thread():
            with warnings.catch_warnings(record=True) as caught:
                try:
                    yield sink
                finally:
                    sink += [_warning_line(w) for w in caught]
        else:
            yield sink
    finally:
        _detach()
        if outer is not None:
            with _lock:
                _router.sinks[threading.get_ident()] = outer


def _warning_line(w: warnings.WarningMessage) -> str:
    """``package: message``, the package read from the path of the code that warned."""
    parts = PurePath(w.filename or "").parts
    marks = [i for i, p in enumerate(parts[:-1]) if p in ("site-packages", "dist-packages")]
    top = parts[marks[-1] + 1] if marks else PurePath(w.filename or "").stem
    return f"{top.removesuffix('.py') or w.category.__name__}: {w.message}"


def summary(lines: list[str]) -> list[str]:
    """Distinct messages in order of first appearance, each with its count, at most ``MAX_DISTINCT``
    of them; messages that differ only in their numbers ("Ignoring wrong pointing object 6 0", "... 8
    0") are one kind. Each line says it came from a parser, not from chunkwise's own checks."""
    first: dict[str, str] = {}
    counts: Counter[str] = Counter()
    for line in lines:
        text = " ".join(line.split())[:MAX_CHARS]
        kind = _NUMBER.sub("N", text)
        first.setdefault(kind, text)
        counts[kind] += 1
    out = [f"parser warning, {first[k]}" if n == 1 else f"parser warning, {k} ({n} times)" for k, n in counts.items()]
    if len(out) > MAX_DISTINCT:
        rest = sum(list(counts.values())[MAX_DISTINCT:])
        out = out[:MAX_DISTINCT] + [f"parser warning: {rest} more of {len(out) - MAX_DISTINCT} other kinds"]
    return out


class Heard:
    """What parsers logged and warned, kept apart: one pass over a file collects its log records
    as they come and its ``warnings.warn`` messages at the end, so parts of a file read in other
    processes (``Heard.add``) can be put back where one pass would have heard them."""

    def __init__(self) -> None:
        self.logged: list[str] = []
        self.warned: list[str] = []
        self._added: list[str] = []  # warned by parts added so far: before this pass's own

    def add(self, part: tuple) -> None:
        logged, warned = part
        self.logged += logged
        self._added += warned

    def lines(self) -> tuple[tuple[str, ...], tuple[str, ...]]:
        return tuple(self.logged), tuple(self._added + self.warned)

    def all(self) -> list[str]:
        logged, warned = self.lines()
        return [*logged, *warned]


@contextmanager
def captured_parts():
    """``captured``, yielding a ``Heard``: log records in ``logged`` as they come, warnings in
    ``warned`` when the block ends."""
    heard = Heard()
    outer = _router.sinks.get(threading.get_ident())
    _attach(heard.logged)
    try:
        if threading.current_thread() is threading.main_thread():
            with warnings.catch_warnings(record=True) as caught:
                try:
                    yield heard
                finally:
                    heard.warned += [_warning_line(w) for w in caught]
        else:
            yield heard
    finally:
        _detach()
        if outer is not None:
            with _lock:
                _router.sinks[threading.get_ident()] = outer
