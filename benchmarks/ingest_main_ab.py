"""Ingest's main-process CPU per file, a commit before and after, in ABBA pairs at one worker count.

Why: issue 26 item 3 (small files): two workers reach 1.6x one only if the main process (the
single writer, the walk, the pool's receive path) costs ~0.5 ms a file. On a loaded box a whole
run's CPU seconds move by 10-30% from run to run, more than a change of a few percent in the
main process: ``ingest_writer.py``'s four runs a side cannot resolve it. This runs only the
worker count asked (default 2), alternating the two sources (ABBA, BAAB, ...), each run in a fresh
process as ``ingest_writer.py`` does (same corpus, same child), and reports the median of the
per-pair ratios of the main process's CPU seconds, and whether every store is the same.

Run: ``python benchmarks/ingest_main_ab.py --base 46dab8d [--after HEAD] [--pairs 6] [--workers 2] [--docs 2000]``
"""
from __future__ import annotations

import statistics
import sys

from ingest_writer import ab_parser, ab_setup, export, fingerprint, load, one


def main(argv=None) -> int:
    parser = ab_parser(__doc__)
    parser.add_argument("--pairs", type=int, default=6)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args(argv)
    work, corpus, after = ab_setup(args)
    sides = {"before": (args.base, export(args.base, work / "src")), "after": (after, export(after, work / "src"))}
    mains: dict[str, list[float]] = {"before": [], "after": []}
    ratios, prints = [], set()
    print(f"load before: {load()}", flush=True)
    for i in range(args.pairs):
        got = {}
        for side in (("before", "after") if i % 2 == 0 else ("after", "before")):
            db = work / f"ab-{side}.db"
            r = one(sides[side][1], corpus.root, db, args.workers, args.embedder)
            prints.add(fingerprint(db))
            got[side] = r["main"]
            mains[side].append(r["main"])
            print(f"pair {i} {side:6s} {sides[side][0]}: main {r['main']:.3f} s, workers {r['workers']:.3f} s, "
                  f"chunks {r['chunks']:,}, errors {r['errors']}, load {load()}", flush=True)
        ratios.append(got["after"] / got["before"])
    n = args.docs
    b, a = statistics.median(mains["before"]), statistics.median(mains["after"])
    q = statistics.quantiles(ratios, n=4) if len(ratios) > 1 else ratios * 3
    print(f"\nCommand: `python benchmarks/ingest_main_ab.py --base {args.base} --after {after} --pairs {args.pairs} "
          f"--workers {args.workers} --docs {n}`; workers {args.workers}, {n:,} files")
    print(f"- main CPU, median: before {sides['before'][0]} {b:.3f} s ({1000 * b / n:.3f} ms/file), "
          f"after {after} {a:.3f} s ({1000 * a / n:.3f} ms/file)")
    print(f"- after / before, median of {len(ratios)} pairs: **{statistics.median(ratios):.3f}** "
          f"(quartiles {q[0]:.3f}-{q[2]:.3f}; all {' '.join(f'{x:.3f}' for x in ratios)})")
    print(f"- every store identical: {'yes' if len(prints) == 1 else 'NO'} ({', '.join(sorted(prints))})")
    print(f"- load at the end: {load()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
