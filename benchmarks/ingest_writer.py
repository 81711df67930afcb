"""The single writer on small files: a commit before and after, workers 1 and 2, side by side.

Why: issue 26 item 3 (small files): two workers >= 1.6x one worker on 2,000 small Markdown files.
On two cores the bound is 2 W / (M + W) (W: the workers' CPU seconds, M: the main process's): the
main process must cost little per file. This runs the same ingest (2,000 files of
``ingest_scaling.py``'s corpus, hashing vectors, strategy auto, size 256, one access tag) with the
source of ``--base`` and of ``--after`` (commits, exported by ``git archive``: HEAD by default), workers 1
and 2, interleaved (base 1, new 1, base 2, new 2, repeated), each in a fresh process, and reports
per run: wall, the main process's CPU seconds, the workers' CPU seconds (``RUSAGE_CHILDREN``), per
file; then the two-core bound from CPU seconds and the wall ratio, and whether every store is the
same (sorted chunk ids with a hash of each chunks row, vectors, documents).

Run: ``python benchmarks/ingest_writer.py --base c072fa9 [--docs 2000] [--repeat 1] [--embedder hashing]``
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import sqlite3
import statistics
import subprocess
import sys
import tarfile
import io
from pathlib import Path

from ingest import write_corpus

REPO = Path(__file__).resolve().parent.parent

CHILD = r"""
import json, os, resource, sys, time
from chunkwise import api
root, db, workers, embedder = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
emb = api.make_embedder(embedder) if embedder != "none" else None
w0, c0 = time.perf_counter(), time.process_time()
stats = api.ingest([root], db, api.ChunkConfig(strategy="auto", size=256), embedder=emb, acl=["bench"],
                   workers=workers, now="2026-01-01T00:00:00Z")
wall, main = time.perf_counter() - w0, time.process_time() - c0
r = resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps({"wall": wall, "main": main, "workers": r.ru_utime + r.ru_stime, "chunks": stats.added,
                  "errors": len(stats.errors)}))
