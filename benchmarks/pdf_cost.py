"""CPU seconds of ``extract_bytes`` and tables found, per PDF and in total, over the PDFs of
``../shared/data`` (Docling's and Unstructured's test documents): what the table finder costs and
finds. Process CPU time, because the machines this runs on are shared (wall time would measure the
neighbours). Files whose name contains a ``--skip`` word are left out (the 400- and 619-page ones).

    PYTHONPATH=src python benchmarks/pdf_cost.py [--data ../shared/data] [--skip 400p,619p] [--files]
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


def measure(paths: list[Path]) -> dict:
    from chunkwise.errors import ChunkwiseError
    from chunkwise.extract import extract_bytes

    rows = {}
    for path in paths:
        data = path.read_bytes()
        start = time.process_time()
        try:
            doc = extract_bytes(data, path.name, "application/pdf")
            tables = sum(b.kind == "table" for b in doc.blocks)
        except ChunkwiseError:
            tables = None
        rows[str(path)] = {"cpu_s": round(time.process_time() - start, 3), "tables": tables}
    return {"files": len(rows), "cpu_s": round(sum(r["cpu_s"] for r in rows.values()), 2),
            "tables": sum(r["tables"] or 0 for r in rows.values()), "failed": sum(r["tables"] is None for r in rows.values()),
            "per_file": rows}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--skip", default="400p,619p")
    ap.add_argument("--files", action="store_true", help="print every file's row")
    args = ap.parse_args(argv)
    if not args.data.is_dir():
        print(f"no data at {args.data}", file=sys.stderr)
        return 2
    skip = [s for s in args.skip.split(",") if s]
    paths = sorted(p for p in args.data.rglob("*.pdf") if not any(s in p.name for s in skip))
    result = measure(paths)
    rows = result.pop("per_file")
    print(json.dumps(result))
    if args.files:
        for path, row in rows.items():
            print(f"{row['cpu_s']:8.3f} s  {row['tables']!s:>4} tables  {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
