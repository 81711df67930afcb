"""The one timing primitive the benchmark scripts share."""
from __future__ import annotations

import gc
import resource
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


def timed_threads(run: Callable[[], Any]) -> tuple[float, float, float, Any]:
    """As ``timed``, plus the CPU s of the calling thread alone: (wall, process CPU, this thread's
    CPU, result). The process figure counts every thread: a tokenizer's batch call on a thread pool
    (tokie's ``count_tokens_batch``) adds its helpers' work and spin, about as much again as the
    calling thread on a loaded machine, so the two tell a pool's share apart."""
    gc.collect()
    gc.disable()
    try:
        wall0, cpu0, own0 = time.perf_counter(), time.process_time(), time.thread_time()
        out = run()
        wall1, cpu1, own1 = time.perf_counter(), time.process_time(), time.thread_time()
    finally:
        gc.enable()
    return wall1 - wall0, cpu1 - cpu0, own1 - own0, out


def children_cpu() -> float:
    """CPU s (user + system) of the child processes that have ended and been waited for so far."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed_with_children(run: Callable[[], Any]) -> tuple[float, float, Any]:
    """As ``timed``, but the CPU s also count the child processes that ended during the call (the
    ingest's worker processes, a ``sha256sum`` subprocess): on a loaded machine the CPU seconds are
    the comparable figure, and a worker pool's work is not in this process's own clock."""
    before = children_cpu()
    wall, cpu, out = timed(run)
    return wall, cpu + children_cpu() - before, out
