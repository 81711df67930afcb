"""The parent side of a pool: worker processes, the feeder thread, deadlines and replacements."""
from __future__ import annotations

import collections
import contextlib
import multiprocessing
import os
import re
import selectors
import signal
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Iterable, Iterator

from chunkwise.errors import ChunkwiseError
from chunkwise.sandbox.outbox import Outbox
from chunkwise.sandbox.outcome import NESTED, Failure, Fanout, Join, Limits, Outcome, with_detail
from chunkwise.sandbox.worker import read_log, worker_main

_START_SECONDS = 120.0
IDLE_TICK = 0.1  # while the consumer waits, ``idle()`` is called again this often (seconds)
# Items sent ahead to each worker: it starts the next one the moment it answers, instead of waiting
# for the feeder thread, which needs the GIL the consumer (embedding, writing) mostly holds. Each
# worker still runs one item at a time, so a crash or a timeout is still that item's alone.
_DEPTH = 2
# Socket buffer bytes of each worker's connection (both ends), or None for the system's. Only tests
# shrink it: with a few KB every big answer or item fills the socket, which makes a send/send cycle
# between the feeder and a worker certain if the feeder could ever block on a send (it cannot: outbox.py).
SOCKET_BUFFER: int | None = None
_FRAME = re.compile(r'File "([^"]+)", line (\d+) in (\S+)')


def _where(detail: str) -> str:
    """`` in chunking/markdown.py:62 parse_markdown``: the innermost Python frame faulthandler
    printed (the call into the native code that crashed), or nothing."""
    m = _FRAME.search(detail)
    if not m:
        return ""
    path = m.group(1).replace("\\", "/")
    short = path.split("/chunkwise/", 1)[1] if "/chunkwise/" in path else path.rsplit("/", 1)[-1]
    return f" in {short}:{m.group(2)} {m.group(3)}"


@contextlib.contextmanager
def _main_left_alone(fn):
    """Start a worker without re-running the caller's main script: ``spawn`` imports ``__main__``
    in the child (to find functions defined there), so a script that calls ``chunk_file`` without an
    ``if __name__ == "__main__"`` guard would start itself again and fail. The worker needs only
    ``fn``'s own module; when that is ``__main__``, the script is imported as ``spawn`` does."""
    main = sys.modules.get("__main__")
    if main is None or "__main__" in (getattr(fn, "__module__", None), type(fn).__module__):
        yield
        return
    saved = {k: main.__dict__[k] for k in ("__file__", "__spec__") if k in main.__dict__}
    main.__dict__.pop("__file__", None)
    main.__spec__ = None
    try:
        yield
    finally:
        main.__dict__.pop("__spec__", None)
        main.__dict__.update(saved)


# Libraries whose thread pools a forked child would inherit locked (a fork of them can deadlock).
_NO_FORK_WITH = ("torch", "onnxruntime", "ray", "tensorflow", "jax")


def fork_safe(limits: Limits) -> bool:
    """Whether this process may start a worker by ``fork`` (``Pool(fork_first=True)``): Linux, one
    Python thread and no native threads beyond what numpy's BLAS starts (at most one per CPU but
    one; BLAS handles a fork, a Rust or OpenMP pool that has run may not), none of the libraries
    above imported, and an address space under half the worker's limit (a forked worker starts as
    large as its parent, and its limit is absolute)."""
    if sys.platform != "linux" or "fork" not in multiprocessing.get_all_start_methods():
        return False
    if threading.active_count() != 1 or any(name in sys.modules for name in _NO_FORK_WITH):
        return False
    try:  # native threads beyond numpy's BLAS pool (a Rust or OpenMP pool that ran) rule a fork out
        native = len(os.listdir("/proc/self/task")) - 1
    except OSError:
        return False
    if native > ((os.cpu_count() or 1) - 1 if "numpy" in sys.modules else 0):
        return False
    try:
        with open("/proc/self/statm", "rb") as f:
            size = int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return False
    return limits.memory_mb is None or size < limits.memory_mb * (1 << 20) // 2


class _Unready(Exception):
    """A worker's warm-up raised ``error`` (a ``ChunkwiseError``: a tokenizer or model that does not
    load): the run fails with that error, as when the warm-up ran in the calling process."""

    def __init__(self, error: BaseException) -> None:
        super().__init__(str(error))
        self.error = error


@dataclass
class _Worker:
    proc: Any
    conn: Any
    log: str
    started: float
    ready: bool = False
    jobs: collections.deque = field(default_factory=collections.deque)  # (index, item) sent, in order
    out: Outbox | None = None  # the bytes of ``jobs`` the socket has not taken yet
    since: float = 0.0  # when the first of ``jobs`` started: sent, or the one before it answered


