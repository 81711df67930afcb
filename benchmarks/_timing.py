"""The one timing primitive the benchmark scripts share."""
from __future__ import annotations

import gc
import time
from collections.abc import Callable
from typing import Any


def timed(run: Callable[[], Any]) -> tuple[float, float, Any]:
    """(wall s, CPU s of this process, result) of one call; GC collected before and off during it,
    so a collection triggered by an earlier contender is not billed to this one."""
    gc.collect()
    gc.disable()
    try:
        wall0, cpu0 = time.perf_counter(), time.process_time()
        out = run()
        wall1, cpu1 = time.perf_counter(), time.process_time()
    finally:
        gc.enable()
    return wall1 - wall0, cpu1 - cpu0, out
