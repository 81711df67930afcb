"""Runs that must not hang, for the send/send-cycle regressions of the process pool
(tests/sandbox/test_send_cycle.py, tests/pipeline/test_split_no_hang.py): the workers' socket
buffers shrunk so that every answer or join above a few KB fills its socket (a cycle of blocking
sends is then certain, not a matter of timing), and the run in a thread with a deadline, so that a
hang is a test failure rather than a stuck test process."""
from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import pytest

from chunkwise.sandbox import processes


@contextmanager
def tiny_socket_buffers(size: int = 4096) -> Iterator[None]:
    """Every worker started in the block gets ``size``-byte send and receive buffers (SO_SNDBUF and
    SO_RCVBUF on both ends of its connection); the default is restored after the block."""
    saved, processes.SOCKET_BUFFER = processes.SOCKET_BUFFER, size
    try:
        yield
    finally:
        processes.SOCKET_BUFFER = saved


def within(deadline: float, run: Callable, unstick: Callable[[], None], hung: str,
           done: Callable[[], None] | None = None):
    """``run()`` in a daemon thread: its result, or its exception raised again here. If it has not
    returned after ``deadline`` seconds, ``unstick()`` (kill the workers, so that neither the thread
    nor the test process stays stuck) and fail with ``hung``. ``done()``, if given, runs once the
    run has ended, before its result is returned or its error raised."""
    got: dict = {}

    def target():
        try:
            got["out"] = run()
        except BaseException as exc:  # noqa: BLE001 — raised again below, in the test's thread
            got["error"] = exc

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(deadline)
    if thread.is_alive():
        unstick()
        pytest.fail(hung)
    if done is not None:
        done()
    if "error" in got:
        raise got["error"]
    return got["out"]
