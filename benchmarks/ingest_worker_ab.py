"""A worker's CPU per small file, a commit before and after, measured in pairs on a loaded machine.

Why: issue 26 item 3 (small files). ``ingest_writer.py`` times whole runs; on the shared two-core box
(load 8-11) its wall and CPU seconds move by 30% from run to run, more than a change to the worker
does. Here two persistent processes, one with the ``src`` of ``--base`` and one with that of
``--after`` (``git archive``; HEAD by default), each run exactly what an ingest worker runs for each
file (the ``PackingPreparer`` with the SQLite row codec that ``chunkwise ingest`` hands the pool,
then pickling the answer as the pipe does) on the same slices of the files, in turns (ABBA, BAAB,
...), so both see the same load. Reported: each side's CPU ms per file and the median over slices of
after / before. The work items are captured from a real ``api.ingest`` (2,000 files of
``ingest_scaling.py``'s corpus, hashing vectors, strategy auto, size 256, one access tag: the same as
``ingest_writer.py``) run with the after side's code; both sides unpickle the same items.

Run: ``python benchmarks/ingest_worker_ab.py --base c5e0e6d [--after HEAD] [--rounds 2] [--slice 250]``
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
from pathlib import Path

from ingest import write_corpus
from ingest_writer import REPO, export

CAPTURE = r"""
import os, pickle, sys
from chunkwise import api
from chunkwise.sandbox import PoolExecutor
root, db, out = sys.argv[1], sys.argv[2], sys.argv[3]
if os.path.exists(db):
    os.unlink(db)

class Capture(PoolExecutor):  # taken for the pool by ingest (records packed, rows encoded), runs inline
    def __init__(self):
        pass

    def map(self, fn, items):
        items = list(items)
        with open(out, "wb") as f:
            pickle.dump((fn, items), f)
        return (fn(i) for i in items)

api.ingest([root], db, api.ChunkConfig(strategy="auto", size=256), embedder=api.make_embedder("hashing"),
           acl=["bench"], workers=1, now="2026-01-01T00:00:00Z", executor=Capture())
"""

CHILD = r"""
import pickle, sys, time
fn, items = pickle.load(open(sys.argv[1], "rb"))
fn.warm_up()
for item in items[:50]:  # first calls (caches, lazy imports) count for neither side
    pickle.dumps(fn(item))
print("ready", flush=True)
for line in sys.stdin:
    i, j = map(int, line.split())
    c0 = time.process_time()
    for item in items[i:j]:
        pickle.dumps(fn(item))
    print(f"{time.process_time() - c0:.6f}", flush=True)
"""


def env(src: Path) -> dict:
    return dict(os.environ, PYTHONPATH=str(src), HF_HUB_OFFLINE="1", TIKTOKEN_CACHE_DIR="", PYTHONDONTWRITEBYTECODE="1")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", required=True, help="the commit to compare with (before)")
    parser.add_argument("--after", default="HEAD", help="the commit to measure (after; default HEAD)")
    parser.add_argument("--docs", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=2, help="passes over the files, each side")
    parser.add_argument("--slice", type=int, default=250, help="files per turn")
    parser.add_argument("--work", default=str(REPO.parent / "cache" / "ingest" / "writer"))
    args = parser.parse_args(argv)
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    corpus = write_corpus(work / f"md{args.docs}", args.docs, 1000, 3000)
    after = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", args.after], capture_output=True,
                           text=True, check=True).stdout.strip()
    sides = {"before": export(args.base, work / "src"), "after": export(after, work / "src")}
    items = work / f"items-{after}.pickle"
    subprocess.run([sys.executable, "-c", CAPTURE, str(corpus.root), str(work / "capture.db"), str(items)],
                   env=env(sides["after"]), check=True, capture_output=True)
    load = " ".join(f"{x:.1f}" for x in os.getloadavg())
    procs = {k: subprocess.Popen([sys.executable, "-c", CHILD, str(items)], stdin=subprocess.PIPE,
                                 stdout=subprocess.PIPE, text=True, env=env(src)) for k, src in sides.items()}
    for p in procs.values():
        if p.stdout.readline().strip() != "ready":
            raise SystemExit("a side failed to start")

    def turn(side: str, i: int) -> float:
        procs[side].stdin.write(f"{i} {i + args.slice}\n")
        procs[side].stdin.flush()
        return float(procs[side].stdout.readline())

    total = {"before": 0.0, "after": 0.0}
    ratios = []
    for r in range(args.rounds):
        for n, i in enumerate(range(0, args.docs, args.slice)):
            order = ("before", "after", "after", "before") if (n + r) % 2 == 0 else ("after", "before", "before", "after")
            got = {"before": 0.0, "after": 0.0}
            for side in order:
                got[side] += turn(side, i)
            for side in got:
                total[side] += got[side]
            ratios.append(got["after"] / got["before"])
    for p in procs.values():
        p.stdin.close()
        p.wait()
    files = args.docs * 2 * args.rounds  # each side ran every file twice per round
    q = statistics.quantiles(ratios, n=4)
    print(f"Command: `python benchmarks/ingest_worker_ab.py --base {args.base} --after {after} --docs {args.docs} "
          f"--rounds {args.rounds} --slice {args.slice}`; {args.docs:,} files ({corpus.mb:.1f} MB); "
          f"load before {load}, after {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    print(f"- before {args.base}: {1000 * total['before'] / files:.3f} CPU ms per file")
    print(f"- after {after}: {1000 * total['after'] / files:.3f} CPU ms per file")
    print(f"- after / before, median of {len(ratios)} paired slices: **{statistics.median(ratios):.3f}** "
          f"(quartiles {q[0]:.3f}-{q[2]:.3f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
