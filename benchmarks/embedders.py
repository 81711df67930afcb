"""MiniLM embedding throughput: PyTorch vs ONNX Runtime fp32 vs ONNX Runtime int8, same texts.

Why: issue 13 asks for the fastest ONNX path to reach >= 2x today's PyTorch path (``minilm``,
sentence-transformers) at cosine >= 0.99 to PyTorch's vectors, measured side by side in one run,
plus ingest end to end with each embedder.

Method:
- texts: the chunks of the five Chroma benchmark corpora (``../shared/data/chroma/corpora``) at
  ``--size`` MiniLM tokens (default 254, so every chunk fits the 256-token window with [CLS]/[SEP]),
  recursive strategy, the first ``--texts`` of them in corpus order (default 512);
- each embedder is built, loaded and warmed on 8 texts first (the ONNX export into a temporary
  cache folder is timed separately as ``export s``), then ``embed(texts)`` is timed ``--repeat``
  times (best kept; GC off during each call), batch size 64 for all three;
- cosine: each ONNX vector against PyTorch's vector of the same text (min and mean);
- ingest: the first ``--ingest-kb`` KB of each corpus file written to a temporary folder and
  ingested into a fresh store with ``ChunkConfig(strategy="auto", size=254)`` and the warmed
  embedder (so the row is chunking + embedding + writing, not model loading); once per embedder.

Run: ``.venv/bin/python benchmarks/embedders.py [--texts N] [--repeat N] [--ingest-kb N] [--json FILE]``
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from _timing import timed  # noqa: E402

from chunkwise import api  # noqa: E402
from chunkwise.embed import make_embedder  # noqa: E402

CORPORA = ROOT.parent / "shared" / "data" / "chroma" / "corpora"
EMBEDDERS = ("minilm", "minilm-onnx", "minilm-onnx-int8")


def texts_from_corpora(n: int, size: int) -> list[str]:
    """The corpora's chunks interleaved (one of each file in turn), so the first n cover all five."""
    per = [[c.text for c in api.chunk_text(p.read_text(encoding="utf-8"), strategy="recursive", size=size)]
           for p in sorted(CORPORA.glob("*.md"))]
    longest = max(map(len, per))
    return [group[i] for i in range(longest) for group in per if i < len(group)][:n]


def cosines(a: list[list[float]], b: list[list[float]]) -> tuple[float, float]:
    import numpy as np

    x, y = np.asarray(a), np.asarray(b)
    sims = (x * y).sum(1) / (np.linalg.norm(x, axis=1) * np.linalg.norm(y, axis=1))
    return float(sims.min()), float(sims.mean())


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--texts", type=int, default=512)
    ap.add_argument("--size", type=int, default=254)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--ingest-kb", type=int, default=40)
    ap.add_argument("--json", help="also write the figures here")
    args = ap.parse_args()
    if not CORPORA.is_dir():
        sys.exit(f"{CORPORA} not found (the benchmark corpora live in ../shared/data)")
    texts = texts_from_corpora(args.texts, args.size)
    tmp = Path(tempfile.mkdtemp(prefix="chunkwise-embed-bench-"))
    os.environ["CHUNKWISE_ONNX_DIR"] = str(tmp / "onnx")  # a fresh export, timed below
    docs = tmp / "docs"
    docs.mkdir()
    for path in sorted(CORPORA.glob("*.md")):
        text = path.read_text(encoding="utf-8")[: args.ingest_kb * 1024]
        (docs / path.name).write_text(text[: text.rfind("\n\n") if "\n\n" in text else len(text)], encoding="utf-8")

    rows, vectors = [], {}
    for name in EMBEDDERS:
        emb = make_embedder(name, batch_size=64)
        export_s = None
        if name != "minilm":
            from chunkwise.embed.onnx import onnx_file

            export_s, _, _ = timed(lambda: onnx_file(emb.precision))
        emb.embed(texts[:8])  # load and warm
        best = None
        for _ in range(args.repeat):
            wall, cpu, out = timed(lambda: emb.embed(texts))
            if best is None or wall < best[0]:
                best = (wall, cpu)
        vectors[name] = out
        stats_wall, _, stats = timed(lambda: api.ingest([str(docs)], str(tmp / f"{name}.db"),
                                                         api.ChunkConfig(strategy="auto", size=254),
                                                         embedder=emb, acl=["bench"]))
        rows.append({"embedder": name, "model": emb.name, "texts": len(texts), "best_s": best[0],
                     "cpu_per_wall": best[1] / best[0], "chunks_per_s": len(texts) / best[0], "export_s": export_s,
                     "ingest_s": stats_wall, "ingest_chunks": stats.added, "ingest_chunks_per_s": stats.added / stats_wall})
    base = rows[0]
    for r in rows:
        r["x_pytorch"] = r["chunks_per_s"] / base["chunks_per_s"]
        r["ingest_x_pytorch"] = base["ingest_s"] / r["ingest_s"]
        r["cos_min"], r["cos_mean"] = cosines(vectors[r["embedder"]], vectors["minilm"])

    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    versions = {}
    for pkg in ("torch", "sentence-transformers", "onnxruntime", "onnx"):
        try:
            from importlib.metadata import version

            versions[pkg] = version(pkg)
        except Exception:  # noqa: BLE001 - a missing package is reported as such
            versions[pkg] = "missing"
    print(f"commit {commit}; Python {platform.python_version()}; "
          + ", ".join(f"{k} {v}" for k, v in versions.items()) + f"; load average {os.getloadavg()[0]:.1f}")
    print(f"{len(texts)} texts (<= {args.size} MiniLM tokens, mean {sum(map(len, texts)) / len(texts):.0f} chars); "
          f"ingest corpus {args.ingest_kb} KB x {len(list(docs.iterdir()))} files\n")
    print("| embedder | name | chunks/s | best s | cpu/wall | x PyTorch | cos min | cos mean | export s "
          "| ingest s | ingest chunks | ingest chunks/s | ingest x PyTorch |")
    print("|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|")
    for r in rows:
        export = f"{r['export_s']:.1f}" if r["export_s"] is not None else ""
        print(f"| {r['embedder']} | {r['model']} | {r['chunks_per_s']:.1f} | {r['best_s']:.2f} | {r['cpu_per_wall']:.2f} "
              f"| {r['x_pytorch']:.2f} | {r['cos_min']:.4f} | {r['cos_mean']:.4f} | {export} | {r['ingest_s']:.1f} "
              f"| {r['ingest_chunks']} | {r['ingest_chunks_per_s']:.1f} | {r['ingest_x_pytorch']:.2f} |")
    fastest = max(rows[1:], key=lambda r: r["chunks_per_s"])
    ok = fastest["x_pytorch"] >= 2 and fastest["cos_min"] >= 0.99
    print(f"\n{'MET' if ok else 'MISS'}: fastest ONNX ({fastest['embedder']}) {fastest['x_pytorch']:.2f}x PyTorch "
          f"at cosine min {fastest['cos_min']:.4f} (target >= 2x at >= 0.99)")
    if args.json:
        Path(args.json).write_text(json.dumps({"commit": commit, "versions": versions, "rows": rows}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
