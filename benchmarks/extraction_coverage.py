"""Format coverage on Unstructured's example documents (``../shared/data/unstructured``, see its README):
per suffix, how many files chunkwise reads, how many fail or are skipped (each with its one-line
reason), the characters, headings and tables extracted, and the seconds spent. Then the "one text in
14 formats" check: word recall of each ``language-docs/eng_spa_mult.*`` against ``eng_spa_mult.txt``.

Files go through the same path as ``chunkwise ingest`` (``sources.iter_sources`` then
``pipeline.documents.read_source``): a type chunkwise does not read is "skipped" with its reason, a
file it cannot read is "failed" with its reason. Nothing is written anywhere.

    PYTHONPATH=src python benchmarks/extraction_coverage.py [--data ../shared/data/unstructured] [--skip .pdf]
                                                            [--files] [--json]
"""
from __future__ import annotations

import argparse
import json
import re
import sys
import time
import unicodedata
from collections import Counter, defaultdict
from pathlib import Path

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "unstructured"
_WORD = re.compile(r"[^\W_]+", re.UNICODE)


def words(text: str) -> list[str]:
    return _WORD.findall(unicodedata.normalize("NFKC", text).casefold())


def recall(reference: str, text: str) -> float:
    want, have = Counter(words(reference)), Counter(words(text))
    total = sum(want.values())
    return sum(min(n, have[w]) for w, n in want.items()) / total if total else 1.0


def run(data: Path, skip: tuple[str, ...] = ()) -> list[dict]:
    """One row per file: suffix, status (ok | failed | skipped), reason, chars, headings, tables, seconds."""
    from chunkwise.pipeline.documents import SourceFailure, read_source
    from chunkwise.sources import SourceError, iter_sources

    rows = []
    for src in iter_sources([data], root=data):
        suffix = Path(src.doc_id).suffix.lower() or "(none)"
        if suffix in skip:
            continue
        if isinstance(src, SourceError):
            rows.append({"file": src.doc_id, "suffix": suffix, "status": "skipped" if src.skipped else "failed",
                         "reason": src.error, "chars": 0, "headings": 0, "tables": 0, "seconds": 0.0, "text": ""})
            continue
        t0 = time.perf_counter()
        doc = read_source(src)
        dt = time.perf_counter() - t0
        if isinstance(doc, SourceFailure):
            rows.append({"file": src.doc_id, "suffix": suffix, "status": "skipped" if doc.skipped else "failed",
                         "reason": doc.error, "chars": 0, "headings": 0, "tables": 0, "seconds": dt, "text": ""})
            continue
        body = doc.text[doc.body_start:]
        rows.append({"file": src.doc_id, "suffix": suffix, "status": "ok", "reason": "; ".join(doc.warnings)[:200],
                     "chars": len(body), "headings": sum(b.kind == "heading" for b in doc.blocks),
                     "tables": sum(b.kind == "table" for b in doc.blocks), "seconds": dt, "text": body})
    return rows


def per_format(rows: list[dict]) -> list[dict]:
    agg: dict[str, dict] = defaultdict(lambda: {"files": 0, "ok": 0, "failed": 0, "skipped": 0, "chars": 0,
                                               "headings": 0, "tables": 0, "seconds": 0.0})
    for r in rows:
        a = agg[r["suffix"]]
        a["files"] += 1
        a[r["status"]] += 1
        for k in ("chars", "headings", "tables", "seconds"):
            a[k] += r[k]
    return [{"format": k, **v} for k, v in sorted(agg.items(), key=lambda kv: (-kv[1]["files"], kv[0]))]


def language_table(rows: list[dict]) -> list[dict]:
    ref = next((r for r in rows if r["file"].endswith("language-docs/eng_spa_mult.txt")), None)
    if ref is None:
        return []
    out = []
    for r in rows:
        if "language-docs/eng_spa_mult." in r["file"] and r is not ref:
            out.append({"file": r["file"].rsplit("/", 1)[-1], "status": r["status"],
                        "word_recall": round(recall(ref["text"], r["text"]), 3) if r["status"] == "ok" else None})
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--files", action="store_true", help="also print every file that failed or was skipped")
    ap.add_argument("--skip", default="", help="suffixes left out, e.g. .pdf (PDF layout has its own benchmark)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    if not args.data.is_dir():
        print(f"{args.data}: not found; pass --data", file=sys.stderr)
        return 2
    rows = run(args.data, tuple(s.strip().lower() for s in args.skip.split(",") if s.strip()))
    table, langs = per_format(rows), language_table(rows)
    if args.json:
        print(json.dumps({"formats": table, "language": langs,
                          "files": [{k: v for k, v in r.items() if k != "text"} for r in rows]}, indent=1))
        return 0
    print("| format | files | read ok | failed | skipped | chars | headings | tables | seconds |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    tot = Counter()
    for t in table:
        print(f"| {t['format']} | {t['files']} | {t['ok']} | {t['failed']} | {t['skipped']} | {t['chars']:,} | "
              f"{t['headings']:,} | {t['tables']:,} | {t['seconds']:.2f} |")
        tot.update({k: t[k] for k in ("files", "ok", "failed", "skipped", "chars", "headings", "tables", "seconds")})
    print(f"| **all** | {tot['files']} | {tot['ok']} | {tot['failed']} | {tot['skipped']} | {tot['chars']:,} | "
          f"{tot['headings']:,} | {tot['tables']:,} | {tot['seconds']:.2f} |")
    if langs:
        print("\n| eng_spa_mult.* | status | word recall vs .txt |\n|---|---|---:|")
        for r in langs:
            print(f"| {r['file']} | {r['status']} | {'' if r['word_recall'] is None else r['word_recall']} |")
    if args.files:
        print()
        for r in rows:
            if r["status"] != "ok":
                print(f"{r['status']:8} {r['reason']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
