"""How many chunks are left in review for a size reason (issue 24 item 8): a chunk the chunker had
to cut below its floor (``split_below_floor``, ``table_row_split``: a code line or a table row cut
inside), inside a word (``word_split``), at characters (``char_split``), or a table whose header was
too wide to repeat (``table_header_not_repeated``). Such a chunk is never served until someone
releases it (``chunkwise review``), so the target is fewer than 1 in 1,000.

Chunks every readable file under the given folders (default: the shared reference data and the
sample corpus the labelled sets are written against) with the default config, or the configs given,
through the same preparation ``chunkwise chunk`` and ``ingest`` use, and prints per folder and in
total: files, chunks, chunks in review for a size reason (by reason), the rate per 1,000.

    PYTHONPATH=src python benchmarks/review_rate.py [--folders DIR ...] [--size N ...] [--json FILE]
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SIZE_REASONS = ("split_below_floor", "word_split", "char_split", "table_row_split", "table_header_not_repeated")
DEFAULT_FOLDERS = [ROOT.parent / "shared" / "data", ROOT / "examples"]


def measure(folder: Path, size: int | None, strategy: str | None) -> dict:
    from chunkwise import api
    from chunkwise.config import ChunkConfig

    options = {k: v for k, v in (("size", size), ("strategy", strategy)) if v is not None}
    config = ChunkConfig(**options)
    chunker = api.make_chunker(config)
    files = chunks = 0
    reasons: Counter = Counter()
    where: list[dict] = []
    crashed: list[str] = []
    for item in api.iter_documents([folder], options=api.extract_options(config)):
        if isinstance(item, api.SourceFailure):
            continue
        try:
            out = api.chunk_document(item, api.for_document(chunker, item))
        except api.ChunkwiseError:
            continue
        except Exception as exc:  # a bug, not a verdict on the file: counted and named
            crashed.append(f"{item.source}: {type(exc).__name__}: {exc}"[:300])
            continue
        files += 1
        chunks += len(out)
        for c in out:
            size_reasons = [r for r in c.reasons if r in SIZE_REASONS]
            if c.needs_review and size_reasons:
                reasons[size_reasons[0]] += 1
                where.append({"source": item.source, "start": c.start_char, "end": c.end_char,
                              "reason": size_reasons[0], "kind": c.kind})
    flagged = sum(reasons.values())
    return {"folder": str(folder), "size": config.size, "strategy": config.strategy, "files": files,
            "chunks": chunks, "review": flagged, "reasons": dict(reasons),
            "per_1000": round(1000 * flagged / chunks, 3) if chunks else 0.0, "where": where,
            "crashed": crashed}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--folders", nargs="+", type=Path, default=DEFAULT_FOLDERS)
    ap.add_argument("--size", nargs="+", type=int, default=[None], help="chunk sizes (default: the default size)")
    ap.add_argument("--strategy", default="auto", help="chunking strategy (default auto, the CLI's default)")
    ap.add_argument("--show", action="store_true", help="list every flagged chunk")
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args(argv)
    missing = [str(f) for f in args.folders if not f.is_dir()]
    if missing:
        ap.error(f"no such folder: {', '.join(missing)} (pass --folders)")
    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short=12", "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    rows = []
    t0 = time.perf_counter()
    for size in args.size:
        for folder in args.folders:
            rows.append(measure(folder, size, args.strategy))
    print(f"commit {commit}, {time.perf_counter() - t0:.0f} s\n")
    print("| folder | strategy | size | files | chunks | in review (size) | per 1,000 | reasons |")
    print("|---|---|---:|---:|---:|---:|---:|---|")
    for size in args.size:
        these = [r for r in rows if size is None or r["size"] == size]
        for r in these:
            print(f"| {Path(r['folder']).name} | {r['strategy']} | {r['size']} | {r['files']} | {r['chunks']} | "
                  f"{r['review']} | {r['per_1000']:.2f} | {', '.join(f'{k} {v}' for k, v in r['reasons'].items()) or '-'} |")
        chunks, flagged = sum(r["chunks"] for r in these), sum(r["review"] for r in these)
        print(f"| **all** | {these[0]['strategy']} | {these[0]['size']} | {sum(r['files'] for r in these)} | {chunks} | "
              f"{flagged} | {1000 * flagged / max(chunks, 1):.2f} | |")
    for r in rows:
        for c in r["crashed"]:
            print(f"crashed: {c}", file=sys.stderr)
    if args.show:
        for r in rows:
            for w in r["where"]:
                print(f"{w['reason']:18} {w['kind']:6} {w['source']} {w['start']}-{w['end']}")
    if args.json:
        args.json.write_text(json.dumps({"commit": commit, "rows": rows}, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
