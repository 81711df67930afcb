"""The order files go to the workers (``pipeline.schedule.largest_first``): a permutation of the
walk, largest first within each bounded group, equal sizes in walk order, the same for any run."""
from __future__ import annotations

from dataclasses import dataclass

from hypothesis import given, strategies as st

from chunkwise.pipeline.schedule import largest_first


@dataclass(frozen=True)
class Task:
    name: int
    size: int


@dataclass(frozen=True)
class Failed:
    task: Task


@given(st.lists(st.integers(0, 50), max_size=60), st.integers(1, 12), st.integers(1, 400))
def test_largest_first_within_bounded_groups(sizes, files, nbytes):
    tasks = [Task(i, s) for i, s in enumerate(sizes)]
    out = list(largest_first(iter(tasks), files=files, nbytes=nbytes))
    assert sorted(out, key=lambda t: t.name) == tasks
    # cut the walk where the groups end: each group's files, then its bytes, bound it
    groups, group, held = [], [], 0
    for t in tasks:
        group.append(t)
        held += t.size
        if len(group) >= files or held >= nbytes:
            groups.append(group)
            group, held = [], 0
    groups.append(group)
    at = 0
    for group in groups:
        got = out[at:at + len(group)]
        assert got == sorted(group, key=lambda t: (-t.size, t.name))
        at += len(group)
    assert out == list(largest_first(iter(tasks), files=files, nbytes=nbytes))


def test_a_walk_failure_has_the_size_of_its_task_and_goes_last():
    out = list(largest_first([Failed(Task(0, 0)), Task(1, 5), Task(2, 9)]))
    assert [getattr(t, "name", None) for t in out] == [2, 1, None]
