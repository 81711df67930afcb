"""Retrieval settings side by side on one labelled set, through the product's eval path.

Why: ``chunkwise eval`` ingests into a temporary store on every run, so a sweep of retrieval
settings (k, budget, passage budget, fusion weights, overfetch) would embed the corpus once per
setting; MiniLM on a loaded 2-core machine makes that the whole cost. This script calls the same
``evaluate_chunking`` the CLI calls, with a persistent store per chunk config (``--stores``: a
re-ingest of unchanged files is a no-op), so every row scores exactly what ``chunkwise eval`` with
those flags scores, and the corpus is embedded once per chunk config.

    python benchmarks/quality_sweep.py --golden chroma.jsonl --docs ../shared/data/chroma/corpora \\
        --stores /tmp/stores --split tune --chunks "auto/254/0,recursive/180/60" \\
        --runs "k=5;k=5 passage_budget=256;k=5 fusion=bm25=1,dense=0.25"

A chunk config is ``strategy/size/overlap[/tokenizer]``; runs are separated by ``;``, each a
space-separated ``key=value`` list
over eval's settings (k, budget, passage_budget, fusion, overfetch, mode, reranker, rerank_depth;
``none`` for no budget). One JSON line per (chunk config, run) on stdout with the Chroma span
metric (character recall and IoU, %), R@1, R@5, MRR, context tokens and their standard errors.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import replace
from pathlib import Path

from chunkwise.config import ChunkConfig
from chunkwise.evaluate.golden import load_golden_texts, select_split
from chunkwise.evaluate.runner import Settings, evaluate_chunking, make_eval_embedder
from chunkwise.evaluate.stats import standard_error

INTS = {"k", "budget", "passage_budget", "overfetch", "rerank_depth"}


def parse_chunk(spec: str) -> ChunkConfig:
    parts = spec.split("/")
    kw = {"strategy": parts[0], "size": int(parts[1]), "overlap": int(parts[2]) if len(parts) > 2 else 0}
    if len(parts) > 3:
        kw["tokenizer"] = parts[3]
    return ChunkConfig(**kw)


def parse_run(spec: str) -> tuple[dict, str]:
    kw: dict = {}
    mode = "hybrid"
    for item in spec.split():
        key, _, value = item.partition("=")
        if key == "mode":
            mode = value
        elif key in INTS:
            kw[key] = None if value == "none" else int(value)
        else:
            kw[key] = value
    return kw, mode


RECALLS: list[float] = []  # per question, in asking order: the overlap recall score_question computed


def _record_recall() -> None:
    """Keep each question's character recall (eval keeps only its mean; the splits need each)."""
    from chunkwise.evaluate import runner

    original = runner.m.score_question

    def scored(*a, **kw):
        out = original(*a, **kw)
        RECALLS.append(out.overlap.recall)
        return out
    runner.m.score_question = scored


def rows(result, recalls: list[float], chunk: str, run: str, seconds: float) -> list[dict]:
    """One row per split (all, tune, test) of one evaluated run."""
    out = []
    for split in ("all", "tune", "test"):
        idx = [i for i, a in enumerate(result.answers) if split == "all" or a["split"] == split]
        if not idx:
            continue
        ans = [result.answers[i] for i in idx]
        r1 = [float(a["rank"] is not None and a["rank"] <= 1) for a in ans]
        r5 = [float(a["rank"] is not None and a["rank"] <= 5) for a in ans]
        rec = [100 * recalls[i] for i in idx]
        iou = [100 * a["iou"] for a in ans]
        ctx = [a["tokens"] for a in ans]
        mean = lambda xs: sum(xs) / len(xs)  # noqa: E731
        out.append({"chunks": chunk, "run": run, "split": split, "n": len(ans),
                    "recall": round(mean(rec), 2), "recall_se": round(standard_error(rec), 2),
                    "iou": round(mean(iou), 2), "iou_se": round(standard_error(iou), 2),
                    "r1": round(mean(r1), 3), "r1_se": round(standard_error(r1), 3),
                    "r5": round(mean(r5), 3), "r5_se": round(standard_error(r5), 3),
                    "ctx": round(mean(ctx), 1), "n_chunks": result.metrics["chunks"], "seconds": round(seconds, 1)})
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--golden", required=True)
    ap.add_argument("--docs", required=True)
    ap.add_argument("--stores", required=True, help="folder of the persistent per-config stores")
    ap.add_argument("--split", default="all", choices=("all", "tune", "test"))
    ap.add_argument("--chunks", required=True, help="comma-separated strategy/size/overlap[/tokenizer]")
    ap.add_argument("--runs", required=True, help="';'-separated runs of space-separated key=value settings")
    ap.add_argument("--embedder", default=None)
    args = ap.parse_args(argv)
    _record_recall()
    questions, texts = load_golden_texts(args.golden, args.docs)
    questions = select_split(questions, args.split)
    base = Settings() if args.embedder is None else Settings(embedder=args.embedder)
    embedder = make_eval_embedder(base.embedder)
    Path(args.stores).mkdir(parents=True, exist_ok=True)
    for cspec in args.chunks.split(","):
        chunk = parse_chunk(cspec)
        for rspec in args.runs.split(";"):
            kw, mode = parse_run(rspec)
            settings = replace(base, split=args.split, **kw)
            t0 = time.perf_counter()
            RECALLS.clear()
            (result,) = evaluate_chunking(chunk, [(mode, "none")], args.docs, questions, texts, settings,
                                          args.stores, embedder)
            for r in rows(result, list(RECALLS), cspec, rspec, time.perf_counter() - t0):
                print(json.dumps(r), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
