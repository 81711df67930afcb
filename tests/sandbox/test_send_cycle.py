"""The pool's feeder never blocks on a send, so a worker blocked sending a big answer is always
read. Regression: the feeder sent a split item's big ``Join`` with a blocking send to a worker that
was itself blocked sending a big answer; neither read again (``chunkwise ingest --workers 2`` on
the office files of ../shared/data hung). Each run here is in a thread with a deadline: a hang is
a failure (the workers are then killed so the test process does not hang too)."""
from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from no_hang import tiny_socket_buffers, within

from chunkwise.sandbox import Limits, Pool

from fanning import big  # noqa: E402

MB = 1024 * 1024
DEADLINE = 120.0  # seconds; the runs take well under 10 on a loaded machine


def run(items, workers, isolate=False, window=None):
    """The pool's outcomes for ``items``, or a test failure when they do not come within DEADLINE."""
    pool = Pool(big, workers=workers, limits=Limits(memory_mb=1024, seconds=None), isolate=isolate)

    def unstick():  # the feeder sees the deaths
        for w in pool._procs.workers:
            w.proc.kill()

    return within(DEADLINE, lambda: list(pool.map(items, window=window)), unstick,
                  f"the pool hung on {items!r} ({workers} workers): a send/send cycle", done=pool.close)


def expected(item):
    if isinstance(item, tuple) and item[0] == "big":
        return b"b" * item[1]
    if isinstance(item, tuple) and item[0] == "bigsplit":
        return [item[2]] * item[1]
    return 2 * item


def test_a_big_join_sent_while_the_worker_sends_a_big_answer():
    # One worker, two items in flight: part 0 answered, item 1 sent behind part 1; part 1 answered,
    # the 8 MB join sent while the worker runs item 1 (0.5 s) and then sends its 4 MB answer: the
    # old blocking send of the join and the worker's send of its answer waited on each other.
    items = [("bigsplit", 2, 4 * MB, 0.5), ("big", 4 * MB, 0.5), ("big", 4 * MB, 0.0), 3]
    out = run(items, workers=1, isolate=True)
    assert [o.value for o in out] == [expected(x) for x in items]


def test_a_worker_that_dies_with_a_big_join_still_queued_for_it():
    # The join waits in the feeder's queue behind item 1, which kills its worker: item 1 fails
    # (a crash), the join goes whole to the fresh worker, the other items are untouched.
    items = [("bigsplit", 2, 4 * MB, 0.5), ("crash", 0.5), 3]
    out = run(items, workers=1, isolate=True)
    assert out[0].value == [4 * MB, 4 * MB] and out[2].value == 6
    assert out[1].failure is not None and out[1].failure.kind == "crash"


size = st.integers(0, 300_000)
delay = st.sampled_from([0.0, 0.0, 0.05])


@settings(max_examples=8, deadline=None)
@given(st.lists(st.one_of(st.integers(-5, 5), st.tuples(st.just("big"), size, delay),
                          st.tuples(st.just("bigsplit"), st.integers(1, 4), size, delay)),
                min_size=1, max_size=8))
def test_any_mix_of_big_answers_and_joins_comes_back_with_tiny_socket_buffers(items):
    with tiny_socket_buffers():  # every answer above a few KB fills its socket
        out = run(items, workers=2, window=3)
    assert [o.failure for o in out] == [None] * len(items)
    assert [o.value for o in out] == [expected(x) for x in items]
