"""Small items crossing to a worker several at a time (``sandbox.bundle``) keep every guarantee of
one item at a time: outcomes in input order, each item's own value or failure, and a segfault, a
panic, a bomb, a hang or an unpicklable result in a bundle costs only that item."""
from __future__ import annotations

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from chunkwise.sandbox import Limits, Pool, PoolExecutor, run
from chunkwise.sandbox.bundle import Bundle, bundles

pytest.importorskip("markdown_it_pyrs")

from hostile import GOOD, NESTED, PANIC, bomb, parse_rs, task  # noqa: E402

LIMITS = Limits(memory_mb=256, seconds=120)
BAD = ["raise", "bomb", PANIC, NESTED, "exit", "unpicklable"]
KIND = {"raise": "error", "bomb": "memory", PANIC: "panic", NESTED: "crash", "exit": "crash", "unpicklable": "error"}


def everything(item) -> bool:
    return True


@pytest.fixture(scope="module")
def pool():
    with Pool(task, workers=2, limits=LIMITS) as p:
        yield p


def test_small_items_are_grouped_in_order_and_others_stay_alone():
    got = list(bundles([1, 2, 30, 4, 5, 6, 7, 8, 90, 10], lambda x: x < 10, 3))
    assert got == [Bundle((1, 2)), 30, Bundle((4, 5, 6)), Bundle((7, 8)), 90, 10]


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.one_of(st.sampled_from(range(len(GOOD))).map(lambda i: ("good", i)),
                          st.sampled_from(range(len(BAD))).map(lambda i: ("bad", i))), max_size=12),
       st.integers(2, 5))
# Found by this property in CI: an unpicklable answer ahead of a panic or a bomb in one bundle made
# the worker report "not retiring" and exit, so the next item handed to it failed as a crash.
@example(plan=[("bad", 5), ("bad", 1), ("good", 0)], size=2)
@example(plan=[("bad", 5), ("bad", 2)], size=2)
def test_a_bad_item_in_a_bundle_costs_only_itself(pool, plan, size):
    items = [GOOD[i] if kind == "good" else bomb() if BAD[i] == "bomb" else BAD[i] for kind, i in plan]
    out = list(pool.map(items, bundle=(everything, size)))
    assert [o.index for o in out] == list(range(len(items)))
    assert [o.ok for o in out] == [kind == "good" for kind, _ in plan]
    assert [o.failure.kind for o in out if not o.ok] == [KIND[BAD[i]] for kind, i in plan if kind == "bad"]
    good = [GOOD[i] for kind, i in plan if kind == "good"]
    assert [o.value for o in out if o.ok] == [o.value for o in run(parse_rs, good, workers=1)]


def test_a_hang_in_a_bundle_times_out_alone():
    items = [GOOD[0], "hang", GOOD[1], GOOD[2]]
    with Pool(task, workers=2, limits=Limits(memory_mb=256, seconds=1.5)) as p:
        out = list(p.map(items, bundle=(everything, 4)))
    assert [o.ok for o in out] == [True, False, True, True]
    assert out[1].failure.kind == "timeout"
    assert [o.value for o in out if o.ok] == [o.value for o in run(parse_rs, [GOOD[0], GOOD[1], GOOD[2]], workers=1)]


def test_the_executor_bundles_only_what_it_is_told_is_small():
    ex = PoolExecutor(1, on_failure=lambda item, f: ("failed", f.kind), limits=LIMITS, isolate=True,
                      bundle=(lambda item: item != NESTED, 3))
    got = list(ex.map(task, [GOOD[0], PANIC, GOOD[1], NESTED, GOOD[2], "exit"]))
    assert got[1] == ("failed", "panic") and got[3] == ("failed", "crash") and got[5] == ("failed", "crash")
    assert [got[0], got[2], got[4]] == [o.value for o in run(parse_rs, [GOOD[0], GOOD[1], GOOD[2]], workers=1)]


def test_a_warm_up_that_refuses_its_setting_fails_the_run_with_that_error():
    """A worker's warm-up error is the run's, with its own type and message (the CLI's exit 2 for a
    bad setting), as when the warm-up ran in the calling process (ingest no longer does it there)."""
    from chunkwise.errors import ConfigError
    from hostile import Unloadable

    with pytest.raises(ConfigError, match="not a usable"):
        list(run(Unloadable(), [1, 2], workers=2, limits=LIMITS))
