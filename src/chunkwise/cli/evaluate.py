"""``chunkwise eval``: configs scored on golden questions, the chosen one with standard errors, the
paired comparisons, the gate's exit code."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from chunkwise import api
from chunkwise.cli.output import emit_json, safe, table
from chunkwise.cli.ranking import ranking_options, rerank_options


def cmd_eval(args: argparse.Namespace, *, defaults: dict, chunk_flags: tuple) -> int:
    """``chunkwise eval``: ``defaults``/``chunk_flags`` are the chunk command's (shared flags)."""
    conf = api.load_config(args.config)
    base = {**defaults, **conf.chunking}
    base.update({k: v for k, v in vars(args).items() if k in chunk_flags and v is not None})
    evaluation = conf.eval
    base["mode"] = args.mode or evaluation.get("mode", "hybrid")
    base["expand"] = args.expand or evaluation.get("expand", "none")
    grid = api.load_grid(args.grid) if args.grid else {}
    configs, skipped = api.expand_grid(grid, base)
    settings = api.EvalSettings(
        k=args.k or evaluation.get("k", 10), budget=args.budget if args.budget is not None else evaluation.get("budget", 1500),
        embedder=args.embedder or conf.ingest.get("embedder", api.DEFAULT_EMBEDDER),
        generator_tokenizer=args.generator_tokenizer, gate_k=args.gate_k,
        overfetch=args.overfetch or evaluation.get("overfetch", 3), split=args.split,
        passage_budget=getattr(args, "passage_budget", evaluation.get("passage_budget", api.DEFAULT_PASSAGE_BUDGET)),
        **{key: value.spec() for key, value in ranking_options(args, conf.search).items()},
        granularity=args.granularity, **rerank_options(args))
    banner = [f"evaluating {len(configs)} chunk config(s) x {len(configs[0][1])} retrieval run(s) on "
              f"{safe(str(args.golden))}, {settings.split} questions (budget {settings.budget} tokens, k {settings.k})"]

    def progress(c) -> None:  # the banner once the golden set is read: a bad one is one line, nothing before it
        while banner:
            print(banner.pop(), file=sys.stderr)
        print(f"  {c.strategy} size {c.size} overlap {c.overlap} header {c.header}", file=sys.stderr)

    ev = api.run_eval(args.golden, args.docs, configs, settings, skipped=skipped,
                      progress=None if args.json else progress)
    data = ev.to_dict()
    if args.out:
        command = "chunkwise " + " ".join(sys.argv[1:]) if sys.argv and "chunkwise" in sys.argv[0] else "chunkwise eval"
        api.write_report(ev.report_data(f"chunkwise eval: {Path(args.golden).name} on {args.docs}", command), args.out)
    failing = ev.below(args.min_recall) if args.min_recall is not None else []
    if args.json:
        emit_json({**data, "gate": {"min_recall": args.min_recall, "k": args.gate_k, "failing": failing}})
    else:
        keys = ["recall@1", "recall@5", "mrr", "straddle_rate", "half_answer_rate", "token_iou", "context_tokens",
                "index_inflation", "chunks", "latency_ms_p50"]
        rows = [[r["name"]] + [_fmt(r["metrics"][k]) for k in keys] + ["*" if r["name"] in data["pareto"] else ""]
                for r in data["configs"]]
        print(table(["config", "R@1", "R@5", "MRR", "straddle", "half", "IoU", "ctx tok", "inflation", "chunks",
                     "p50 ms", "pareto"], rows, right=tuple(range(1, 11))))
        for name in ("recall@5", "token_iou", "index_bytes"):
            if name in data["best"]:
                print(f"best {name}: {data['best'][name]}")
        _print_choice(data, settings.gate_k)
        for note in skipped:
            print(f"skipped: {safe(note)}", file=sys.stderr)
        if args.out:
            print(f"report: {args.out}")
    if failing:
        print(f"chunkwise: recall@{args.gate_k} below {args.min_recall} for: {', '.join(failing)}", file=sys.stderr)
        return 1
    return 0


def _print_choice(data: dict, gate_k: int) -> None:
    """The embedder used, the chosen config with standard errors, and the paired comparisons."""
    n = data["questions"]["count"]
    if data["embedder"] == "none":  # every run ranked by BM25: nothing was embedded, whatever --embedder says
        print("embedder: none (every run ranks by bm25: no vectors were made)")
    else:
        print(f"embedder: {data['embedder']} (made every stored and query vector)")
    chosen = next(r for r in data["configs"] if r["name"] == data["chosen"])
    m, se = chosen["metrics"], chosen["se"]
    print(f"chosen on {n} {data['questions']['split']} question(s): {chosen['name']}  "
          f"R@1 {m['recall@1']:.3f} \u00b1 {se['recall@1']:.3f}  R@{gate_k} {m[f'recall@{gate_k}']:.3f} \u00b1 "
          f"{se[f'recall@{gate_k}']:.3f}  IoU {m['token_iou']:.3f} \u00b1 {se['token_iou']:.3f}  "
          f"ctx tok {m['context_tokens']:.0f} \u00b1 {se['context_tokens']:.0f}")
    comp = data["comparisons"]
    if comp["rows"]:
        print(f"paired vs the chosen config (other - chosen on the same questions, \u00b1 SE; * = the "
              f"{comp['level']:.0%} bootstrap interval excludes 0; intervals in --json and the report):")
        by_config: dict[str, dict[str, str]] = {}
        for r in comp["rows"]:
            spec = ".1f" if r["metric"] == "tokens" else ".3f"
            by_config.setdefault(r["b"], {})[r["metric"]] = (f"{r['diff']:+{spec}} \u00b1 {r['se']:{spec}}"
                                                             + ("*" if r["significant"] else ""))
        rows = [[name] + [cells.get(metric, "") for metric in comp["metrics"]] for name, cells in by_config.items()]
        print(table(["config"] + comp["metrics"], rows, right=tuple(range(1, len(comp["metrics"]) + 1))))


def _fmt(v) -> str:
    if isinstance(v, float):
        return f"{v:.3f}" if abs(v) < 10 else f"{v:.0f}"
    return str(v)