@dataclass
class _Fan:
    """A split item waiting for its parts (``outcome.Fanout``)."""

    item: Any
    join: Any
    results: list
    left: int
    seconds: float = 0.0


def _wait(reads: list, writes: list, timeout: float | None) -> tuple[set, set]:
    """The objects of ``reads`` ready to read and of ``writes`` ready to write (``multiprocessing``'s
    ``wait`` knows only reading)."""
    masks: dict = {}
    for obj in reads:
        masks[obj] = masks.get(obj, 0) | selectors.EVENT_READ
    for obj in writes:
        masks[obj] = masks.get(obj, 0) | selectors.EVENT_WRITE
    with _Selector() as sel:
        for obj, mask in masks.items():
            sel.register(obj, mask)
        events = sel.select(timeout)
    return ({k.fileobj for k, ev in events if ev & selectors.EVENT_READ},
            {k.fileobj for k, ev in events if ev & selectors.EVENT_WRITE})


_Selector = getattr(selectors, "PollSelector", selectors.SelectSelector)


def _shrink(*conns) -> None:
    import socket

    for conn in conns:
        with socket.socket(fileno=os.dup(conn.fileno())) as sock:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, SOCKET_BUFFER)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, SOCKET_BUFFER)


class Processes:
    """The worker processes and the thread that feeds them. The consumer's thread draws items and
    takes results in order; the feeder thread dispatches, collects, enforces deadlines and replaces
    dead workers, so workers keep preparing while the consumer is busy (embedding, writing)."""

    def __init__(self, fn, n: int, limits: Limits, fork_first: bool = False):
        self.fn, self.limits = fn, limits
        self.ctx = multiprocessing.get_context("spawn")
        self.tmp = tempfile.TemporaryDirectory(prefix="chunkwise-workers-")
        self.cond = threading.Condition()
        self.todo: collections.deque = collections.deque()
        self.done: dict[int, Outcome] = {}
        self.fans: dict[int, _Fan] = {}  # item index -> its parts' results so far (keys ("part", index, k))
        self.error: BaseException | None = None
        self.closing = False
        self._serial = 0
        self.wake_r, self.wake_w = multiprocessing.Pipe(duplex=False)
        self.workers = [self._start(fork=fork_first and fork_safe(limits)) for _ in range(n)]  # replacements spawn
        self.thread = threading.Thread(target=self._feed, name="chunkwise-pool", daemon=True)
        self.thread.start()

    def _start(self, fork: bool = False) -> _Worker:
        self._serial += 1
        log = os.path.join(self.tmp.name, f"worker-{self._serial}.log")
        ctx = multiprocessing.get_context("fork") if fork else self.ctx
        parent, child = ctx.Pipe()
        if SOCKET_BUFFER is not None:
            _shrink(parent, child)
        proc = ctx.Process(target=worker_main, args=(child, self.fn, self.limits.memory_mb, log),
                           name=f"chunkwise-worker-{self._serial}", daemon=True)
        with _main_left_alone(self.fn):
            proc.start()
        child.close()
        return _Worker(proc, parent, log, time.monotonic(), out=Outbox(parent.fileno()))

    def map(self, items: Iterable[Any], window: int, idle=None) -> Iterator[Outcome]:
        """Outcomes in input order; ``idle()`` is called (outside the lock) before the consumer
        would wait for the next one, and every ``IDLE_TICK`` while it waits: it may use the time
        (the write stage commits a batch old enough then)."""
        source = enumerate(items)
        drawn = taken = 0
        exhausted = False
        with self.cond:
            self.done.clear()
            self.fans.clear()
        try:
            while True:
                while not exhausted and drawn - taken < window:
                    try:
                        pair = next(source)
                    except StopIteration:
                        exhausted = True
                        break
                    with self.cond:
                        asleep = not self.todo  # else the feeder is busy with the queue and sees this item
                        self.todo.append(pair)
                    if asleep:
                        self.wake_w.send_bytes(b"x")
                    drawn += 1
                if exhausted and taken == drawn:
                    return
                while idle is not None:  # called before the wait, and every IDLE_TICK while it lasts
                    with self.cond:
                        waiting = taken not in self.done and self.error is None
                    if not waiting:
                        break
                    idle()
                    with self.cond:
                        if taken not in self.done and self.error is None:
                            self.cond.wait(IDLE_TICK)
                with self.cond:
                    while taken not in self.done and self.error is None:
                        self.cond.wait()
                    if isinstance(self.error, _Unready):  # as the same warm-up raises it in process
                        raise self.error.error
                    if self.error is not None:
                        raise ChunkwiseError(f"the worker pool failed: {type(self.error).__name__}: "
                                             f"{self.error}") from self.error
                    out = self.done.pop(taken)
                taken += 1
                yield out
        finally:
            if taken != drawn:  # abandoned mid-way: nothing of it may leak into the next map()
                self.close()

    # --- feeder thread ---

    def _feed(self) -> None:
        try:
            while True:
                with self.cond:
                    if self.closing:
                        return
                    for i in range(len(self.workers)):
                        w = self.workers[i]  # a worker that dies while being sent to is replaced in place
                        while w.ready and len(w.jobs) < _DEPTH and self.todo and self._dispatch(w, self.todo.popleft()):
                            pass
                watched = [w for w in self.workers if w.jobs or not w.ready]
                ready, writable = _wait([self.wake_r] + [w.conn for w in watched] + [w.proc.sentinel for w in watched],
                                        [w.conn for w in watched if w.out.pending], self._next_deadline(watched))
                if self.wake_r in ready:
                    while self.wake_r.poll():
                        self.wake_r.recv_bytes()
                for w in watched:
                    if w.conn in writable and not self._flush(w):
                        continue  # it died: handled
                    if not w.ready:
                        self._await_ready(w, w.conn in ready or w.proc.sentinel in ready)
                    elif w.conn in ready or w.proc.sentinel in ready:
                        self._collect(w)
                    elif self._expired(w):
                        self._fail(w, self._timeout_failure())
        except BaseException as exc:  # noqa: BLE001 — surfaced to the consumer, never swallowed
            with self.cond:
                self.error = exc
                self.cond.notify_all()

    def _dispatch(self, w: _Worker, pair: tuple[int, Any]) -> bool:
        """Send ``pair`` to ``w``; False when ``w`` turned out dead (it has been replaced)."""
        index, item = pair
        try:
            w.out.put(pair)  # queued, never a blocking send: the feeder must stay free to read (outbox.py)
        except Exception as exc:  # noqa: BLE001 — an unpicklable item is that item's failure
            self._answer(index, item, None, Failure("error", f"item cannot be sent to a worker: "
                                                    f"{type(exc).__name__}: {exc}", type(exc).__name__, str(exc)), 0.0)
            return True
        try:
            w.out.flush()
        except OSError:  # the worker died
            w.out.clear()
            self.todo.appendleft(pair)
            if w.jobs:  # in the item it was running
                self._fail(w, self._death_failure(w))
            else:  # idle: not an item's fault
                self._replace(w)
            return False
        if not w.jobs:
            w.since = time.monotonic()
        w.jobs.append(pair)
        return True

    def _flush(self, w: _Worker) -> bool:
        """More of ``w``'s queued items into its socket; False when it turned out dead (then the
        answers it sent are taken and the item it was running fails, as when it crashes)."""
        try:
            w.out.flush()
            return True
        except OSError:
            w.out.clear()
            self._collect(w)  # its closed end reads as its last answers, then EOF
            return False

    def _await_ready(self, w: _Worker, readable: bool) -> None:
        """A worker that cannot start (``fn`` does not unpickle, an import fails) is the pool's
        failure, not an item's: raised to the consumer with what the worker printed."""
        if readable:
            try:
                said = w.conn.recv()
            except (EOFError, OSError):
                said = None
            if said == "ready":
                w.ready = True
                return
            if isinstance(said, tuple) and said[:1] == ("unready",):  # its warm-up refused a setting
                raise _Unready(said[1])
            w.proc.join(5)
            raise ChunkwiseError(f"a worker process failed to start (exit code {w.proc.exitcode}): "
                               f"{read_log(w.log) or 'no output'}")
        if time.monotonic() - w.started > _START_SECONDS:
            raise ChunkwiseError(f"a worker process did not start within {_START_SECONDS:g} s; try --workers 1")

    def _next_deadline(self, watched: list[_Worker]) -> float | None:
        ends = [w.started + _START_SECONDS for w in watched if not w.ready]
        if self.limits.seconds is not None:
            ends += [w.since + self.limits.seconds for w in watched if w.jobs]
        if not ends:
            return None
        return max(0.0, min(ends) - time.monotonic()) + 0.001

    def _expired(self, w: _Worker) -> bool:
        return self.limits.seconds is not None and bool(w.jobs) and time.monotonic() - w.since >= self.limits.seconds

    def _timeout_failure(self) -> Failure:
        return Failure("timeout", f"timed out after {self.limits.seconds:g} s (worker stopped)")

    def _collect(self, w: _Worker) -> None:
        """Every answer the worker has sent (one per item, in the order they were sent)."""
        while w.jobs:
            index, item = w.jobs[0]
            try:
                got_index, ok, payload, retire = w.conn.recv()
            except (EOFError, OSError, ValueError):  # died mid-item (or mid-reply)
                self._fail(w, self._death_failure(w))
                return
            assert got_index == index, (got_index, index)
            now = time.monotonic()
            w.jobs.popleft()
            self._answer(index, item, payload if ok else None, None if ok else payload, now - w.since)
            w.since = now  # the next item started when this one was answered
            if retire:  # it exits: what it had not started goes to the others
                self._requeue(w)
                self._replace(w)
                return
            if not w.conn.poll():
                return

    def _requeue(self, w: _Worker) -> None:
        with self.cond:
            self.todo.extendleft(reversed(w.jobs))
        w.jobs.clear()

    def _death_failure(self, w: _Worker) -> Failure:
        w.proc.join(5)
        code = w.proc.exitcode
        detail = read_log(w.log)
        if code is not None and code < 0:
            try:
                name = signal.Signals(-code).name
            except ValueError:
                name = f"signal {-code}"
            hint = " (killed: out of memory?)" if -code == signal.SIGKILL else _where(detail)
            return Failure("crash", f"worker crashed ({name}){hint}", detail=detail)
        return Failure("crash", f"worker exited with code {code}", detail=detail)

    def _fail(self, w: _Worker, failure: Failure) -> None:
        """The item ``w`` was running failed (it crashed or ran out of time): recorded, the items
        sent after it requeued, the worker replaced."""
        index, item = w.jobs.popleft()
        seconds = time.monotonic() - w.since
        self._requeue(w)
        self._kill(w)
        if not failure.detail:
            failure = with_detail(failure, read_log(w.log))
        self._answer(index, item, None, failure, seconds)
        self._replace(w, dead=True)

    def _answer(self, key, item, value, failure, seconds) -> None:
        """One answer from a worker: an item's outcome, or a part or join of a split item."""
        if isinstance(key, tuple):  # ("part", index, k) or ("join", index)
            fan = self.fans.get(key[1])
            if fan is None:  # the item failed already: a late part's answer is dropped
                return
            fan.seconds += seconds
            if failure is None and isinstance(value, Fanout):
                failure = NESTED
            if failure is not None or key[0] == "join":
                self._unfan(key[1])
                self._record(key[1], fan.item, None if failure else value, failure, fan.seconds)
                return
            fan.results[key[2]] = value
            fan.left -= 1
            if not fan.left:
                with self.cond:
                    self.todo.appendleft((("join", key[1]), Join(fan.join, tuple(fan.results))))
            return
        if failure is None and isinstance(value, Fanout):
            parts = [(("part", key, k), part) for k, part in enumerate(value.parts)]
            self.fans[key] = _Fan(item, value.join, [None] * len(parts), len(parts), seconds)
            with self.cond:  # first in line: the item's outcome holds back every later one
                self.todo.extendleft(reversed(parts or [(("join", key), Join(value.join, ()))]))
            return
        self._record(key, item, value, failure, seconds)

    def _unfan(self, index: int) -> None:
        """Forget a split item; its parts not yet sent are dropped."""
        self.fans.pop(index, None)
        with self.cond:
            kept = [p for p in self.todo if not (isinstance(p[0], tuple) and p[0][1] == index)]
            self.todo.clear()
            self.todo.extend(kept)

    def _record(self, index, item, value, failure, seconds) -> None:
        with self.cond:
            self.done[index] = Outcome(index, item, value, failure, seconds)
            self.cond.notify_all()

    def _replace(self, w: _Worker, dead: bool = False) -> None:
        if not dead:
            self._kill(w, gentle=True)
        fresh = self._start()
        i = self.workers.index(w)
        self.workers[i] = fresh

    @staticmethod
    def _kill(w: _Worker, gentle: bool = False) -> None:
        if gentle:
            w.proc.join(1)
        if w.proc.is_alive():
            w.proc.kill()
        w.proc.join(5)
        w.conn.close()
        try:
            os.unlink(w.log)
        except OSError:
            pass

    def close(self) -> None:
        with self.cond:
            if self.closing:
                return
            self.closing = True
            self.todo.clear()
        try:
            self.wake_w.send_bytes(b"x")
        except OSError:
            pass
        self.thread.join(10)
        for w in self.workers:
            if not w.jobs:
                try:
                    w.conn.send(None)
                except OSError:
                    pass
        deadline = time.monotonic() + 2
        for w in self.workers:
            w.proc.join(max(0.0, deadline - time.monotonic()))
            self._kill(w)
        self.wake_r.close()
        self.wake_w.close()
        self.tmp.cleanup()
