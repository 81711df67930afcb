"""``chunkwise bench overlap|headers|merge``: seed 001's experiments on generated corpora, each figure
printed beside the seed's so a reader can see whether chunkwise reproduces it."""
from __future__ import annotations

import argparse

from chunkwise import api
from chunkwise.api import ConfigError
from chunkwise.cli.output import emit_json, table

MODES = ("bm25", "dense", "hybrid")


def _ints(text: str) -> list[int]:
    try:
        return [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated integers such as 0,10,30, got {text!r}") from None


def _common(p: argparse.ArgumentParser, seeds: bool) -> None:
    p.add_argument("--seed", type=int, default=0, help="corpus seed (default 0)")
    if seeds:
        p.add_argument("--seeds", type=int, default=5, help="how many corpora, seeds SEED.. (default 5, as the seed)")
    p.add_argument("--mode", default="bm25", choices=MODES,
                   help="retrieval mode (default bm25: the seed ranked lexically, with TF-IDF)")
    p.add_argument("--embedder", default=api.DEFAULT_EMBEDDER,
                   help=f"embedder for dense/hybrid (default {api.DEFAULT_EMBEDDER}; hashing: fast, a toy)")
    p.add_argument("--json", action="store_true", help="one JSON document with the figures and the seed's")


def add_bench_parser(subparsers) -> argparse.ArgumentParser:
    """Register ``bench`` and its sub-commands on the top-level parser's subparsers."""
    bench = subparsers.add_parser("bench", help="reproduce seed 001's experiments on generated corpora")
    sub = bench.add_subparsers(dest="bench_command", required=True)

    p = sub.add_parser("overlap", help="overlap sweep: straddling (formula vs measured), recall@k, inflation")
    p.add_argument("--size", type=int, default=100, help="chunk size S in words (default 100)")
    p.add_argument("--overlaps", type=_ints, default=[0, 10, 20, 30, 34, 50],
                   help="overlaps O, comma-separated (default 0,10,20,30,34,50)")
    p.add_argument("--k", type=int, default=5, help="top-k (default 5)")
    p.add_argument("--documents", dest="docs", type=int, default=100, help="documents per corpus (default 100)")
    p.add_argument("--docs", dest="docs", type=int, default=argparse.SUPPRESS, help=argparse.SUPPRESS)  # old name
    p.add_argument("--facts", type=int, default=8, help="planted facts (questions) per document (default 8)")
    _common(p, seeds=True)
    p.set_defaults(func=cmd_bench_overlap)

    p = sub.add_parser("headers", help="contextual headers on near-identical manuals: recall@1 and @3 per arm")
    p.add_argument("--products", type=int, default=30, help="manuals per corpus, 6 sections each (default 30)")
    p.add_argument("--p-named", type=float, default=0.25, help="share of section bodies naming the product (0.25)")
    _common(p, seeds=True)
    p.set_defaults(func=cmd_bench_headers)

    p = sub.add_parser("merge", help="duplicate hits under overlap: merge_hits and over-fetching")
    p.add_argument("--size", type=int, default=100, help="chunk size S in words (default 100)")
    p.add_argument("--overlap", type=int, default=50, help="overlap O in words (default 50)")
    p.add_argument("--k", type=int, default=5, help="passages wanted (default 5)")
    p.add_argument("--fetch", type=int, default=15, help="chunks fetched before merging (default 15)")
    p.add_argument("--documents", dest="docs", type=int, default=100, help="documents in the corpus (default 100)")
    p.add_argument("--docs", dest="docs", type=int, default=argparse.SUPPRESS, help=argparse.SUPPRESS)  # old name
    p.add_argument("--facts", type=int, default=8, help="planted facts (questions) per document (default 8)")
    _common(p, seeds=False)
    p.set_defaults(func=cmd_bench_merge)
    return bench


def _embedder(args):
    if args.mode == "bm25":
        return None
    emb = api.make_embedder(args.embedder)
    if emb is None:
        raise ConfigError(f"--mode {args.mode} needs vectors; use --embedder {api.DEFAULT_EMBEDDER} (or hashing)")
    return emb


def _seeds(args) -> list[int]:
    if args.seeds < 1:
        raise ConfigError(f"--seeds must be at least 1, got {args.seeds}")
    return list(range(args.seed, args.seed + args.seeds))


def _f(x, digits: int = 3) -> str:
    return "-" if x is None else f"{x:.{digits}f}"


def cmd_bench_overlap(args: argparse.Namespace) -> int:
    from chunkwise.api import SEED_OVERLAP, SEED_OVERLAP_QUESTIONS, overlap_sweep, sampling_tolerance

    seeds = _seeds(args)
    res = overlap_sweep(args.size, args.overlaps, seeds, args.k, args.docs, args.facts, args.mode, _embedder(args))
    if args.json:
        emit_json(res.to_dict())
        return 0
    seed_setup = args.size == 100 and args.k == 5
    rows = []
    for r in res.rows:
        ref = SEED_OVERLAP.get(r.overlap) if seed_setup else None
        tol = sampling_tolerance(1 - r.straddle_formula, r.questions, SEED_OVERLAP_QUESTIONS) + 0.0005  # + rounding
        rows.append((r.overlap, _f(r.inflation), _f(r.straddle_formula), _f(r.straddle_measured), _f(r.recall),
                     _f(r.recall_given_fits), f"{r.guaranteed_straddled}/{r.guaranteed}",
                     _f(ref[2]) if ref else "", _f(ref[3]) if ref else "",
                     f"{r.recall - ref[3]:+.3f} (±{tol:.3f})" if ref else ""))
    k = args.k
    print(f"S = {args.size} words, top-{k}, {args.mode}, {res.rows[0].questions // len(seeds)} questions per corpus x "
          f"{len(seeds)} corpora (seeds {seeds[0]}-{seeds[-1]}); seed 001: TF-IDF, 800 x 5")
    print(table(["O", "inflation", "straddle (formula)", "straddle (measured)", f"recall@{k}", f"recall@{k} | fits",
                 "straddled, L<=O+1", "seed straddle", f"seed recall@{k}", "vs seed (±3 s.e.)"],
                rows, right=tuple(range(9))))
    first = res.rows[0]
    if first.half_answer_at_top1 is not None:
        print(f"At O={first.overlap}, for {first.half_answer_at_top1:.0%} of the questions whose evidence straddles a "
              f"cut, the top-1 chunk holds only part of it (seed 001: 100%).")
    return 0


def cmd_bench_headers(args: argparse.Namespace) -> int:
    from chunkwise.api import SEED_HEADERS, header_experiment

    seeds = _seeds(args)
    res = header_experiment(seeds, args.products, args.p_named, args.mode, _embedder(args))
    if args.json:
        emit_json(res.to_dict())
        return 0
    seed_setup = args.products == 30 and args.p_named == 0.25
    rows = []
    for r in res.rows:
        ref = SEED_HEADERS.get(r.arm) if seed_setup else None
        rows.append((r.arm, r.kind, _f(r.words_per_chunk, 1), _f(r.recall_at_1), _f(r.recall_at_3),
                     _f(r.recall_at_1_named), _f(r.recall_at_1_unnamed), _f(ref[1]) if ref else "",
                     _f(ref[2]) if ref else ""))
    print(f"{args.products} manuals x 6 sections, {res.questions // len(seeds)} questions per corpus x {len(seeds)} "
          f"corpora (seeds {seeds[0]}-{seeds[-1]}), {args.mode}; seed 001: TF-IDF, 180 x 5")
    print(table(["embedded text", "kind", "words/chunk", "recall@1", "recall@3", "@1 body names product",
                 "@1 body does not", "seed recall@1", "seed recall@3"], rows, right=tuple(range(2, 9))))
    return 0


def cmd_bench_merge(args: argparse.Namespace) -> int:
    from chunkwise.api import SEED_MERGE, merge_experiment

    res = merge_experiment(args.seed, args.size, args.overlap, args.k, args.fetch, args.docs, args.facts, args.mode,
                           _embedder(args))
    if args.json:
        emit_json(res.to_dict())
        return 0
    setup = (args.seed, args.size, args.overlap, args.k, args.fetch, args.docs, args.facts)
    seed_setup = setup == (0, 100, 50, 5, 15, 100, 8)  # the seed's figures are for this one corpus
    k = args.k

    def ref(name, i):
        return (f"{SEED_MERGE[name][i]:.2f}" if i == 0 else f"{SEED_MERGE[name][i]:.0f}") if seed_setup else ""

    rows = [(f"raw top-{k} chunks", f"{res.raw_passages:.2f}", f"{res.raw_words:.0f}", ref("raw", 0), ref("raw", 1)),
            (f"merge_hits(top-{k})", f"{res.merged_passages:.2f}", f"{res.merged_words:.0f}", ref("merged", 0),
             ref("merged", 1)),
            (f"fetch {args.fetch}, merge_hits, keep {k}", f"{res.refilled_passages:.2f}", f"{res.refilled_words:.0f}",
             ref("refilled", 0), ref("refilled", 1))]
    print(f"S={args.size}, O={args.overlap}, corpus seed {args.seed}, {res.questions} questions, {args.mode}")
    print(table(["passages sent", "distinct passages", "words sent", "seed passages", "seed words"], rows,
                right=(1, 2, 3, 4)))
    print(f"{res.short_questions:.0%} of merged top-{k} lists are short of {k} passages; evidence whole in the "
          f"raw top-{k}: {res.recall_raw:.3f}, in the {k} refilled passages: {res.recall_refilled:.3f}. "
          f"(The seed's raw words are {k} x S; measured raw words count short last windows as they are.)")
    return 0
