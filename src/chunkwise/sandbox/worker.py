"""The worker process's loop: one item at a time under an absolute address-space limit (the
worker's whole address space, not an allowance added to what it held before), stderr captured."""
from __future__ import annotations

import faulthandler
import os
import re
import resource
import signal
import sys

from chunkwise.errors import ChunkwiseError
from chunkwise.sandbox.bundle import Answers, Bundle
from chunkwise.sandbox.outcome import PASS_THROUGH, Failure, call, with_detail

_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


def _address_space() -> int | None:
    try:
        with open("/proc/self/statm", "rb") as f:
            return int(f.read().split()[0]) * _PAGE
    except (OSError, ValueError, IndexError):
        return None


def _set_soft_as(limit: int | None) -> None:
    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    if limit is None or (hard != resource.RLIM_INFINITY and limit > hard):
        limit = hard
    resource.setrlimit(resource.RLIMIT_AS, (limit, hard))


def _die_with_parent() -> None:
    """SIGKILL this worker when the pool's owner dies: done by the kernel, so it works even while
    an item holds the GIL in native code (Linux; elsewhere a no-op)."""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def worker_main(conn, fn, memory_mb: int | None, log_path: str) -> None:
    """Receive ``(index, item)``, reply ``(index, ok, value_or_failure, retire)``; exit on ``None``
    or when the parent is gone. stderr goes to ``log_path``, emptied before each item, so the parent
    can read what a crashing item printed (faulthandler's Python frames, a Rust panic message)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    _die_with_parent()
    os.environ["RUST_BACKTRACE"] = "0"  # a panic message, not 40 frames of Rust, in the failure detail
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")  # the pool is the parallelism
    for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(var, "1")
    log = open(log_path, "w+b", buffering=0)
    stderr = os.dup(2)
    os.dup2(log.fileno(), 2)
    faulthandler.enable(file=log, all_threads=False)
    warm_up = getattr(fn, "warm_up", None)
    if callable(warm_up):
        try:
            warm_up()  # loads a tokenizer or a model once, outside every item's time and memory budget
        except ChunkwiseError as exc:  # a setting that cannot load: the run's error, raised as it was here
            conn.send(("unready", exc))
            return
    conn.send("ready")  # item clocks start now, not while this process was still importing
    while True:
        try:
            msg = conn.recv()
        except (EOFError, OSError):
            return
        if msg is None:  # the pool is done: exit now, without tearing the interpreter down
            sys.stdout.flush()  # (unloading a tokenizer and numpy kept the owner's close waiting ~0.1 s)
            sys.stderr.flush()
            os._exit(0)
        index, item = msg
        if isinstance(item, Bundle):  # several small items in one message: answered together
            answers = []
            for part in item.items:
                ok, payload, retire = _run(fn, part, memory_mb, log, log_path, stderr)
                answers.append((ok, payload))
                if retire:  # the rest are not run here: the pool runs them again, each alone
                    break
            ok, payload = True, Answers(tuple(answers))
        else:
            ok, payload, retire = _run(fn, item, memory_mb, log, log_path, stderr)
        try:
            conn.send((index, ok, payload, retire))
        except Exception as exc:  # noqa: BLE001 — an unpicklable result is this item's failure
            # ``retire`` still says whether this worker stops: a bundle whose later item panicked
            # retires it even when an earlier item's answer cannot be sent (the pool must not hand
            # the next item to a worker about to exit).
            conn.send((index, False, Failure("error", f"result cannot be sent back: {type(exc).__name__}: {exc}",
                                             type(exc).__name__, str(exc)), retire))
        if retire:
            return


def _run(fn, item, memory_mb: int | None, log, log_path: str, stderr: int) -> tuple[bool, object, bool]:
    """One item under the limits: (ok, value or Failure, whether this worker must retire)."""
    log.truncate(0)
    log.seek(0)
    base = _address_space() if memory_mb is not None else None
    limit = memory_mb * 1024 * 1024 if memory_mb is not None else None
    if base is not None and base >= limit:  # what it loaded (a model) leaves this file nothing
        return False, Failure("memory", f"the worker already uses {base >> 20} MB before this file, over the "
                                        f"{memory_mb} MB memory limit; raise --file-memory"), True
    if base is not None:
        _set_soft_as(limit)  # absolute: the worker's whole address space, whatever it held before
    try:
        value, failure = call(fn, item)
        if failure is not None and failure.kind == "memory" and base is not None:
            failure = Failure("memory", f"over the {memory_mb} MB memory limit ({failure.reason})",
                              failure.error_type, failure.message, failure.detail)
    except PASS_THROUGH as exc:
        value, failure = None, Failure("error", f"worker stopped: {type(exc).__name__}", type(exc).__name__)
    finally:
        if base is not None:
            _set_soft_as(None)
    retire = failure is not None and failure.kind in ("memory", "panic")  # native state may be poisoned
    sys.stderr.flush()
    if failure is not None and not failure.detail:
        failure = with_detail(failure, read_log(log_path))
    elif failure is None and os.fstat(log.fileno()).st_size:
        _forward(log, stderr)  # warnings of items that succeeded reach the user as before
    return failure is None, value if failure is None else failure, retire


# What Rust's panic hook prints for a panic the item caught (markdown-it-pyrs on some pipe-table lines:
# the Python parser took over and the file is fine); RUST_BACKTRACE is 0 here, so the note ends it.
_RUST_PANIC = re.compile(rb"thread '[^'\n]*' panicked at .*?\nnote: run with `RUST_BACKTRACE=1`[^\n]*\n?", re.S)


def _forward(log, fd: int) -> None:
    """What an item that succeeded printed, to the user's stderr: warnings, never a native panic's
    raw report (the item handled it; it is no message for the user)."""
    sys.stderr.flush()
    log.seek(0)
    data = _RUST_PANIC.sub(b"", log.read())
    if not data:
        return
    try:
        os.write(fd, data)
    except OSError:
        pass


def read_log(path: str, limit: int = 4000) -> str:
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        return ""
    return data[-limit:].decode("utf-8", "replace").strip()
