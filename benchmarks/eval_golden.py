"""eval/'s own golden set, split tune/test: hit@1, hit@5 under a token budget, IoU and context tokens
per question for the shipped config, and a paired before/after comparison of two such runs.

Run it once per source tree (the chunkwise on ``PYTHONPATH`` is the one measured) and compare:

    PYTHONPATH=/path/to/before/src python benchmarks/eval_golden.py --json before.json
    PYTHONPATH=src python benchmarks/eval_golden.py --json after.json
    python benchmarks/eval_golden.py --compare before.json after.json

Each run evaluates ``eval/chunkwise.toml``'s chunking with two retrieval runs (the gate's BM25 with
neighbour expansion, and hybrid without expansion) under each ``--budgets`` value, on each split.
The comparison pairs the same question ids (``evaluate.stats.paired``: mean difference, its standard
error and a seeded bootstrap interval) and prints Markdown for BENCHMARKS.md.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RUNS = (("bm25", "neighbours"), ("hybrid", "none"))
METRICS = ("hit@1", "hit@5", "iou", "tokens")


def _commit(src: Path) -> str:
    try:
        return subprocess.run(["git", "-C", str(src), "rev-parse", "--short=12", "HEAD"], capture_output=True,
                              text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def measure(budgets: list[int], splits: list[str], k: int) -> dict:
    import chunkwise
    from chunkwise import api
    from chunkwise.config import ChunkConfig

    conf = tomllib.loads((ROOT / "eval" / "chunkwise.toml").read_text(encoding="utf-8"))
    chunk = ChunkConfig(**conf["chunking"])
    src = Path(chunkwise.__file__).resolve().parents[1]
    out = {"commit": _commit(src), "src": str(src), "k": k, "load_before": os.getloadavg()[0], "runs": []}
    for budget in budgets:
        for split in splits:
            t0 = time.perf_counter()
            ev = api.run_eval(ROOT / "eval" / "examples.golden.jsonl", ROOT / "examples", [(chunk, list(RUNS))],
                              api.EvalSettings(k=k, budget=budget, split=split, embedder=conf["ingest"]["embedder"]))
            for r in ev.results:
                out["runs"].append({"budget": budget, "split": split, "config": r.config.name,
                                    "questions": {a["qid"]: {"rank": a["rank"], "iou": a["iou"], "tokens": a["tokens"]}
                                                  for a in r.answers},
                                    "seconds": time.perf_counter() - t0})
    out["load_after"] = os.getloadavg()[0]
    return out


def _values(qs: dict, ids: list[str], metric: str) -> list[float]:
    from chunkwise.evaluate.metrics import hit

    if metric.startswith("hit@"):
        return [float(hit(qs[i]["rank"], int(metric[4:]))) for i in ids]
    return [float(qs[i][metric]) for i in ids]


def summary(data: dict) -> str:
    from chunkwise.evaluate.stats import mean, standard_error

    lines = [f"commit `{data['commit']}`, k {data['k']}, load {data['load_before']:.1f}-{data['load_after']:.1f}", "",
             "| budget | split | config | n | " + " | ".join(METRICS) + " |", "|---:|---|---|---:|" + "---:|" * len(METRICS)]
    for r in data["runs"]:
        ids = sorted(r["questions"])
        cells = []
        for metric in METRICS:
            xs = _values(r["questions"], ids, metric)
            spec = ".0f" if metric == "tokens" else ".3f"
            cells.append(f"{mean(xs):{spec}} ± {standard_error(xs):{spec}}")
        lines.append(f"| {r['budget']} | {r['split']} | `{r['config']}` | {len(ids)} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def compare(before: dict, after: dict) -> str:
    from chunkwise.evaluate.stats import paired, standard_error

    key = lambda r: (r["budget"], r["split"], r["config"])  # noqa: E731
    old = {key(r): r for r in before["runs"]}
    lines = [f"before `{before['commit']}`, after `{after['commit']}`; k {after['k']}; mean ± SE over questions; "
             "Δ = after − before on the same questions, with its SE and 95% bootstrap interval (2000 resamples, seed 0)",
             "", "| budget | split | config | n | metric | before | after | Δ (SE) | 95% interval |",
             "|---:|---|---|---:|---|---:|---:|---:|---|"]
    for r in after["runs"]:
        b = old.get(key(r))
        if b is None:
            continue
        ids = sorted(set(r["questions"]) & set(b["questions"]))
        for metric in METRICS:
            xs, ys = _values(b["questions"], ids, metric), _values(r["questions"], ids, metric)
            p = paired(metric, "before", xs, "after", ys)
            f = (lambda v: f"{v:.0f}") if metric == "tokens" else (lambda v: f"{v:.3f}")
            lines.append(f"| {r['budget']} | {r['split']} | `{r['config']}` | {p.n} | {metric} | "
                         f"{f(p.mean_a)} ± {f(standard_error(xs))} | {f(p.mean_b)} ± {f(standard_error(ys))} | "
                         f"{p.diff:+.3f} ({p.se:.3f}) | [{p.ci_low:+.3f}, {p.ci_high:+.3f}]"
                         f"{' *' if p.significant else ''} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--budgets", default="1500,600", help="context token budgets (comma-separated)")
    p.add_argument("--splits", default="tune,test")
    p.add_argument("--k", type=int, default=10)
    p.add_argument("--json", help="write the per-question results here")
    p.add_argument("--compare", nargs=2, metavar=("BEFORE", "AFTER"), help="print the paired before/after table")
    args = p.parse_args(argv)
    if args.compare:
        before, after = (json.loads(Path(f).read_text(encoding="utf-8")) for f in args.compare)
        print(compare(before, after))
        return 0
    data = measure([int(b) for b in args.budgets.split(",")], args.splits.split(","), args.k)
    if args.json:
        Path(args.json).write_text(json.dumps(data, indent=1), encoding="utf-8")
    print(summary(data))
    return 0


if __name__ == "__main__":
    sys.exit(main())
