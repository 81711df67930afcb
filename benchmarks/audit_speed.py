"""``chunkwise audit`` before and after, side by side in one run (issue 27 item 6: "at least 5x faster
than main at 6dedb40 on the PDF, DOCX and HTML files of ../shared/data").

Each side is the command line (``python -m chunkwise.cli.main audit ROOT --include ... --json``) run
on its own source tree, alternating before/after ``--repeat`` times; the figures are wall seconds and
the CPU seconds of the process and its children (the contained workers), and the rows and statuses
each side reported (the same files must be audited).

    git archive 6dedb40 src | tar -x -C /tmp/before
    git -C /path/to/main archive main src | tar -x -C /tmp/main     # optional: today's main
    PYTHONPATH=src python benchmarks/audit_speed.py --before /tmp/before/src [--main /tmp/main/src] \
        [--data ../shared/data] [--repeat 2] --exclude '**/skipped_*page*.pdf'

``--main``: a third side, measured in the same rotation, whose JSON rows must be exactly the
after side's (a faster audit must report the same damage): the rows that differ are printed and
the exit status is 1.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GLOBS = ("**/*.pdf", "**/*.docx", "**/*.html", "**/*.htm")


def run(src: str, data: Path, exclude=()) -> dict:
    env = {**os.environ, "PYTHONPATH": src, "HF_HUB_OFFLINE": "1"}
    argv = [sys.executable, "-m", "chunkwise.cli.main", "audit", str(data), "--json"]
    for g in GLOBS:
        argv += ["--include", g]
    for g in exclude:
        argv += ["--exclude", g]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True, env=env)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    rows = []
    for line in done.stdout.splitlines():  # one JSON object a file
        try:
            rows.append(json.loads(line))
        except ValueError:
            pass
    status = Counter(r.get("status", "?") for r in rows if isinstance(r, dict))
    return {"wall": wall, "cpu": cpu, "exit": done.returncode, "rows": len(rows), "status": dict(status),
            "stderr_lines": len(done.stderr.splitlines()), "json": rows}


def differences(a: list, b: list) -> list[str]:
    """The sources whose rows differ between two runs (or are only in one), in order."""
    left = {r.get("source"): r for r in a if isinstance(r, dict)}
    right = {r.get("source"): r for r in b if isinstance(r, dict)}
    order = [r.get("source") for r in a] != [r.get("source") for r in b]
    return (["(row order)"] if order else []) + [s for s in dict.fromkeys([*left, *right]) if left.get(s) != right.get(s)]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before", required=True, help="the old source tree (its src/)")
    ap.add_argument("--after", default=str(ROOT / "src"))
    ap.add_argument("--main", help="today's main (its src/): measured too, and its rows must equal after's")
    ap.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--exclude", action="append", default=[], metavar="GLOB",
                    help="files left out on both sides (6dedb40's audit stops on Docling's skipped_*page.pdf: "
                         "a lone surrogate crashes langid)")
    args = ap.parse_args(argv)
    sides = ("before", "main", "after") if args.main else ("before", "after")
    results: dict[str, list[dict]] = {side: [] for side in sides}
    for i in range(args.repeat):
        for side in (sides if i % 2 == 0 else sides[::-1]):
            r = run(getattr(args, side), args.data, args.exclude)
            results[side].append(r)
            print(f"# {side}: { {k: v for k, v in r.items() if k != 'json'} }", file=sys.stderr, flush=True)
    print("| side | rows | statuses | exit | stderr lines | wall s (min) | CPU s (min) |")
    print("|---|--:|---|--:|--:|--:|--:|")
    best = {}
    for side, runs in results.items():
        best[side] = (min(r["wall"] for r in runs), min(r["cpu"] for r in runs))
        r = runs[0]
        print(f"| {side} | {r['rows']} | {r['status']} | {r['exit']} | {r['stderr_lines']} | "
              f"{best[side][0]:.1f} | {best[side][1]:.1f} |")
    print(f"\nspeed-up: wall {best['before'][0] / best['after'][0]:.2f}x, CPU {best['before'][1] / best['after'][1]:.2f}x "
          f"(target >= 5x)")
    if not args.main:
        return 0
    print(f"against main: wall {best['main'][0] / best['after'][0]:.2f}x, CPU {best['main'][1] / best['after'][1]:.2f}x")
    differ = sorted({s for m in results["main"] for a in results["after"] for s in differences(m["json"], a["json"])})
    print(f"rows equal to main's: {'yes' if not differ else 'NO, ' + ', '.join(differ)}")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
