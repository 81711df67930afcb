"""``fork_first`` (the doors' single worker): the first worker is a fork of a parent that is safe to
fork, so it skips a second interpreter's imports and tokenizer load; it is still another process,
under the same absolute limits, and a crash in it is that item's failure with a spawned
replacement. A parent that is not safe to fork (threads running, a library with thread pools
loaded, too big for the worker's limit) spawns as before."""
from __future__ import annotations

import os
import sys
import threading
import time

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


def test_in_a_fresh_interpreter():
    """The tests below need a parent that is safe to fork; a long test session may hold a native
    thread pool (tokenizers' after a batch encode), so they run in a fresh interpreter here."""
    import subprocess

    here = os.path.dirname(os.path.abspath(__file__))
    src = os.path.join(here, "..", "..", "src")
    code = ("import sys; sys.path[:0] = [%r, %r]; import test_fork_first as t; assert t.fork_safe(t.LIMITS); "
            "t.check_fork_then_spawn(); t.check_every_initial_worker_forked(); t.check_memory(); t.check_hostile(); t.check_unsafe_parents(); print('ok')"
            % (os.path.abspath(src), here))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600,
                         env={**os.environ, "PYTHONPATH": os.path.abspath(src)})
    assert out.returncode == 0 and out.stdout.strip().endswith("ok"), (out.stdout[-1000:], out.stderr[-3000:])


def check_fork_then_spawn():
    fn = Marked()
    fn.inherited = True  # only a fork sees this: pickling drops it
    first, crash, after = outcomes(_CrashOn(fn), ["a", "exit", "b"])
    assert first.ok and first.value[0] is True and first.value[1] != os.getpid()
    assert not crash.ok and crash.failure.kind == "crash"
    assert after.ok and after.value[0] is False and after.value[1] not in (os.getpid(), first.value[1])


class _Slow(Marked):
    def __call__(self, item):
        import time

        time.sleep(0.2)  # long enough that both workers take items
        return super().__call__(item)


def check_every_initial_worker_forked():
    """Ingest's pool (``pipeline.executors.contained``) asks for it: each of its initial workers
    is a fork, not only the first (a spawned one pays ~0.4 s of imports before its first file)."""
    from chunkwise.pipeline.executors import contained

    assert contained(2).fork_first is True
    fn = _Slow()
    fn.inherited = True
    with Pool(fn, workers=2, isolate=True, limits=LIMITS, fork_first=True) as pool:
        values = [out.value for out in pool.map(range(8))]
    assert all(inherited for inherited, _ in values), values
    assert len({pid for _, pid in values}) == 2 and os.getpid() not in {pid for _, pid in values}


class _CrashOn:
    def __init__(self, inner) -> None:
        self.inner = inner

    def __call__(self, item):
        if item == "exit":
            os._exit(3)
        return self.inner(item)


def check_memory():
    small, big = outcomes(Ballast(200), [1, 1500], Limits(memory_mb=1400, seconds=120))
    assert small.ok and not big.ok and big.failure.kind == "memory"


def check_hostile():
    outs = outcomes(task, ["# fine\n", "raise", "grow", "# also fine\n"], Limits(memory_mb=1024, seconds=120))
    assert [o.ok for o in outs] == [True, False, False, True]
    assert outs[2].failure.kind == "memory"


def check_unsafe_parents():
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
    for _ in range(600):  # the pool's feeder thread ends just after the pool closes, and the OS
        if fork_safe(LIMITS):  # reaps its task a little later (slower on a loaded machine)
            break
        time.sleep(0.05)
    assert fork_safe(LIMITS), (threading.active_count(), os.listdir("/proc/self/task"))
    sys.modules["torch"] = sys
    assert not fork_safe(LIMITS)
    del sys.modules["torch"]
    assert fork_safe(LIMITS)
    assert not fork_safe(Limits(memory_mb=16, seconds=1))  # this process is bigger than half of 16 MB


def test_a_native_thread_pool_rules_the_fork_out():
    """tokenizers' batch encode starts a Rust thread pool: a fork of it is refused."""
    import subprocess

    src = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "src")
    code = ("from chunkwise.sandbox.processes import fork_safe; from chunkwise.sandbox import Limits; "
            "from chunkwise.chunking.sizing import make_sizer; s = make_sizer('tokens', 'minilm', 'tokenizers'); "
            "before = fork_safe(Limits()); s._tok.encode_batch(['a b'] * 64); print(before, fork_safe(Limits()))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                         env={**os.environ, "PYTHONPATH": os.path.abspath(src), "HF_HUB_OFFLINE": "1"})
    assert out.stdout.split() == ["True", "False"], out.stderr[-2000:]
