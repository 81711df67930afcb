"""Workers 2 vs 1 on small files, modelled for an idle two-core machine from CPU seconds.

Why: issue 26 item 3 (small files): ``--workers 2`` >= 1.6x ``--workers 1`` (wall, two cores). On a
shared box the walls are not valid, but CPU seconds are. The wall of a run on an idle two-core box is
modelled from them: the main process's CPU before its first result (H: the lazy imports, the store
opened, the walk's first look-ahead) and after its last (T: version links, run row, counts) are
serial; in between, one worker is the bottleneck at ``--workers 1`` (main, at ~a quarter of its CPU,
writes on the other core), and at ``--workers 2`` main's loop and both workers share the two cores.
So wall(1) ~ H + K1 + T and wall(2) ~ H + T + (M2 - H - T + K2) / 2 (K: the workers' CPU seconds,
their start-up included; M: main's). The model leaves out waits (a worker idle while main is
behind, the first bundle, the last worker's tail): the walls it predicts are lower bounds, the ratio
an upper bound.

It runs ``ingest_writer.py``'s ingest (2,000 files, hashing vectors, strategy auto, size 256, one
tag; each run a fresh process) for ``--base`` and ``--after`` (``git archive`` of each, compiled as
an installed package is), workers 1 and 2, alternating (ABBA), and reports per side the medians of
H, T, M, K and the wall, the modelled ratio, and whether every store is the same.

Run: ``python benchmarks/ingest_ratio.py --base b364659 [--after HEAD] [--repeat 3] [--docs 2000]``
"""
from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys

import ingest_writer
from ingest_writer import ab_parser, ab_setup, export, fingerprint, load

CHILD = r"""
import json, resource, sys, time
from chunkwise import api
root, db, workers, embedder = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
emb = api.make_embedder(embedder) if embedder != "none" else None
marks = {}
i0 = time.process_time()
import chunkwise.pipeline.ingest  # imported by api.ingest itself otherwise: counted in main's head below
imports = time.process_time() - i0
ing = sys.modules["chunkwise.pipeline.ingest"]
inner = ing.prepare_and_embed
def timed(*a, **k):
    first = True
    for x in inner(*a, **k):
        if first:
            marks["first"], first = time.process_time() - c0 + imports, False
        yield x
    marks["last"] = time.process_time() - c0 + imports
ing.prepare_and_embed = timed
w0, c0 = time.perf_counter(), time.process_time()
stats = api.ingest([root], db, api.ChunkConfig(strategy="auto", size=256), embedder=emb, acl=["bench"],
                   workers=workers, now="2026-01-01T00:00:00Z")
wall, main = time.perf_counter() - w0, time.process_time() - c0 + imports
r = resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps({"wall": wall, "main": main, "workers": r.ru_utime + r.ru_stime, "head": marks["first"],
                  "tail": main - marks["last"], "chunks": stats.added, "errors": len(stats.errors)}))
"""


def one(src, root, db, workers: int, embedder: str) -> dict:
    """One ingest in a fresh process (the lazy imports of ``api.ingest`` are in its head)."""
    return ingest_writer.one(src, root, db, workers, embedder, child=CHILD)


def modelled(r1: dict, r2: dict) -> tuple[float, float, float]:
    """(wall 1, wall 2, ratio) on an idle two-core box, from the CPU seconds of a 1- and a 2-worker run."""
    serial1, serial2 = r1["head"] + r1["tail"], r2["head"] + r2["tail"]
    w1 = serial1 + max(r1["workers"], r1["main"] - serial1)
    w2 = serial2 + max(r2["main"] - serial2, (r2["main"] - serial2 + r2["workers"]) / 2)
    return w1, w2, w1 / w2


def main(argv=None) -> int:
    parser = ab_parser(__doc__)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    work, corpus, after = ab_setup(args)
    sides = {"before " + args.base: export(args.base, work / "src"), "after " + after: export(after, work / "src")}
    for src in sides.values():
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(src)], check=True)
    runs: dict[tuple[str, int], list[dict]] = {}
    prints = set()
    rows = []
    print(f"load before: {load()}", file=sys.stderr, flush=True)
    for i in range(args.repeat):
        order = list(sides.items()) if i % 2 == 0 else list(sides.items())[::-1]
        for workers in (1, 2):
            for label, src in order:
                db = work / f"ratio-{label.split()[0]}-{workers}.db"
                r = one(src, corpus.root, db, workers, args.embedder)
                prints.add(fingerprint(db))
                runs.setdefault((label, workers), []).append(r)
                rows.append(f"| {label} | {workers} | {r['wall']:.2f} | {r['main']:.2f} | {r['head']:.2f} | "
                            f"{r['tail']:.2f} | {r['workers']:.2f} | {r['errors']} | {load()} |")
                print(rows[-1], file=sys.stderr, flush=True)
    n = args.docs
    out = [f"Command: `python benchmarks/ingest_ratio.py --base {args.base} --after {after} --repeat {args.repeat} "
           f"--docs {n}`; {n:,} files ({corpus.mb:.1f} MB); nproc {len(os.sched_getaffinity(0))}", "",
           "| source | workers | wall s | main CPU s | of it head | of it tail | workers CPU s | errors | load after |",
           "|---|--:|--:|--:|--:|--:|--:|--:|---|", *rows, "",
           "| source | main ms/file (loop, 2 workers) | workers ms/file (1 / 2) | head + tail s | modelled wall 1 / 2 s "
           "| **modelled ratio** | measured wall ratio (loaded) |", "|---|--:|--:|--:|--:|--:|--:|"]
    for label in sides:
        med = {w: {k: statistics.median(r[k] for r in runs[(label, w)]) for k in runs[(label, w)][0]} for w in (1, 2)}
        w1, w2, ratio = modelled(med[1], med[2])
        loop = med[2]["main"] - med[2]["head"] - med[2]["tail"]
        out.append(f"| {label} | {1000 * loop / n:.3f} | {1000 * med[1]['workers'] / n:.2f} / "
                   f"{1000 * med[2]['workers'] / n:.2f} | {med[2]['head'] + med[2]['tail']:.2f} | {w1:.2f} / {w2:.2f} | "
                   f"**{ratio:.2f}x** | {med[1]['wall'] / med[2]['wall']:.2f}x |")
    out.append(f"\n- every store identical: {'yes' if len(prints) == 1 else 'NO'} ({', '.join(sorted(prints))})")
    out.append(f"- load at the end: {load()}; medians of {args.repeat}")
    print("\n".join(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
