"""The contained pool with real hostile inputs: a segfault, a Rust panic, a hang, memory bombs."""
from __future__ import annotations

import multiprocessing
import os
import threading
import re
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chunkwise.sandbox import Failure, Limits, Pool, default_workers, run

pytest.importorskip("markdown_it_pyrs")

from hostile import GOOD, NESTED, PANIC, bomb, parse_rs, task  # noqa: E402

LIMITS = Limits(memory_mb=256, seconds=120)  # generous: a loaded CI machine is slow; hangs use their own


@pytest.fixture(scope="module")
def pool():
    with Pool(task, workers=2, limits=LIMITS) as p:
        yield p


def values(outcomes):
    return [o.value for o in outcomes]


def test_nested_quotes_really_segfault_markdown_it_pyrs_and_cost_one_item(pool):
    clean = values(run(parse_rs, GOOD, workers=1))
    out = list(pool.map([*GOOD[:3], NESTED, *GOOD[3:]]))
    assert [o.index for o in out] == list(range(7))
    bad = out[3]
    assert bad.failure.kind == "crash", bad.failure
    assert re.fullmatch(r"worker crashed \(SIGSEGV\) in chunking/markdown\.py:\d+ parse_markdown", bad.failure.reason)
    assert bad.item is NESTED or bad.item == NESTED
    assert "markdown.py" in bad.failure.detail  # faulthandler's frames name where it died
    assert values(out[:3] + out[4:]) == clean


@pytest.mark.parametrize("workers", [1, 2])
def test_rust_panic_is_a_per_item_failure(workers):
    out = list(run(task, [GOOD[0], PANIC, GOOD[1]], workers=workers, limits=LIMITS))
    assert [o.ok for o in out] == [True, False, True]
    f = out[1].failure
    assert f.kind == "panic" and f.error_type == "PanicException"
    assert "index out of bounds" in f.reason
    assert values([out[0], out[2]]) == values(run(parse_rs, GOOD[:2], workers=1))


@pytest.mark.parametrize("bad", ["hang", "sleep"])
def test_hang_is_stopped_at_the_time_limit(bad):
    start = time.monotonic()
    out = list(run(task, [GOOD[0], bad, GOOD[1]], workers=2, limits=Limits(memory_mb=256, seconds=1.5)))
    took = time.monotonic() - start
    assert out[1].failure.kind == "timeout" and "1.5 s" in out[1].failure.reason
    assert out[0].ok and out[2].ok
    assert 1.5 <= out[1].seconds < 5 and took < 10


@pytest.mark.parametrize("bad", ["bomb", "grow"])
def test_memory_blow_up_is_refused_at_the_limit(pool, bad):
    bad = bomb() if bad == "bomb" else bad
    out = list(pool.map([GOOD[0], bad, GOOD[1], bad, GOOD[2]]))
    assert [o.ok for o in out] == [True, False, True, False, True]
    assert out[1].failure.kind == "memory", (out[1].failure, out[3].failure)  # the detail, should it flake again
    assert out[1].failure.reason.startswith("over the 256 MB memory limit (MemoryError")
    assert values([out[0], out[2], out[4]]) == values(run(parse_rs, GOOD[:3], workers=1))


def test_exceptions_keep_type_and_message_and_workers_survive(pool):
    out = list(pool.map(["raise", GOOD[0], "exit", "unpicklable", GOOD[1]]))
    f = out[0].failure
    assert (f.kind, f.error_type, f.message) == ("error", "ValueError", "bad front matter\nsecond line")
    assert f.reason == "ValueError: bad front matter" and "Traceback" in f.detail
    assert out[2].failure == Failure("crash", "worker exited with code 3")
    assert out[3].failure.kind == "error" and "cannot be sent back" in out[3].failure.reason
    assert out[1].ok and out[4].ok


def test_one_worker_never_forks_and_still_catches_per_item(monkeypatch):
    seen, started = [], []
    me, real_start = threading.get_ident(), multiprocessing.process.BaseProcess.start

    def start(self):  # processes started from this thread (the module's pool respawns on its own thread)
        if threading.get_ident() == me:
            started.append(self.name)
        return real_start(self)

    monkeypatch.setattr(multiprocessing.process.BaseProcess, "start", start)

    def local(item):  # not even picklable: nothing leaves this process
        seen.append(os.getpid())
        return task(item)

    out = list(run(local, [GOOD[0], "raise", PANIC, GOOD[1]], workers=1))
    assert [o.ok for o in out] == [True, False, False, True]
    assert [o.failure.kind for o in out if not o.ok] == ["error", "panic"]
    assert set(seen) == {os.getpid()} and started == []


def test_items_are_drawn_lazily_within_the_window(pool):
    drawn = []

    def source():
        for i, text in enumerate(GOOD * 4):
            drawn.append(i)
            yield text

    taken = 0
    for out in pool.map(source(), window=3):
        taken += 1
        assert len(drawn) <= taken + 3
    assert taken == 24


