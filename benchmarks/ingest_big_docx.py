"""Ingest's main process on a huge document (issue 25, item 9): peak memory of the main process and
of the worker, CPU time, and the store's contents, for source trees side by side in one run.

The DOCX is ``worker_memory.big_docx`` (``--docx-mb`` MB of varied words in ``document.xml``, 10 MB
of media) plus one ordinary file, hashing embedder, ``--workers`` 1 (or each of
``--workers 1,2``), ``--file-memory 4096`` (or ``default``: no flag, the default 2,048 MB), ``--file-timeout 3600``. Peak memory and
CPU come from ``worker_memory.WRAPPER`` (``RUSAGE_SELF``: main; ``RUSAGE_CHILDREN``: the largest
worker). ``contents`` is a sha256 over the sorted (chunk_id, record without ``ingested_at``, text,
embed_text, embed_key, acl, lexical fields) rows and the vectors: equal digests, equal stores.

    .venv/bin/python benchmarks/ingest_big_docx.py --tree before=/path/to/old/src --tree after=src
"""
from __future__ import annotations

import argparse
import hashlib
import json
import sqlite3
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import worker_memory as wm  # noqa: E402


def contents(db: Path) -> dict:
    con = sqlite3.connect(db)
    try:
        h = hashlib.sha256()
        n = 0
        for cid, rec, *rest in con.execute("SELECT chunk_id, record, text, embed_text, embed_key, acl, lex_body,"
                                           " lex_title, lex_heading FROM chunks ORDER BY chunk_id"):
            record = json.loads(rec)
            record.pop("ingested_at", None)
            h.update(repr((cid, sorted(record.items()), *rest)).encode())
            n += 1
        for row in con.execute("SELECT * FROM vectors ORDER BY embed_key"):
            h.update(repr(row).encode())
        return {"chunks": n, "sha256": h.hexdigest()}
    finally:
        con.close()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tree", action="append", required=True, help="label=path of a src/ tree")
    ap.add_argument("--docx-mb", type=int, default=60)
    ap.add_argument("--file-memory", default="4096", help="the worker's limit in MB, or 'default' (no flag)")
    ap.add_argument("--workers", default="1", help="comma-separated --workers values, each run per tree")
    ap.add_argument("--work", help="folder for the DOCX and the stores (default: a temporary one)")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="chunkwise-bigdocx-") as tmp:
        work = Path(args.work or tmp)
        folder = work / "bigdocx"
        if not (folder / "big.docx").exists():
            folder.mkdir(parents=True, exist_ok=True)
            wm.big_docx(folder / "big.docx", args.docx_mb, 10)
            (folder / "ok.md").write_text("# Fine\n\nAn ordinary file.\n", encoding="utf-8")
        rows = []
        runs = [(label, src, w) for label, src in (t.split("=", 1) for t in args.tree)
                for w in args.workers.split(",")]
        for label, src, workers in runs:
            db = work / f"big-{label}-w{workers}-m{args.file_memory}.db"
            for p in work.glob(db.name + "*"):
                p.unlink()
            argv = wm.ingest_args(folder, db)
            argv[argv.index("--workers") + 1] = workers
            if args.file_memory != "default":
                argv += ["--file-memory", args.file_memory]
            wall, figures, out = wm.cli(src, argv + ["--file-timeout", "3600"], 8.0)
            try:
                errors = [e["error"][:160] for e in json.loads(out)["errors"]]
            except (ValueError, KeyError, TypeError):
                errors = ["no JSON summary"]
            row = {"tree": label, "workers": workers, "file_memory": args.file_memory, "wall_s": wall, **figures,
                   "errors": errors}
            if db.exists():
                row["store"] = contents(db)
            rows.append(row)
            print(json.dumps(row), file=sys.stderr, flush=True)
    print(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
