"""The DOCX bomb through ``chunkwise ingest``: wall and CPU seconds with ``--workers 1`` and
``--workers 2``, interleaved, medians of ``--repeat`` runs.

Why: the open target is "DOCX bomb through `chunkwise ingest` < 10 s" (issue 26's hostile inputs;
BENCHMARKS "Hostile inputs"): the refusal itself takes 0.14 s in the extractor, so what a run costs
is the CLI's start, the pool's start and the refusal's way back. On a loaded machine the wall time
is inflated: the CPU seconds (the CLI's and every worker's, from ``RUSAGE_CHILDREN`` of a fresh
wrapper process per run) say what the run needs.

Method: ``ingest_workers.docx_bomb`` (a 1 MB DOCX whose ``word/document.xml`` inflates to 256 MB)
next to one small Markdown file, generated once into a temporary folder; each run is the real CLI
in a subprocess (``chunkwise ingest FOLDER --db NEW.db --acl bench --json --workers N``) inside a
fresh wrapper process, so the peak RSS and CPU are that run's alone. The outcome (exit 1, the
bomb's refusal as the run's one error, the good file ingested) is checked on every run.

Run: ``PYTHONPATH=src .venv/bin/python benchmarks/ingest_bomb.py [--repeat 3]``
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from statistics import median

from ingest import git_head
from ingest_workers import docx_bomb

WRAPPER = r"""
import json, os, resource, subprocess, sys, time
folder, db, workers = sys.argv[1], sys.argv[2], sys.argv[3]
cmd = [sys.executable, "-m", "chunkwise.cli.main", "ingest", folder, "--db", db, "--acl", "bench", "--json",
       "--workers", workers]
start = time.perf_counter()
proc = subprocess.run(cmd, capture_output=True)
wall = time.perf_counter() - start
use = resource.getrusage(resource.RUSAGE_CHILDREN)
try:
    out = json.loads(proc.stdout)
except ValueError:
    out = {"errors": [{"path": "?", "error": proc.stderr.decode(errors="replace")[-300:]}]}
print(json.dumps([proc.returncode, wall, use.ru_utime + use.ru_stime, use.ru_maxrss / 1024, out]))
"""


def one(folder: Path, db: Path, workers: int) -> tuple[int, float, float, float, dict]:
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    done = subprocess.run([sys.executable, "-c", WRAPPER, str(folder), str(db), str(workers)], capture_output=True,
                          text=True, check=True, env=env)
    return tuple(json.loads(done.stdout))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    load0 = os.getloadavg()
    rows, runs = [], {1: [], 2: []}
    with tempfile.TemporaryDirectory(prefix="chunkwise-bench-bomb-") as tmp:
        folder = Path(tmp) / "case"
        folder.mkdir()
        (folder / "good.md").write_text("# Good\n\nThe ledger freeze is lifted by the owner.\n", encoding="utf-8")
        docx_bomb(folder / "bomb.docx")
        for k in range(args.repeat):
            for workers in (1, 2):
                print(f"... run {k + 1}, --workers {workers}", file=sys.stderr, flush=True)
                code, wall, cpu, peak, out = one(folder, Path(tmp) / f"r{k}-w{workers}.db", workers)
                errors = out.get("errors", [])
                ok = (code == 1 and len(errors) == 1 and "refused before decompressing" in errors[0]["error"]
                      and out.get("added", 0) >= 1)
                runs[workers].append((wall, cpu))
                rows.append(f"| {k + 1} | {workers} | {code} | {'refused, good file ingested' if ok else 'UNEXPECTED: ' + json.dumps(errors)[:120]} "
                            f"| {wall:.2f} | {cpu:.2f} | {peak:,.0f} |")
    load1 = os.getloadavg()
    print(f"Commit {git_head()}; `benchmarks/ingest_bomb.py --repeat {args.repeat}`; load average {load0[0]:.2f} at "
          f"the start, {load1[0]:.2f} at the end (2 cores shared).\n")
    print("| run | workers | exit | outcome | wall s | CPU s (CLI + workers) | peak RSS MB (largest process) |")
    print("|--:|--:|--:|---|--:|--:|--:|")
    print("\n".join(rows))
    for workers, got in runs.items():
        print(f"| median | {workers} | | | **{median(w for w, _ in got):.2f}** | {median(c for _, c in got):.2f} | |")


if __name__ == "__main__":
    main()