"""


def load() -> str:
    return " ".join(f"{x:.1f}" for x in os.getloadavg())


def export(commit: str, dest: Path) -> Path:
    """The ``src`` of ``commit``, under ``dest`` (once)."""
    src = dest / commit / "src"
    if not src.exists():
        data = subprocess.run(["git", "-C", str(REPO), "archive", "--format=tar", commit, "src"],
                              capture_output=True, check=True).stdout
        with tarfile.open(fileobj=io.BytesIO(data)) as tar:
            tar.extractall(dest / commit)
    return src


def fingerprint(db: Path) -> str:
    con = sqlite3.connect(db)
    try:
        h = hashlib.sha256()
        for sql in ("SELECT chunk_id, doc_id, chunk_index, record, text, embed_text, embed_model, embed_key, acl,"
                    " quality, size, acl_index, lex_body, lex_title, lex_heading FROM chunks ORDER BY chunk_id",
                    "SELECT * FROM vectors ORDER BY embed_key",
                    "SELECT doc_id, root, path, source_version, inputs, chunk_count, versioning FROM documents"
                    " ORDER BY doc_id",
                    "SELECT * FROM version_links ORDER BY 1, 2"):
            for row in con.execute(sql):
                h.update(repr(row).encode())
        return h.hexdigest()[:16]
    finally:
        con.close()


def one(src: Path, root: Path, db: Path, workers: int, embedder: str, child: str | None = None) -> dict:
    """One ingest in a fresh process running ``child`` (default: this script's ``CHILD``); its JSON line."""
    if db.exists():
        db.unlink()
    env = dict(os.environ, PYTHONPATH=str(src), HF_HUB_OFFLINE="1", TIKTOKEN_CACHE_DIR="",
               PYTHONDONTWRITEBYTECODE="1")
    out = subprocess.run([sys.executable, "-c", child or CHILD, str(root), str(db), str(workers), embedder],
                         capture_output=True, text=True, env=env)
    if out.returncode:
        raise SystemExit(out.stderr[-2000:])
    return json.loads(out.stdout.strip().splitlines()[-1])


def ab_parser(doc: str) -> argparse.ArgumentParser:
    """The arguments of a before/after ingest benchmark (this one, ``ingest_main_ab.py``)."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--base", required=True, help="the commit to compare with (before)")
    parser.add_argument("--after", default="HEAD", help="the commit to measure (after; default HEAD)")
    parser.add_argument("--docs", type=int, default=2000)
    parser.add_argument("--embedder", default="hashing")
    parser.add_argument("--work", default=str(REPO.parent / "cache" / "ingest" / "writer"))
    return parser


def ab_setup(args) -> tuple:
    """(work folder, the corpus of ``args.docs`` files, ``args.after``'s short commit id)."""
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    corpus = write_corpus(work / f"md{args.docs}", args.docs, 1000, 3000)
    after = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", args.after], capture_output=True,
                           text=True, check=True).stdout.strip()
    return work, corpus, after


def main(argv=None) -> int:
    parser = ab_parser(__doc__)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--bytecode", action="store_true",
                        help="compile both exported trees first, as an installed package is (without it every "
                             "run compiles every module: ~0.1-0.2 CPU s more in main and in each worker)")
    args = parser.parse_args(argv)
    work, corpus, after = ab_setup(args)
    sources = {"before " + args.base: export(args.base, work / "src"), "after " + after: export(after, work / "src")}
    if args.bytecode:
        for src in sources.values():
            subprocess.run([sys.executable, "-m", "compileall", "-q", str(src)], check=True)
    rows, runs, prints = [], {}, {}
    for _ in range(args.repeat):
        for workers in (1, 2):
            for label, src in sources.items():
                before = load()
                db = work / f"{label.split()[0]}-{workers}.db"
                r = one(src, corpus.root, db, workers, args.embedder)
                prints[(label, workers)] = fingerprint(db)
                runs.setdefault((label, workers), []).append(r)
                n = args.docs
                rows.append(f"| {label} | {workers} | {r['chunks']:,} | {r['wall']:.2f} | {r['main']:.2f} | "
                            f"{r['workers']:.2f} | {1000 * r['main'] / n:.2f} | {1000 * r['workers'] / n:.2f} | "
                            f"{r['errors']} | {before} |")
                print(rows[-1], file=sys.stderr, flush=True)
    out = [f"Command: `python benchmarks/ingest_writer.py --base {args.base} --after {after} --docs {args.docs} --repeat "
           f"{args.repeat} --embedder {args.embedder}`; {args.docs:,} files ({corpus.mb:.1f} MB); nproc "
           f"{len(os.sched_getaffinity(0))}", "",
           "| source | workers | chunks | wall s | CPU s main | CPU s workers | main ms/file | workers ms/file | errors | load before |",
           "|---|--:|--:|--:|--:|--:|--:|--:|--:|---|", *rows, ""]

    def med(label, workers, key):
        return statistics.median(r[key] for r in runs[(label, workers)])

    for label in sources:
        m1, k1, w1 = med(label, 1, "main"), med(label, 1, "workers"), med(label, 1, "wall")
        m2, k2, w2 = med(label, 2, "main"), med(label, 2, "workers"), med(label, 2, "wall")
        bound = max(m1, k1) / max(m2, (m2 + k2) / 2)
        out.append(f"- {label}: two-core bound from CPU s (max(main, workers) at 1 / max(main, all / 2) at 2) "
                   f"**{bound:.2f}x**; main / workers CPU at 2 workers {m2 / k2:.2f}; wall ratio {w1 / w2:.2f}x "
                   f"(medians of {args.repeat})")
    same = len(set(prints.values())) == 1
    out.append(f"- every store identical (chunks rows, vectors, documents, version links): {'yes' if same else 'NO'} "
               f"({', '.join(sorted(set(prints.values())))})")
    out.append(f"- load average at the end: {load()}")
    print("\n".join(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
