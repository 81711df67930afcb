"""Semantic chunking with fp32 against int8 sentence vectors: same chunks? same retrieval?

Why: issue 26 item 6 asks for <= 30 CPU s per MB "at equal quality". fp32 MiniLM on ONNX Runtime is
already fused and near the CPU's fp32 rate; the int8 graph (``minilm-onnx-int8``, the same weights
quantized) embeds the sentences for ~40% less CPU but moves ~15% of the boundaries. This script
measures what that costs where it matters, on a labelled set: Chroma's chunking benchmark (the five
corpora, its questions with character-offset excerpts, ``benchmarks/chroma_eval.py``'s metric code
and split), each config chunked twice — sentence vectors from fp32 and from int8 — in one process:

- chunking CPU s per MB for each (``time.process_time``, all threads) and the share of the fp32
  run's chunk (start, end) spans the int8 run reproduces;
- retrieval with the *same* embedder for both (ONNX fp32 MiniLM, texts over its window embedded
  from their head as Chroma's harness did): top-5 by cosine (Chroma's way) and chunkwise's hybrid
  search (k = 5), recall and IoU in % with standard errors, and the **paired** difference
  int8 - fp32 per question with its standard error (the questions are shared, so the paired SE is
  the one that says whether a difference is noise).

Vectors are cached under ``--cache`` (keyed by model and text), so chunks both runs share are embedded
once. Run: ``PYTHONPATH=src python benchmarks/semantic_quality.py [--split test] [--sizes 200]
[--data ../shared/data/chroma] [--json FILE]``
"""
from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "src"))

import chroma_eval  # noqa: E402  (the benchmark's loader, metric and search path)

EMBEDDERS = {"fp32": "minilm", "int8": "minilm-onnx-int8"}


def semantic_chunks(b: "chroma_eval.Bench", size: int, embedder: str):
    """All five corpora chunked by ``semantic`` (cl100k size, as the other chunkwise rows): the
    Chunks, the CPU seconds of ``chunk()`` alone (model loaded and warmed first) and the MB."""
    import chunkwise

    chunker = chunkwise.make_chunker(strategy="semantic", size=size, tokenizer="cl100k_base",
                                     semantic_embedder=embedder)
    chunker.embedder.embed(["warm up the model"])
    ranges, texts, cpu = [], [], 0.0
    for doc, text in b.docs.items():
        c0 = time.process_time()
        chunks = chunker.chunk(text)
        cpu += time.process_time() - c0
        for c in chunks:
            ranges.append((doc, c.start_char, c.end_char))
            texts.append(c.embed_text)
    mb = sum(len(t.encode("utf-8")) for t in b.docs.values()) / 1e6
    return chroma_eval.Chunks(tuple(ranges), tuple(texts)), cpu, mb


def paired(xs: list[float], ys: list[float]) -> tuple[float, float]:
    """Mean and standard error of ys - xs, in % (the per-question paired difference)."""
    d = [100 * (y - x) for x, y in zip(xs, ys)]
    n = len(d)
    mean = sum(d) / n
    var = sum((v - mean) ** 2 for v in d) / (n - 1) if n > 1 else 0.0
    return mean, math.sqrt(var / n)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=chroma_eval.DATA)
    ap.add_argument("--split", choices=("all", "tune", "test"), default="test")
    ap.add_argument("--sizes", default="200", help="comma-separated chunk sizes (cl100k tokens)")
    ap.add_argument("--cache", type=Path, default=HERE / ".cache" / "onnx_fp32_vectors.sqlite")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()

    from chunkwise.embed.onnx import NAMES, OnnxMiniLMEmbedder
    from chunkwise.evaluate.chroma import chroma_scores

    b = chroma_eval.Bench(args.data, args.split)
    b.cache = chroma_eval.VectorCache(args.cache)
    b.cache.MODEL = NAMES["fp32"]  # keys name the retrieval model: never mixed with PyTorch's vectors
    b.cache._embedder = OnnxMiniLMEmbedder("fp32", batch_size=32, allow_truncation=True, spinning=False)
    out = []
    for size in [int(s) for s in args.sizes.split(",") if s]:
        runs = {p: semantic_chunks(b, size, e) for p, e in EMBEDDERS.items()}
        ref = set(runs["fp32"][0].ranges)
        for mode in ("dense top-5", "hybrid k=5"):
            per = {}
            for p, (chunks, cpu, mb) in runs.items():
                res = b.dense_top(chunks) if mode == "dense top-5" else b.chunkwise_search(chunks, "hybrid", 5, None, "none", 1, refetch=False)
                per[p] = [chroma_scores(q.spans, r) for q, r in zip(b.questions, res)]
                row = b.score(f"semantic {size} sentence vectors {p}, {mode}", chunks, res, 0.0)
                row.update(precision_name=p, size=size, mode=mode, chunk_cpu_s_per_mb=cpu / mb, mb=mb,
                           same_chunks_as_fp32=len(ref & set(chunks.ranges)) / len(ref))
                out.append(row)
            for metric in ("recall", "iou"):
                m, se = paired([getattr(o, metric) for o in per["fp32"]], [getattr(o, metric) for o in per["int8"]])
                out[-1][f"paired_{metric}_diff"], out[-1][f"paired_{metric}_se"] = m, se
    load = os.getloadavg()
    print(f"Chroma corpora {out[0]['mb']:.3f} MB, {len(b.questions)} questions ({args.split} split); "
          f"load {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}")
    print("| size | sentence vectors | retrieval | chunks | same chunks as fp32 | chunking CPU s/MB | recall (SE) | "
          "IoU (SE) | int8 - fp32, paired: recall (SE) | IoU (SE) |")
    print("|--:|---|---|--:|--:|--:|--:|--:|--:|--:|")
    for r in out:
        pair = (f"{r['paired_recall_diff']:+.2f} ({r['paired_recall_se']:.2f}) | {r['paired_iou_diff']:+.2f} "
                f"({r['paired_iou_se']:.2f})") if "paired_recall_diff" in r else " | "
        print(f"| {r['size']} | {r['precision_name']} | {r['mode']} | {r['chunks']} | {r['same_chunks_as_fp32']:.3f} | "
              f"{r['chunk_cpu_s_per_mb']:.1f} | {r['recall']:.1f} ({r['recall_se']:.1f}) | {r['iou']:.2f} ({r['iou_se']:.2f}) | {pair} |")
    if args.json:
        args.json.write_text(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
