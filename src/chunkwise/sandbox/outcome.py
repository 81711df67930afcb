"""The values a contained run hands back: per-item limits, a failure's kind and reason, an outcome."""
from __future__ import annotations

import traceback
from dataclasses import dataclass, field
from typing import Any

from chunkwise.errors import ConfigError

PASS_THROUGH = (KeyboardInterrupt, SystemExit, GeneratorExit)


@dataclass(frozen=True)
class Limits:
    """Per-item limits in a worker process. ``memory_mb``: the address space the worker may reach
    while it runs one item (absolute, ``RLIMIT_AS``: what the worker loaded before counts too, so
    the limit is what the machine gives up at most per worker); ``seconds``: wall time per item.
    ``None`` disables either."""

    memory_mb: int | None = 2048
    seconds: float | None = 300.0

    def __post_init__(self):
        if self.memory_mb is not None and self.memory_mb < 16:
            raise ConfigError(f"memory limit of {self.memory_mb} MB is too small to run Python; use at least 16")
        if self.seconds is not None and not self.seconds > 0:
            raise ConfigError(f"time limit must be positive, got {self.seconds}")


@dataclass(frozen=True)
class Failure:
    """Why one item produced no result. ``kind``: ``error`` (an exception: ``error_type`` and
    ``message`` carry it), ``panic`` (a native library raised a ``BaseException``), ``memory``,
    ``timeout`` or ``crash`` (the worker died: a signal or an exit code). ``detail``: the worker's
    traceback or its stderr during the item (a Rust panic message, faulthandler's frames)."""

    kind: str
    reason: str
    error_type: str = ""
    message: str = ""
    detail: str = field(default="", compare=False)

    def __str__(self) -> str:
        return self.reason


@dataclass(frozen=True)
class Outcome:
    """One item's result: ``value`` when it succeeded, otherwise ``failure``. ``index``: its position."""

    index: int
    item: Any
    value: Any = None
    failure: Failure | None = None
    seconds: float = field(default=0.0, compare=False)

    @property
    def ok(self) -> bool:
        return self.failure is None


@dataclass(frozen=True)
class Fanout:
    """An item's answer that splits it (a 600-page PDF: page ranges): the pool runs ``parts``
    anywhere it likes, each as an item of its own under the same limits, then sends ``Join(join,
    results)`` (the parts' results in order) to a worker; the join's result is the item's. A part
    that fails fails the item. Parts and the join may not fan out again. Why: one file can be most
    of a corpus's work; split, two workers share it instead of one finishing it alone."""

    parts: tuple
    join: Any


@dataclass(frozen=True)
class Join:
    """What a worker receives once every part of a ``Fanout`` has its result."""

    item: Any
    results: tuple


def run_fanout(fn, fanout: Fanout) -> tuple[Any, Failure | None]:
    """A ``Fanout`` run here, part after part, then its join (the pool's in-process path)."""
    results = []
    for part in fanout.parts:
        value, failure = call(fn, part)
        if failure is None and isinstance(value, Fanout):
            failure = NESTED
        if failure is not None:
            return None, failure
        results.append(value)
    value, failure = call(fn, Join(fanout.join, tuple(results)))
    return (None, NESTED) if failure is None and isinstance(value, Fanout) else (value, failure)


NESTED = Failure("error", "a part of a split item split again (not allowed)")


def exception_failure(exc: BaseException, tb: str) -> Failure:
    name = type(exc).__name__
    text = str(exc)
    first = text.splitlines()[0] if text.strip() else ""
    if isinstance(exc, MemoryError):
        return Failure("memory", "MemoryError" + (f": {first}" if first else ""), name, text, tb)
    kind = "error" if isinstance(exc, Exception) else "panic"
    label = "native panic" if kind == "panic" else name
    return Failure(kind, f"{label}: {first}" if first else label, name, text, tb)


def call(fn, item) -> tuple[Any, Failure | None]:
    try:
        return fn(item), None
    except PASS_THROUGH:
        raise
    except BaseException as exc:  # noqa: BLE001 — a Rust panic is a BaseException; it is this item's failure
        if isinstance(exc, MemoryError):  # the failed frames' locals hold what filled memory: freed before
            traceback.clear_frames(exc.__traceback__)  # formatting (which reads source files) can need any
        return None, exception_failure(exc, traceback.format_exc(limit=-8))


def with_detail(failure: Failure, detail: str) -> Failure:
    return Failure(failure.kind, failure.reason, failure.error_type, failure.message, detail)
