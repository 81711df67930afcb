"""cProfile of ingest's main process (its main thread's CPU time) on a real multi-worker ingest.

Why: issue 26 item 3 (small files): two workers reach 1.6x one worker only if the main process
spends at most about a quarter of the workers' CPU per file. This shows where the main process's
time goes per file (the writer, the embed stage's store lookups, the pool), on the 2,000 small
Markdown files of ``ingest_scaling.py`` (``md-hashing``).

Run: ``PYTHONPATH=src python benchmarks/ingest_main_profile.py [--docs 2000] [--workers 2] [--top 30]``
"""
from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import sys
import time
from pathlib import Path

from ingest import cw, git_head, write_corpus

REPO = Path(__file__).resolve().parent.parent


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=2000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--embedder", default="hashing")
    parser.add_argument("--top", type=int, default=30)
    parser.add_argument("--work", default=str(REPO.parent / "cache" / "ingest" / "scaling"))
    args = parser.parse_args(argv)
    cw()
    from chunkwise import api

    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    corpus = write_corpus(work / f"md{args.docs}", args.docs, 1000, 3000)
    db = work / f"profile-{args.workers}.db"
    if db.exists():
        db.unlink()
    emb = api.make_embedder(args.embedder) if args.embedder != "none" else None
    prof = cProfile.Profile(time.thread_time)
    cpu0 = time.thread_time()
    prof.enable()
    stats = api.ingest([corpus.root], db, api.ChunkConfig(strategy="auto", size=256), embedder=emb, acl=["bench"],
                       workers=args.workers, now="2026-01-01T00:00:00Z")
    prof.disable()
    cpu = time.thread_time() - cpu0
    out = io.StringIO()
    pstats.Stats(prof, stream=out).sort_stats("cumulative").print_stats(args.top)
    print(f"git {git_head()}; {args.docs} files, workers {args.workers}, embedder {args.embedder}; "
          f"chunks {stats.added}; main thread CPU {cpu:.2f} s = {1000 * cpu / args.docs:.2f} ms/file")
    print(out.getvalue())
    return 0


if __name__ == "__main__":
    sys.exit(main())
