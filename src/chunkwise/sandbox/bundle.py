"""Small items sent to a worker several at a time; a bundle that fails is run again, item by item.

Why: for a small file the pool's own work per item (a message each way, the feeder's wait and
read, the consumer's wake-up; the worker's limits set and reset) costs the single parent process
about a tenth of what preparing the file costs a worker, and on two cores the parent's cost per
file is what bounds two workers' speed-up. A ``Bundle`` of consecutive small items crosses as one
message and comes back as one ``Answers``: each item still runs alone under the same limits in the
worker (``worker._run``), and an item's Python failure is still its own answer.

Containment is kept: when a bundle as a whole fails (its worker crashed, ran out of time, or its
answer could not be sent back) or its worker stopped part-way (an item's memory failure or native
panic retires the worker), the items without an answer are run again, each alone, ahead of every
later item. So a crash, a hang or a bomb again costs only its own item; an innocent neighbour just
runs twice. Outcomes still come back one per item, in input order.
"""
from __future__ import annotations

import collections
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Iterator

from chunkwise.sandbox.outcome import Fanout, Outcome


@dataclass(frozen=True)
class Bundle:
    """Several small items for one worker message."""

    items: tuple


@dataclass(frozen=True)
class Answers:
    """A worker's answers to a ``Bundle``'s items, in order: ``(ok, value or Failure)`` each; fewer
    than the items when the worker stopped (it retired)."""

    results: tuple


def bundles(items: Iterable[Any], small: Callable[[Any], bool], size: int) -> Iterator[Any]:
    """``items`` with runs of consecutive ``small`` ones grouped into ``Bundle``s of at most ``size``;
    any other item stays alone."""
    group: list = []
    for item in items:
        if small(item):
            group.append(item)
            if len(group) == size:
                yield Bundle(tuple(group)) if size > 1 else group[0]
                group = []
            continue
        if group:
            yield _packed(group)
            group = []
        yield item
    if group:
        yield _packed(group)


def _packed(group: list) -> Any:
    return group[0] if len(group) == 1 else Bundle(tuple(group))


class _Slot:
    """One item's place in the output: its outcome, once known."""

    __slots__ = ("item", "outcome")

    def __init__(self, item, outcome: Outcome | None = None) -> None:
        self.item, self.outcome = item, outcome


def unbundled(run: Callable[[Iterable[Any]], Iterator[Outcome]], items: Iterable[Any], small: Callable[[Any], bool],
              size: int) -> Iterator[Outcome]:
    """Outcomes of ``items`` in input order (``index``: the item's position), where ``run(units)``
    gives one outcome per unit in order (a ``Processes.map``): small items go as bundles, and an
    item of a bundle left without an answer is run again alone (see the module doc)."""
    retry: collections.deque = collections.deque()  # (slot, item) to run again, alone
    fed: collections.deque = collections.deque()  # what each unit handed to ``run`` fills, in order
    out: collections.deque = collections.deque()  # slots in input order, not yet yielded

    def units(source: Iterator) -> Iterator:
        for unit in source:
            while retry:
                slot, item = retry.popleft()
                fed.append([slot])
                yield item
            parts = unit.items if isinstance(unit, Bundle) else (unit,)
            slots = [_Slot(item) for item in parts]
            out.extend(slots)
            fed.append(slots)
            yield unit

    def settle(unit_slots: list, outcome: Outcome) -> None:
        if not isinstance(outcome.item, Bundle):
            unit_slots[0].outcome = outcome
            return
        answered = outcome.value.results if outcome.ok and isinstance(outcome.value, Answers) else ()
        share = outcome.seconds / max(1, len(answered))
        for k, slot in enumerate(unit_slots):
            if k < len(answered):
                ok, payload = answered[k]
                if not (ok and isinstance(payload, Fanout)):  # a split answers alone (it needs the pool)
                    slot.outcome = Outcome(0, slot.item, payload if ok else None, None if ok else payload, share)
                    continue
            retry.append((slot, slot.item))

    def drain() -> Iterator[Outcome]:
        nonlocal position
        while out and out[0].outcome is not None:
            slot = out.popleft()
            o = slot.outcome
            yield Outcome(position, slot.item, o.value, o.failure, o.seconds)
            position += 1

    position = 0
    source = bundles(items, small, size)
    pending = units(source)
    while True:
        for outcome in run(pending):
            settle(fed.popleft(), outcome)
            yield from drain()
        if not retry:
            break
        again = list(retry)  # retries found after the input ran out: one more pass, each alone
        retry.clear()
        fed.extend([slot] for slot, _ in again)
        pending = iter([item for _, item in again])
    yield from drain()
    assert not out, "an item was left without an outcome"
