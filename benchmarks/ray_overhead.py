"""Ray's fixed costs for a stage of no work: plain actors against a Ray Data actor-pool map, in one
process on one local cluster.

Why: the Ray executor of c89c47b ran on Ray Data and paid a fixed start per run (first document at
5.4 s against 1.4 s for the local pool, BENCHMARKS.md "Ingest on Ray"); this measures what Ray Data
itself adds to a run whose work is nothing, against the plain actors the executor uses now
(``pipeline/rayactors.py``, ``pipeline/raystream.py``).

Method: ``ray.init(num_cpus=2)``; then (1) two plain actors of 1 CPU started and answering one call
each (``ready``), then 1,000 calls of an identity method spread over both (``calls``); (2) twice, a
Ray Data ``from_items`` of 1,000 rows in 63 blocks through ``map_batches`` on an actor pool of 2
(identity), read with ``iter_batches`` in order: the time to the first batch and to the end. The
first Ray Data run also pays its one-time start (stats actor, ``import ray.data`` in the workers);
the second is what every later run pays. Ray Data is not a chunkwise dependency any more: this
script needs ``pip install 'ray[data]'``.

Run: ``.venv/bin/python benchmarks/ray_overhead.py``
"""
from __future__ import annotations

import os
import time


class Identity:
    def ready(self) -> bool:
        return True

    def f(self, x):
        return x

    def __call__(self, batch):
        return batch


def main() -> None:
    import ray
    import ray.data

    load0 = os.getloadavg()
    ray.init(address="local", num_cpus=2, include_dashboard=False, logging_level="ERROR")
    rows = []
    try:
        actor = ray.remote(Identity).options(num_cpus=1)
        t = time.perf_counter()
        pool = [actor.remote() for _ in range(2)]
        ray.get([a.ready.remote() for a in pool])
        ready = time.perf_counter() - t
        t = time.perf_counter()
        ray.get([pool[i % 2].f.remote(i) for i in range(1000)])
        calls = time.perf_counter() - t
        rows.append(f"| plain actors (2) | {ready:.2f} (ready) | {ready + calls:.2f} | 1,000 calls: {calls:.2f} s |")
        for a in pool:
            ray.kill(a)
        ctx = ray.data.DataContext.get_current()
        ctx.execution_options.preserve_order = True
        ctx.enable_progress_bars = False
        for k in range(2):
            t = time.perf_counter()
            ds = ray.data.from_items([{"seq": i} for i in range(1000)], override_num_blocks=63).map_batches(
                Identity, batch_size=None, batch_format="numpy", compute=ray.data.ActorPoolStrategy(size=2), num_cpus=1)
            first = None
            for _ in ds.iter_batches(batch_size=None, batch_format="numpy"):
                if first is None:
                    first = time.perf_counter() - t
            total = time.perf_counter() - t
            label = "first Ray Data run on the cluster" if k == 0 else "next Ray Data run"
            rows.append(f"| Ray Data map_batches, actor pool of 2 ({label}) | {first:.2f} (first batch) | {total:.2f} | "
                        f"1,000 rows, 63 blocks |")
    finally:
        ray.shutdown()
    load1 = os.getloadavg()
    print(f"`benchmarks/ray_overhead.py`; load average {load0[0]:.2f} at the start, {load1[0]:.2f} at the end.\n")
    print("| stage of no work | s to start | s in all | |")
    print("|---|--:|--:|---|")
    print("\n".join(rows))


if __name__ == "__main__":
    main()