def test_abandoning_a_map_stops_its_workers_and_the_pool_restarts():
    with Pool(task, workers=2, limits=LIMITS) as p:
        names = set()
        for out in p.map([GOOD[0], "sleep", "sleep"] + GOOD):
            names = {w.proc.name for w in p._procs.workers}
            start = time.monotonic()
            break  # with both workers asleep: closing must not wait for their time limit
        assert p._procs is None or p._procs.closing
        assert time.monotonic() - start < LIMITS.seconds
        assert not [c for c in multiprocessing.active_children() if c.name in names]
        assert values(p.map(GOOD[:2])) == values(run(parse_rs, GOOD[:2], workers=1))


def test_limits_are_validated():
    with pytest.raises(ValueError, match="at least 16"):
        Limits(memory_mb=1)
    with pytest.raises(ValueError, match="positive"):
        Limits(seconds=0)
    with pytest.raises(ValueError, match="at least 1"):
        Pool(task, workers=0)
    assert default_workers() >= 1


BAD = ["raise", "bomb", PANIC, NESTED, "exit"]  # "bomb": the zlib bomb


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.one_of(st.sampled_from(range(len(GOOD))).map(lambda i: ("good", i)),
                          st.sampled_from(range(len(BAD))).map(lambda i: ("bad", i))), max_size=10))
def test_bad_items_never_change_the_others(pool, plan):
    items = [GOOD[i] if kind == "good" else bomb() if BAD[i] == "bomb" else BAD[i] for kind, i in plan]
    out = list(pool.map(items))
    assert [o.index for o in out] == list(range(len(items)))
    assert [o.ok for o in out] == [kind == "good" for kind, _ in plan]
    good = [GOOD[i] for kind, i in plan if kind == "good"]
    assert [o.value for o in out if o.ok] == values(run(parse_rs, good, workers=1))


def test_pool_executor_puts_the_failure_where_the_item_was():
    from chunkwise.sandbox import PoolExecutor

    ex = PoolExecutor(2, on_failure=lambda item, f: ("failed", f.kind), limits=LIMITS)
    got = list(ex.map(task, [GOOD[0], PANIC, NESTED, GOOD[1]]))
    assert got[1:3] == [("failed", "panic"), ("failed", "crash")]
    assert [got[0], got[3]] == values(run(parse_rs, GOOD[:2], workers=1))


def test_a_stuck_worker_dies_with_its_owner(tmp_path):
    """SIGKILL the process that owns the pool while its worker sleeps in an item: the worker goes too."""
    import signal
    import subprocess
    import sys

    script = tmp_path / "owner.py"
    script.write_text(
        "import sys, time\n"
        f"sys.path.insert(0, {os.path.dirname(__file__)!r})\n"
        "from hostile import task\n"
        "from chunkwise.sandbox import Limits, Pool\n"
        "if __name__ == '__main__':\n"
        "    with Pool(task, workers=2, limits=Limits(seconds=3600)) as p:\n"
        "        for o in p.map(['pid', 'sleep']):\n"
        "            print(o.value, flush=True)\n", encoding="utf-8")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    owner = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True, env=env)
    pid = int(owner.stdout.readline())
    time.sleep(0.5)
    os.kill(owner.pid, signal.SIGKILL)
    owner.wait()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and os.path.exists(f"/proc/{pid}") and \
            open(f"/proc/{pid}/stat").read().split()[2] != "Z":
        time.sleep(0.1)
    alive = os.path.exists(f"/proc/{pid}") and open(f"/proc/{pid}/stat").read().split()[2] != "Z"
    assert not alive, "a worker outlived the killed owner"


def test_no_items_start_no_process(monkeypatch):
    from chunkwise.sandbox import processes

    monkeypatch.setattr(processes.Processes, "__init__", lambda *a, **k: (_ for _ in ()).throw(AssertionError))
    assert list(Pool(task, workers=2).map([])) == []


def test_what_filled_memory_is_freed_before_the_failure_is_formatted(monkeypatch):
    """A MemoryError's frames hold what filled memory; formatting its traceback reads source files
    and may need memory itself (in CI the 'grow' item once came back as a crash, not 'memory'). The
    frames are cleared first: by the time the traceback is formatted, the hog is gone."""
    import traceback
    import weakref

    from chunkwise.sandbox.outcome import call

    class Hog:
        pass

    seen = {}

    def fill(_):
        hog = Hog()
        seen["ref"] = weakref.ref(hog)
        raise MemoryError("no room")

    real = traceback.format_exc

    def format_exc(*a, **kw):
        seen["alive"] = seen["ref"]() is not None
        return real(*a, **kw)

    monkeypatch.setattr(traceback, "format_exc", format_exc)
    value, failure = call(fill, None)
    assert value is None and failure.kind == "memory" and "fill" in failure.detail
    assert seen["alive"] is False
