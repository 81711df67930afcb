"""Items that split into parts (``sandbox.Fanout``): the parts run on any worker, the join gets
their results in order, the item's outcome stays in its place; a failing part or join fails that
item only; a part may not split again. The same outcomes in process and in a pool."""
from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chunkwise.sandbox import Limits, Pool

from fanning import task  # noqa: E402

LIMITS = Limits(memory_mb=512, seconds=120)

item = st.one_of(st.integers(-50, 50), st.tuples(st.just("split"), st.sampled_from("abc"), st.integers(0, 5)))


def expected(x):
    return (x[1], list(range(x[2]))) if isinstance(x, tuple) else 2 * x


@pytest.fixture(scope="module")
def pool():
    with Pool(task, workers=2, limits=LIMITS) as p:
        yield p


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(item, max_size=12))
def test_split_items_come_back_joined_in_their_place(pool, items):
    out = list(pool.map(items, window=3))
    assert [o.index for o in out] == list(range(len(items)))
    assert [o.failure for o in out] == [None] * len(items)
    assert [o.value for o in out] == [expected(x) for x in items]
    with Pool(task, workers=1) as inline:  # in process: the same outcomes
        assert [o.value for o in inline.map(items)] == [expected(x) for x in items]


def test_the_parts_run_on_both_workers(pool):
    [out] = list(pool.map([("pids", 6)]))
    assert out.ok and len(out.value) == 2


def test_a_part_or_join_that_crashes_fails_its_item_only(pool):
    items = [1, ("split", "crash-part", 3), 2, ("split", "crash-join", 2), ("split", "nested", 1), 3]
    out = list(pool.map(items))
    assert [o.value for o in out if o.ok] == [2, 4, 6]
    failed = {o.index: o.failure for o in out if not o.ok}
    assert set(failed) == {1, 3, 4}
    assert failed[1].kind == "crash" and failed[3].kind == "crash"
    assert "split again" in failed[4].reason
    assert out[1].item == items[1]  # the item's own value, not a part, is reported
