"""Items that split (``sandbox.Fanout``) for the pool tests, in a module light to import."""
from __future__ import annotations

import os
import time

from chunkwise.sandbox import Fanout, Join


def task(item):
    """``n`` -> 2n; ``("split", name, n)`` -> n parts ``("part", name, k)``, joined into (name, the
    parts' k in the order they were given); ``("pids", n)``: n slow parts, joined into their pids."""
    if isinstance(item, Join):
        if item.item == "crash-join":
            os._exit(3)
        if item.item == "pids":
            return sorted(set(item.results))
        return item.item, [r for r in item.results]
    if isinstance(item, tuple) and item[0] == "part":
        _, name, k = item
        if name == "crash-part" and k == 1:
            os._exit(3)
        if name == "nested":
            return Fanout((("part", "x", 0),), "x")
        if name == "pids":
            time.sleep(0.5)
            return os.getpid()
        return k
    if isinstance(item, tuple) and item[0] == "split":
        _, name, n = item
        return Fanout(tuple(("part", name, k) for k in range(n)), name)
    if isinstance(item, tuple) and item[0] == "pids":
        return Fanout(tuple(("part", "pids", k) for k in range(item[1])), "pids")
    return item * 2


def big(item):
    """Items with big answers and big joins, to fill every socket: ``("big", n, s)`` -> n bytes
    after s seconds; ``("bigsplit", k, n, s)`` -> k parts of n bytes (s seconds each), joined into
    their lengths; ``("crash", s)``: the worker exits after s seconds; ``n`` -> 2n."""
    if isinstance(item, Join):
        return [len(r) for r in item.results]
    if isinstance(item, tuple) and item[0] == "bigpart":
        time.sleep(item[2])
        return b"p" * item[1]
    if isinstance(item, tuple) and item[0] == "big":
        time.sleep(item[2])
        return b"b" * item[1]
    if isinstance(item, tuple) and item[0] == "crash":
        time.sleep(item[1])
        os._exit(3)
    if isinstance(item, tuple) and item[0] == "bigsplit":
        _, k, n, s = item
        return Fanout(tuple(("bigpart", n, s) for _ in range(k)), item)
    return item * 2
