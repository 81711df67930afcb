"""``fork_first`` (the doors' single worker): the first worker is a fork of a parent that is safe to
fork, so it skips a second interpreter's imports and tokenizer load; it is still another process,
under the same absolute limits, and a crash in it is that item's failure with a spawned
replacement. A parent that is not safe to fork (threads running, a library with thread pools
loaded, too big for the worker's limit) spawns as before."""
from __future__ import annotations

import os
import sys
import threading

from chunkwise.sandbox import Limits, Pool
from chunkwise.sandbox.processes import fork_safe

from hostile import Ballast, task

LIMITS = Limits(memory_mb=2048, seconds=120)


def outcomes(fn, items, limits=LIMITS):
    with Pool(fn, workers=1, isolate=True, limits=limits, fork_first=True) as pool:
        return list(pool.map(items))


class Marked:
    """Answers whether it runs in a fork of the test process (a spawned worker unpickles a fresh
    copy: ``inherited`` is then False) and in which process."""

    def __init__(self) -> None:
        self.inherited = False

    def __getstate__(self):
        return {"inherited": False}

    def __call__(self, item):
        return self.inherited, os.getpid()


def test_the_first_worker_is_a_fork_and_replacements_are_spawned():
    assert fork_safe(LIMITS), "the test process is safe to fork"
    fn = Marked()
    fn.inherited = True  # only a fork sees this: pickling drops it
    first, crash, after = outcomes(_CrashOn(fn), ["a", "exit", "b"])
    assert first.ok and first.value[0] is True and first.value[1] != os.getpid()
    assert not crash.ok and crash.failure.kind == "crash"
    assert after.ok and after.value[0] is False and after.value[1] not in (os.getpid(), first.value[1])


class _CrashOn:
    def __init__(self, inner) -> None:
        self.inner = inner

    def __call__(self, item):
        if item == "exit":
            os._exit(3)
        return self.inner(item)


def test_a_forked_worker_keeps_the_absolute_memory_limit():
    small, big = outcomes(Ballast(200), [1, 1500], Limits(memory_mb=1400, seconds=120))
    assert small.ok and not big.ok and big.failure.kind == "memory"


def test_hostile_items_in_a_forked_worker_are_their_own_failures():
    outs = outcomes(task, ["# fine\n", "raise", "grow", "# also fine\n"], Limits(memory_mb=1024, seconds=120))
    assert [o.ok for o in outs] == [True, False, False, True]
    assert outs[2].failure.kind == "memory"


def test_not_safe_to_fork_with_threads_running_or_torch_loaded(monkeypatch):
    stop = threading.Event()
    t = threading.Thread(target=stop.wait)
    t.start()
    try:
        assert not fork_safe(LIMITS)
        (out,) = outcomes(Marked(), ["a"])
        assert out.ok and out.value[0] is False  # spawned
    finally:
        stop.set()
        t.join()
    monkeypatch.setitem(sys.modules, "torch", sys)
    assert not fork_safe(LIMITS)
    monkeypatch.delitem(sys.modules, "torch")
    assert fork_safe(LIMITS)
    assert not fork_safe(Limits(memory_mb=16, seconds=1))  # this process is bigger than half of 16 MB
