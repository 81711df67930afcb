"""Timing oracle (issue 25 item 5): how long reading one document takes for a caller who may see
none of it, against a document that does not exist.

The store: one document of N sections (default 3,000) tagged ``finance`` and one small ``staff``
document, hashing embedder (the lookup reads no vectors). A ``staff`` caller asks for the hidden
document and for an absent id, interleaved, ``--samples`` times each, through
``api.visible_document`` (what ``GET /documents/{id}`` runs). For comparison the path before the
fix (read every row of the document, then filter in Python) is timed on the same store.

    .venv/bin/python benchmarks/hidden_lookup.py [--sections 3000] [--samples 2000] [--json FILE]
"""
from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _timing import timed  # noqa: E402


def build(root: Path, sections: int) -> Path:
    from chunkwise.config import ChunkConfig
    from chunkwise.embed import make_embedder
    from chunkwise.pipeline import ingest

    docs = root / "docs"
    docs.mkdir()
    body = "".join(f"## Part {i}\n\nThe finance clause {i} says what it says about item {i}.\n\n" for i in range(sections))
    (docs / "secret.md").write_text("# Secret\n\n" + body, encoding="utf-8")
    (docs / "open.md").write_text("# Open\n\n## One\n\nA staff page.\n", encoding="utf-8")
    db = root / "store.db"
    ingest([docs], db, ChunkConfig(strategy="structure", size=64), embedder=make_embedder("hashing"),
           acl_map={"secret.md": ["finance"], "open.md": ["staff"]})
    return db


def old_path(store, doc_id: str, groups) -> list:
    """Before: every stored row of the document read, then filtered (documents.py before issue 25)."""
    from chunkwise.access import permitted

    with store.as_caller(groups):
        stored = store.records_of(doc_id)
    return [r for r in stored.values() if permitted(r.get("acl") or (), r.get("quality", ""), groups)]


def summary(ms: list[float]) -> dict:
    ms = sorted(ms)
    return {"median_ms": round(statistics.median(ms), 4), "p95_ms": round(ms[int(0.95 * (len(ms) - 1))], 4),
            "mean_ms": round(statistics.fmean(ms), 4), "samples": len(ms)}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sections", type=int, default=3000)
    ap.add_argument("--samples", type=int, default=2000)
    ap.add_argument("--json", default=None, help="write the figures here too")
    args = ap.parse_args(argv)
    from chunkwise import api

    with tempfile.TemporaryDirectory() as tmp:
        db = build(Path(tmp), args.sections)
        retriever = api.open_retriever(str(db))
        try:
            chunks = retriever.store.db.execute("SELECT count(*) FROM chunks WHERE doc_id = 'secret.md'").fetchone()[0]
            runs = {"now": lambda d: api.visible_document(retriever, d, ["staff"]),
                    "before": lambda d: old_path(retriever.store, d, ["staff"]) or None}
            out = {"sections": args.sections, "hidden_chunks": chunks, "python": platform.python_version(),
                   "machine": platform.machine()}
            for name, run in runs.items():
                times = {"hidden": [], "absent": []}
                for _ in range(20):  # warm the page cache and the statement cache
                    run("secret.md"), run("absent.md")
                for _ in range(args.samples):
                    for doc, key in (("secret.md", "hidden"), ("absent.md", "absent")):
                        wall, _, found = timed(lambda: run(doc))
                        assert found is None, (name, doc)
                        times[key].append(wall * 1000)
                out[name] = {k: summary(v) for k, v in times.items()}
        finally:
            retriever.close()
    print(json.dumps(out, indent=1))
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
