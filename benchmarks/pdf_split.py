"""A big PDF read in one pass vs shared among workers as page ranges (issue 26 item 3), in one run.

Why: in ``../shared/data`` one PDF (DA-619p.pdf, 619 pages) is 56.5 of the 89.2 CPU seconds of the
159 PDF, DOCX and HTML files, so whole files on two workers cannot beat 89.2 / 56.5 = 1.58x one
worker. Ingest now splits such a PDF (``pipeline/split.py``): the worker that meets it counts its
pages (``plan``), the page ranges are scanned by whichever worker is free (``part``), and one worker
joins the scans into the Document (``join``) and prepares its records. This measures each step's
CPU seconds in this process (what a worker spends), checks the joined Document equals the one-pass
Document, and gives the critical path on two idle cores: plan, then the parts shared by two
workers (list schedule), then the join; with the rest of the corpus's CPU (``--rest``, seconds) the
two-core bound for the whole corpus is max(critical path, all CPU / 2).

Run: ``PYTHONPATH=src python benchmarks/pdf_split.py [--pdf PATH] [--workers 2] [--rest 32.7]``
"""
from __future__ import annotations

import argparse
import hashlib
import os
import sys
import time
from pathlib import Path

from ingest import cw, git_head
from ingest_scaling import DATA, load, makespan


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pdf", default=str(DATA / "unstructured" / "example-docs" / "pdf" / "DA-619p.pdf"))
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--clock", action="store_true",
                        help="keep the table finder's clock guards (60 s a page, 300 s a document): on a loaded "
                             "machine they fire, at different pages in the two runs, so the runs do different work")
    parser.add_argument("--rest", type=float, default=32.7,
                        help="CPU s of the rest of the corpus (89.2 - 56.5 at 33c76aa for ../shared/data)")
    args = parser.parse_args(argv)
    cw()
    from chunkwise.config import ChunkConfig
    from chunkwise.pipeline.prepare import Preparer, PrepareSettings, PrepareTask
    from chunkwise.sandbox import Fanout, Join

    if not args.clock:  # in this process only (no workers here): the work measured is the same in both runs
        from chunkwise.extract import pdf_tables

        pdf_tables.PAGE_SECONDS = pdf_tables.TOTAL_SECONDS = 1e6
    path = Path(args.pdf)
    data = path.read_bytes()
    task = PrepareTask(str(path), path.name, path.name, "application/pdf", hashlib.sha256(data).hexdigest(), len(data))
    settings = PrepareSettings(ChunkConfig(strategy="auto", size=256), "none", now="2026-01-01T00:00:00Z")
    whole, shared = Preparer(settings), Preparer(settings, split=args.workers)
    whole.warm_up()
    shared.warm_up()
    before = load()

    def timed(prep, item):
        start = time.process_time()
        value = prep(item)
        return value, time.process_time() - start

    one, one_cpu = timed(whole, task)
    fan, plan_cpu = timed(shared, task)
    assert isinstance(fan, Fanout), "not split: too small or too few pages"
    scans, parts = [], []
    for part in fan.parts:
        scan, cpu = timed(shared, part)
        scans.append(scan)
        parts.append(cpu)
    joined, join_cpu = timed(shared, Join(fan.join, tuple(scans)))
    same = one == joined
    steps = [("plan", plan_cpu), *(("part", c) for c in parts), ("join", join_cpu)]
    total = sum(c for _, c in steps)
    path_two = makespan([steps], args.workers)
    corpus_one = args.rest + one_cpu
    corpus_two = max(path_two, (args.rest + total) / args.workers)
    out = [f"## A big PDF shared among {args.workers} workers (issue 26 item 3)", "",
           f"Command: `PYTHONPATH=src python benchmarks/pdf_split.py --pdf {path.name} --workers {args.workers} "
           f"--rest {args.rest}{' --clock' if args.clock else ''}`; git {git_head()}; nproc {len(os.sched_getaffinity(0))}; load before {before}", "",
           f"{path.name}: {len(data) / 1e6:.1f} MB, {len(one.records) if hasattr(one, 'records') else '?'} chunks; "
           f"CPU seconds in one process (what a worker spends)", "",
           "| step | CPU s |", "|---|--:|",
           f"| one pass (whole file, prepared) | {one_cpu:.2f} |",
           f"| plan (count pages) | {plan_cpu:.2f} |",
           *(f"| part {i + 1} (pages {p.first + 1}-{p.last}) | {c:.2f} |" for i, (p, c) in enumerate(zip(fan.parts, parts))),
           f"| join (assemble + chunk + records) | {join_cpu:.2f} |",
           f"| split total | {total:.2f} ({total / one_cpu:.2f}x one pass) |", "",
           f"- prepared document identical to the one-pass one (records, warnings): {'yes' if same else 'NO'}",
           f"- this file alone on {args.workers} idle cores: {path_two:.2f} s critical path (was {one_cpu:.2f} s): "
           f"**{one_cpu / path_two:.2f}x**",
           f"- the corpus (rest {args.rest:.1f} CPU s) on {args.workers} idle cores: workers 1 {corpus_one:.1f} s, "
           f"workers {args.workers} >= max(critical path, all CPU / {args.workers}) = {corpus_two:.1f} s: bound "
           f"**{corpus_one / corpus_two:.2f}x** (whole files: {corpus_one / max(one_cpu, corpus_one / args.workers):.2f}x)",
           f"- load average at the end: {load()}"]
    print("\n".join(out))
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
