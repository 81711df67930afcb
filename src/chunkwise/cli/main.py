"""``chunkwise`` entry point. Errors become one clean line and an exit code (2: usage/config, 1: run)."""
from __future__ import annotations

import argparse
import errno
import sys
from functools import partial
from pathlib import Path

from chunkwise import api
from chunkwise.api import HEADERS, STRATEGIES, UNITS, ChunkConfig, ChunkwiseError, ConfigError
from chunkwise.cli.evaluate import cmd_eval
from chunkwise.cli.chunk_options import (_CHUNK_FLAGS, _DEFAULTS, _PASSAGE_HELP, _SEMANTIC_FLAGS, _chunk_options,
                                         _passage_budget, _positive)
from chunkwise.cli.extract import add_extract_parser, add_path_filters, existing
from chunkwise.cli.output import counted, emit_json, emit_jsonl, preview, safe, table
from chunkwise.cli.progress import IngestBar
from chunkwise.cli.ranking import add_ranking_flags, ranking_options, rerank_options
from chunkwise.cli.results import print_search, use_color
from chunkwise.errors import about


def _file_limits(p: argparse.ArgumentParser) -> None:
    """``--file-memory``/``--file-timeout``: the contained worker's limits per file (ingest, chunk, audit)."""
    p.add_argument("--file-memory", type=_positive(int), default=2048, metavar="MB",
                   help="address space a worker may reach while it prepares one file, absolute: what the worker "
                        "holds counts too (default: 2048)")
    p.add_argument("--file-timeout", type=_positive(float), default=300.0, metavar="SECONDS",
                   help="wall time one file may take to prepare in a worker (default: 300)")


def _limits(args: argparse.Namespace):
    return api.Limits(memory_mb=args.file_memory, seconds=args.file_timeout)


def _config(args: argparse.Namespace) -> ChunkConfig:
    return ChunkConfig(
        strategy=args.strategy, size=args.size, overlap=args.overlap, unit=args.unit,
        tokenizer=args.tokenizer, backend=args.backend, header=args.header, window=args.window,
        special_tokens=args.special_tokens, docx_comments=args.docx_comments,
        context_llm=args.context_llm, context_tokens=args.context_tokens,
        **{k: getattr(args, k) for k in _SEMANTIC_FLAGS if getattr(args, k, None) is not None},
    )


def cmd_chunk(args: argparse.Namespace) -> int:
    """Each file through the preparation ingest runs (``pipeline/doors.py``): with ``--json`` the
    records ingest would store, ids and access tags included."""
    existing(args.paths)
    config = _config(args)
    acl = api.AccessTags.parse(args.acl, "--acl") if args.acl is not None else api.AccessTags()
    preparer = api.door_preparer(config, acl=acl, acl_map=api.load_acl_map(args.acl_map) if args.acl_map else {})
    single = len(args.paths) == 1 and Path(args.paths[0]).is_file()
    summary, failed = [], 0
    # With --json the worker sends each record as its output line (cli/record_lines.py).
    encode = None
    if args.json:
        from chunkwise.cli.record_lines import record_line, write_lines

        encode = record_line
    for item in api.prepare_paths(preparer, args.paths, max_bytes=args.max_bytes, include=args.include,  # each file
                                  exclude=args.exclude, limits=_limits(args), encode=encode):  # in a contained worker
        if isinstance(item, api.PrepareFailure):  # one bad file is reported; the rest still run
            failed += not item.skipped
            print(f"{'skipped' if item.skipped else 'error'}: {safe(item.error)}", file=sys.stderr)
            summary.append((item.task.rel, None, None, None, None, "skipped" if item.skipped else "error"))
            continue
        for problem in item.problems:  # its access could not be read: every chunk is held for review
            print(f"warning: {safe(problem)}", file=sys.stderr)
        if args.json:
            write_lines(item.records)  # one pass: lines are read one at a time (pipeline/pack.py)
            continue
        sizes, held, rows = [], 0, []
        for r in item.records:  # one pass: records are decoded one at a time (pipeline/pack.py)
            sizes.append(r["size"])
            held += r["quality"] != "ready"
            if single:
                rows.append((r["chunk_index"], f"{r['start_char']}-{r['end_char']}", r["page"] or "", r["size"],
                             "yes" if r["quality"] != "ready" else "", ",".join(r["acl"]),
                             " > ".join(r["heading_path"])[-40:], preview(r["text"], 48)))
        if single and not args.json:
            print(table(["#", "chars", "page", "size", "review", "acl", "heading path", "text"], rows, right=(0, 3)))
        summary.append((item.task.rel, len(sizes), round(sum(sizes) / len(sizes), 1) if sizes else 0,
                        max(sizes, default=0), held, "ok"))
    if not args.json and not single:
        print(f"strategy={config.strategy} size={config.size} {config.unit} overlap={config.overlap} "
              f"header={config.header} (config {config.fingerprint()})")
        print(table(["file", "chunks", "mean size", "max size", "review", "status"], summary, right=(1, 2, 3, 4)))
        ok = [r for r in summary if r[1] is not None]
        skipped = sum(1 for r in summary if r[5] == "skipped")
        print(f"{len(ok)} files, {sum(r[1] for r in ok)} chunks, largest {max((r[3] for r in ok), default=0)} "
              f"<= cap {config.size}; {skipped} skipped, {failed} failed")
    return 1 if failed else 0


def _ocr_cell(r) -> str:
    """"needed" for pages left without text; "N @ C%" for pages read by OCR at mean confidence C."""
    done = f"{r.ocr_pages} @ {r.ocr_confidence:.0f}%" if r.ocr_pages else ""
    return ", ".join(filter(None, ["needed" if r.needs_ocr else "", done]))


def cmd_audit(args: argparse.Namespace) -> int:
    existing(args.paths)
    rows = list(api.audit(args.paths, max_bytes=args.max_bytes, include=args.include, exclude=args.exclude,
                          limits=_limits(args)))
    failed = sum(r.status == "error" for r in rows)
    if args.json:
        emit_jsonl(r.to_dict() for r in rows)
        return 1 if failed else 0
    body = []
    for r in rows:
        note = r.error or "; ".join(r.warnings)
        body.append((r.source, r.status, r.format, r.pages or "", r.empty_pages or "",
                     r.chars_per_page if r.chars_per_page is not None else "", r.cid_artifacts or "",
                     r.replacement_chars or "", r.language, len(r.repeated_lines) or "", r.tables or "",
                     _ocr_cell(r), preview(note, 60)))
    print(table(["file", "status", "format", "pages", "empty", "chars/page", "(cid:", "U+FFFD", "lang",
                 "headers", "tables", "ocr", "notes"], body, right=(3, 4, 5, 6, 7, 9, 10)))
    counts = {s: sum(r.status == s for r in rows) for s in ("ok", "warn", "skipped", "error")}
    print(f"{len(rows)} files: {counts['ok']} ok, {counts['warn']} with warnings, {counts['skipped']} skipped, "
          f"{counts['error']} failed")
    return 1 if failed else 0


def _embedder(args: argparse.Namespace, settings: dict):
    """--embedder, or the config file's; with --model (openai:URL only) the embedder is built here."""
    name = args.embedder or settings.get("embedder", "auto")
    return api.make_embedder(name, model=args.model) if args.model else name


def cmd_ingest(args: argparse.Namespace) -> int:
    conf = api.load_config(args.config)
    # Only what the user said: the store's recorded settings fill in the rest (a new store: defaults).
    options = {**conf.chunking, **{k: v for k, v in vars(args).items() if k in _CHUNK_FLAGS and v is not None}}
    settings = conf.ingest
    acl = api.AccessTags.parse(args.acl, "--acl") if args.acl is not None else settings.get("acl", api.AccessTags())
    acl_map = api.load_acl_map(args.acl_map) if args.acl_map else settings.get("acl_map", {})
    limits = _limits(args)
    name = args.executor or settings.get("executor", "local")
    executor = api.make_executor(name, workers=args.workers or (api.default_workers() if name == "local" else None),
                                 limits=limits, ray_address=args.ray_address or settings.get("ray_address"),
                                 ray_gpus=args.ray_gpus if args.ray_gpus is not None else settings.get("ray_gpus", 0.0),
                                 ray_embedders=args.ray_embedders or settings.get("ray_embedders", 1))
    show = args.progress if args.progress is not None else sys.stderr.isatty() and not args.json
    with IngestBar(enabled=show) as bar:  # for people: never on pipes or with --json unless asked
        stats = api.ingest(args.paths, args.db, chunk_options=options, embedder=_embedder(args, settings),
                           embed_mode=args.embed_mode or settings.get("embed_mode", "auto"), acl=acl, acl_map=acl_map,
                           dry_run=args.dry_run, reconfigure=args.reconfigure, timeout=args.wait,
                           include=args.include, exclude=args.exclude, strict=args.strict,
                           warn=lambda message: bar.write(f"warning: {safe(message)}"), progress=bar,
                           executor=executor)
    if not stats.in_store and not stats.errors and not args.dry_run:  # a wrong or empty folder is not success in silence
        print(f"warning: {safe(', '.join(map(str, args.paths)))}: no file chunkwise reads; the store holds no chunks",
              file=sys.stderr)
    if args.json:
        emit_json(stats.to_dict())
    else:
        label = "would change (dry run)" if args.dry_run else "ingested into " + str(args.db)
        rows = [("added", stats.added), ("removed", stats.removed), ("embedded", stats.embedded),
                ("metadata updated", stats.metadata_updated), ("unchanged", stats.unchanged),
                ("skipped documents", stats.skipped_documents), ("in store", stats.in_store),
                ("errors", len(stats.errors))]
        print(label)
        print(table(["", "chunks"], rows, right=(1,)))
        if stats.skipped:
            kinds = ", ".join(f"{n} {kind}" for kind, n in sorted(stats.skipped.items(), key=lambda kv: (-kv[1], kv[0])))
            print(f"not read: {safe(kinds)}" + ("" if args.strict else " (--strict makes these errors)"))
        for err in stats.errors:
            print(f"error: {safe(about(err['path'], err['error']))}", file=sys.stderr)
    return 1 if stats.errors else 0


def cmd_check(args: argparse.Namespace) -> int:
    report = api.check(args.db, strict=args.strict)
    if args.json:
        emit_json(report.to_dict())
    else:
        rows = [("chunks", report.chunks), ("ready", report.ready), ("servable", report.servable),
                ("review", report.review),
                ("  without access tags", report.missing_acl),
                *((f"  {k}", v) for k, v in sorted(report.review_reasons.items()) if k != "missing_acl"),
                ("duplicate ids", report.duplicate_ids), ("empty text", report.empty_text),
                ("over the cap", report.oversized), ("embedding models", ", ".join(report.embed_models) or "-"),
                ("chunks without a vector", report.missing_vectors), ("unused vectors", report.orphan_vectors)]
        print(table(["check", "value"], rows, right=(1,)))
        for warning in report.warnings:
            print(f"warning: {safe(warning)}", file=sys.stderr)
        print(("gate: PASS" + (" with warnings (see above; --strict fails on them)" if report.warnings else ""))
              if report.ok else "gate: FAIL - " + safe("; ".join(report.failures)))
    return 0 if report.ok else 1


def cmd_manifest(args: argparse.Namespace) -> int:
    m = api.manifest(args.db)
    if args.json:
        emit_json(m)
        return 0
    print(f"chunkwise {m['tool_version']}  config {m['fingerprint']}  {m['tokenizer']}  embed {m['embed_model']}")
    print(table(["document", "version", "source version", "chunks", "routes", "ingested"],
                [(d["doc_id"], d["version"], d["source_version"][:16], d["chunks"], counted(d["routes"]),
                  d["ingested_at"]) for d in m["documents"]], right=(3,)))
    for x in m["version_links"]:
        print(f"{safe(x['newer'])} supersedes {safe(x['older'])} ({x['how']}"
              + (f", similarity {x['similarity']:.2f})" if x["how"] == "detected" else ")"))
    print(f"{len(m['documents'])} documents, {m['chunks']} chunks, {len(m['version_links'])} version links"
          + (f"; routes: {safe(counted(m['routes']))}" if m["routes"] else ""))
    return 0


def cmd_plan(args: argparse.Namespace) -> int:
    p = api.plan(args.size, args.overlap, args.doc_words, args.evidence)
    if args.json:
        emit_json(p.to_dict())
        return 0
    rows = [
        ("chunk size S / overlap O", f"{p.size} / {p.overlap}"),
        ("document length W", f"{p.doc_words:,}"),
        ("chunks  ceil((W-S)/(S-O))+1", f"{p.chunks:,}"),
        ("stored units  W+(n-1)O", f"{p.stored_units:,}"),
        ("index inflation (this W)", f"{p.inflation:.4f}"),
        ("inflation limit  S/(S-O)", f"{p.limit_inflation:.4f}"),
        ("evidence always whole up to  O+1", f"{p.guaranteed_evidence}"),
        (f"straddle probability, L={p.evidence}", f"{p.straddle_probability:.3f}"),
    ]
    print(table(["quantity", "value"], rows, right=(1,)))
    return 0


def cmd_search(args: argparse.Namespace) -> int:
    if api.store_missing(args.db):
        raise ConfigError(f"--db {args.db}: no such store; create it with: chunkwise ingest PATH --db {args.db}")
    options = {} if args.embedder is None else {"embedder": args.embedder}
    options.update(ranking_options(args, api.load_config(args.config).search))
    options.update(rerank_options(args))
    with api.Retriever(args.db, bm25=args.bm25, generator_tokenizer=args.generator_tokenizer, **options) as r:
        result = r.search(args.query, args.groups, k=args.k, mode=args.mode, expand=args.expand,
                          budget=args.budget, overfetch=args.overfetch, passage_budget=args.passage_budget,
                          versions="all" if args.all_versions else args.versions, granularity=args.granularity,
                          per=args.per)
    toy = api.toy_store_note(r.model, args.db)
    if toy:
        print(f"note: {safe(toy)}", file=sys.stderr)
    if args.json:
        emit_json(result.to_dict())
        return 0
    print_search(result.to_dict(), r.tokenizer_name, use_color(args.color, sys.stdout))
    for o in result.omitted:
        print(f"\nnot sent ({o.reason}): {safe(o.detail)}", file=sys.stderr)
    if not result.passages:
        print("no permitted passage matches", file=sys.stderr)
    return 0


def build_parser(parser_class=argparse.ArgumentParser) -> argparse.ArgumentParser:
    """The whole command line (``docs/cli.md`` is generated from it: scripts/gen_cli_reference.py)."""
    parser = parser_class(prog="chunkwise", description="Chunk documents for RAG with exact offsets "
                                     "and hard size caps.")
    parser.add_argument("--version", action="version", version=f"chunkwise {__import__('chunkwise').__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("chunk", help="chunk files or folders and print chunks (one file) or a summary")
    p.add_argument("paths", nargs="+", metavar="PATH", help="files (Markdown, text, HTML, PDF, DOCX), folders, globs")
    _chunk_options(p)
    p.add_argument("--max-bytes", type=int, default=50_000_000, help="refuse files larger than this")
    p.add_argument("--acl", help="default access tags, comma-separated (as ingest takes them)")
    p.add_argument("--acl-map", help='JSON file {"glob": ["tag", ...]}, globs relative to the root')
    p.add_argument("--json", action="store_true",
                   help="JSON Lines: the records ingest would store, one per line (ids, access tags, offsets)")
    _file_limits(p)
    add_path_filters(p)
    p.set_defaults(func=cmd_chunk)
    add_extract_parser(sub)

    p = sub.add_parser("ingest", help="chunk, embed and index files into a SQLite store (idempotent)")
    p.add_argument("paths", nargs="+", metavar="PATH", help="files, folders, globs")
    p.add_argument("--db", required=True, help="SQLite file (created if missing) or postgresql://... URL (the pg extra)")
    p.add_argument("--config", help="chunkwise.toml with [chunking] and [ingest] tables")
    _chunk_options(p, stored=True)
    p.add_argument("--embedder", help="none, hashing, hashing-256, minilm, minilm-onnx, minilm-onnx-int8, openai:URL "
                                      f"(default: the store's; new: {api.DEFAULT_EMBEDDER}, or none when it cannot load)")
    p.add_argument("--model", default=None,
                   help="with --embedder openai:URL: the model the server serves (key from $CHUNKWISE_EMBED_API_KEY)")
    p.add_argument("--embed-mode", choices=("plain", "late"), default=None,
                   help="plain: each chunk embedded alone (default); late: late chunking, chunk vectors pooled "
                        "from one transformer pass over its document window (needs --embedder minilm)")
    p.add_argument("--acl", help="default access tags, comma-separated")
    p.add_argument("--acl-map", help='JSON file {"glob": ["tag", ...]}, globs relative to the root')
    p.add_argument("--dry-run", action="store_true", help="print the diff without writing")
    p.add_argument("--strict", action="store_true",
                   help="a file that is not read (a type chunkwise does not read, an empty file) is an error "
                        "(exit 1); without it such files are counted by type in the summary")
    p.add_argument("--reconfigure", action="store_true",
                   help="allow other chunk settings or another embedder than the store was built with (re-chunks "
                        "and re-embeds everything); without it such a run is refused")
    p.add_argument("--wait", type=float, default=60.0,
                   help="seconds to wait for another ingest's write lock before giving up (default 60)")
    p.add_argument("--json", action="store_true", help="one JSON document with the run statistics")
    p.add_argument("--workers", type=_positive(int), default=None,
                   help="processes preparing files (extract, chunk), each file under the limits below; "
                        "files are never parsed in this process (default: the CPU count; at most 4 per CPU)")
    _file_limits(p)
    p.add_argument("--executor", choices=api.EXECUTORS, default=None,
                   help="where files are prepared and embedded: local (worker processes here; default) or ray "
                        "(Ray actors prepare and embed; writes from here, or on the cluster for PostgreSQL; the ray extra)")
    p.add_argument("--ray-address", metavar="ADDR", default=None,
                   help="with --executor ray: a running cluster (HOST:PORT or ray://HOST:PORT); default: start a "
                        "local one for the run")
    p.add_argument("--ray-gpus", type=float, default=None, metavar="N",
                   help="with --executor ray: GPUs per embed actor (default 0: embed on CPUs)")
    p.add_argument("--ray-embedders", type=_positive(int), default=None, metavar="N",
                   help="with --executor ray: embed actors holding the model (default 1); --workers sets the "
                        "prepare actors (default: the cluster's CPUs left over)")
    p.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                   help="progress bar on stderr: files prepared, chunks embedded, documents written "
                        "(default: only when stderr is a terminal and without --json)")
    add_path_filters(p)
    p.set_defaults(func=cmd_ingest)

    p = sub.add_parser("search", help="search a store (BM25, dense or hybrid) with the caller's access groups")
    p.add_argument("query", help="the question or keywords")
    p.add_argument("--db", required=True, help="SQLite file or postgresql://... URL written by chunkwise ingest")
    p.add_argument("--groups", required=True, help="the caller's access groups, comma-separated (filter before ranking)")
    p.add_argument("--k", type=int, default=5, help="passages (or documents, with --per document) to return (default 5)")
    p.add_argument("--per", default="passage", choices=api.PER,
                   help="what --k counts: passages (default) or distinct documents (results grouped by document, "
                        "each document's best passage first)")
    p.add_argument("--mode", default="auto", choices=("auto", "bm25", "dense", "hybrid"),
                   help="ranking (default auto: hybrid when the store has vectors, else bm25)")
    p.add_argument("--granularity", default="passage", choices=("passage", "page"),
                   help="what one result is: a passage (default) or a page of a paged document (PDF), cut "
                        "around its best chunk under the budget; with --expand neighbours, the pages either side too")
    p.add_argument("--expand", default="none", choices=("none", "neighbours", "parent", "page", "pages"),
                   help="grow hits to their neighbours or enclosing section (checked: version, access, budget)")
    p.add_argument("--budget", type=int, default=None, help="hard cap on context tokens (generator tokenizer)")
    p.add_argument("--generator-tokenizer", default=None,
                   help="tokenizer the budget counts in (default cl100k_base when tiktoken is installed, else minilm)")
    p.add_argument("--overfetch", type=int, default=3, help="fetch k x this many hits before merging (default 3)")
    p.add_argument("--passage-budget", type=_passage_budget, default=api.DEFAULT_PASSAGE_BUDGET, help=_PASSAGE_HELP)
    p.add_argument("--versions", default="auto", choices=("auto", "latest", "all"),
                   help="auto (default): the latest version you may see, unless the query names a version, a "
                        "year or an earlier version; latest: always the latest; all: every version")
    p.add_argument("--all-versions", action="store_true", help=argparse.SUPPRESS)  # old name of --versions all
    p.add_argument("--bm25", default="fts5", choices=("fts5", "sparse"), help="BM25 engine (default fts5)")
    add_ranking_flags(p)
    p.add_argument("--config", help="chunkwise.toml ([search] field_weights, fusion)")
    p.add_argument("--embedder", default=None, help="query embedder (default: the one the store was built with)")
    p.add_argument("--color", default="auto", choices=("auto", "always", "never"),
                   help="mark the query's words in bold (auto: on a terminal unless NO_COLOR is set)")
    p.add_argument("--json", action="store_true", help="one JSON document")
    p.set_defaults(func=cmd_search)

    p = sub.add_parser("eval", help="score chunking configs on a golden set (recall, straddle, IoU, cost); HTML report")
    p.add_argument("--golden", required=True, help="golden questions, JSON Lines (see DESIGN.md)")
    p.add_argument("--docs", required=True, help="the folder the golden set's \"doc\" paths are relative to")
    p.add_argument("--config", help="chunkwise.toml ([chunking], [ingest] embedder, [eval] k/budget/mode/expand)")
    p.add_argument("--grid", help="TOML/JSON grid: strategy, size, overlap, header, unit, mode, expand (lists)")
    p.add_argument("--strategy", choices=STRATEGIES, default=None, help="chunking strategy of the one config run "
                   "without --grid (default auto)")
    p.add_argument("--size", type=int, default=None, help="hard cap per chunk, in --unit")
    p.add_argument("--overlap", type=int, default=None, help="overlap in units")
    p.add_argument("--unit", choices=UNITS, default=None, help="what --size counts")
    p.add_argument("--tokenizer", default=None, help="'minilm', 'cl100k_base', or a path to a tokenizer.json")
    p.add_argument("--header", choices=HEADERS, default=None, help="contextual header in the embedded text")
    p.add_argument("--mode", choices=("bm25", "dense", "hybrid"), default=None, help="retrieval (default hybrid)")
    p.add_argument("--expand", choices=("none", "neighbours", "parent", "page", "pages"), default=None,
                   help="grow hits to their neighbours, enclosing section or page (default none)")
    p.add_argument("--granularity", choices=("passage", "page"), default="passage",
                   help="what one result is: a passage (default) or a page; golden questions with \"pages\" "
                        "are scored by page either way")
    p.add_argument("--embedder", default=None,
                   help=f"embedder for the stored and the query vectors (default {api.DEFAULT_EMBEDDER}): "
                        "minilm-onnx, minilm, hashing, none")
    p.add_argument("--k", type=int, default=None, help="passages per question (default 10)")
    p.add_argument("--budget", type=int, default=None, help="context tokens per question, same for every config (1500)")
    p.add_argument("--generator-tokenizer", default=None, help="tokenizer the budget counts in")
    p.add_argument("--overfetch", type=int, default=None, help="fetch k x this many hits before merging (default 3)")
    p.add_argument("--passage-budget", type=_passage_budget, default=argparse.SUPPRESS, help=_PASSAGE_HELP)
    add_ranking_flags(p)
    p.add_argument("--min-recall", type=float, default=None, help="exit 1 when a config's recall@gate-k is below this")
    p.add_argument("--gate-k", type=int, default=5, help="k of the recall the gate checks (default 5)")
    p.add_argument("--split", choices=("all", "tune", "test"), default="all",
                   help="golden questions to use: a hash of each id puts half in tune, half in test; choose a "
                        "config on tune, gate it on test (default all)")
    p.add_argument("--out", help="write a self-contained HTML report here")
    p.add_argument("--json", action="store_true", help="one JSON document")
    p.set_defaults(func=partial(cmd_eval, defaults=_DEFAULTS, chunk_flags=_CHUNK_FLAGS))

    from chunkwise.cli.bench import add_bench_parser

    add_bench_parser(sub)

    from chunkwise.cli.serve import add_serve_parser

    add_serve_parser(sub)

    from chunkwise.cli.pg import add_pg_parser

    add_pg_parser(sub)

    from chunkwise.cli.mcp import add_mcp_parser

    add_mcp_parser(sub)

    from chunkwise.cli.secure import add_secure_parser

    add_secure_parser(sub)

    from chunkwise.cli.review import add_review_parser

    add_review_parser(sub)

    p = sub.add_parser("check", help="quality gate over a store; exit 1 when it fails")
    p.add_argument("--db", required=True, help="SQLite file or postgresql://... URL written by chunkwise ingest")
    p.add_argument("--strict", action="store_true", help="also fail when some chunks can never be served")
    p.add_argument("--json", action="store_true", help="one JSON document")
    p.set_defaults(func=cmd_check)

    p = sub.add_parser("manifest", help="config, tokenizer, model, tool version and per-document versions")
    p.add_argument("--db", required=True, help="SQLite file or postgresql://... URL written by chunkwise ingest")
    p.add_argument("--json", action="store_true", help="one JSON document")
    p.set_defaults(func=cmd_manifest)

    p = sub.add_parser("audit", help="extraction audit: pages, empty pages, garbage, language, OCR needs")
    p.add_argument("paths", nargs="+", metavar="PATH", help="files, folders, globs")
    p.add_argument("--max-bytes", type=int, default=50_000_000, help="refuse files larger than this")
    p.add_argument("--json", action="store_true", help="JSON Lines, one row per file")
    _file_limits(p)
    add_path_filters(p)
    p.set_defaults(func=cmd_audit)

    p = sub.add_parser("plan", help="chunk count, inflation and straddle risk of a size/overlap choice")
    p.add_argument("--size", type=int, required=True, help="chunk size S in units")
    p.add_argument("--overlap", type=int, required=True, help="overlap O in units")
    p.add_argument("--doc-words", type=int, default=100_000, help="document length W (default 100000)")
    p.add_argument("--evidence", type=int, default=26, help="evidence length L (default 26)")
    p.add_argument("--json", action="store_true", help="one JSON document")
    p.set_defaults(func=cmd_plan)
    return parser


class _JsonErrorParser(argparse.ArgumentParser):
    """With ``--json`` on the command line a usage error is one JSON object too (exit 2)."""

    def error(self, message: str):
        emit_json({"error": f"{self.prog}: {message}", "exit_code": 2})
        sys.exit(2)


class _OneLineErrorParser(argparse.ArgumentParser):
    """A usage error is one line on stderr that says where the help is (exit 2), not argparse's usage
    block; what the caller typed is echoed through ``safe`` (a flag's value can carry terminal escapes)."""

    def error(self, message: str):
        print(f"{self.prog}: error: {safe(message)} (see: {self.prog} --help)", file=sys.stderr)
        sys.exit(2)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    wants_json = "--json" in argv[: argv.index("--")] if "--" in argv else "--json" in argv
    parser = build_parser(_JsonErrorParser if wants_json else _OneLineErrorParser)
    args = parser.parse_args(argv)
    try:
        try:
            return args.func(args)
        except Exception as exc:  # noqa: BLE001 — only a server store's broken connection is turned into a message
            from chunkwise.store import server_lost

            lost = server_lost(exc)
            if lost is None:
                raise
            raise lost from None
    except ChunkwiseError as exc:
        if getattr(args, "json", False):  # machines read stdout: the error is the one JSON document
            emit_json({"error": str(exc), "exit_code": exc.exit_code})
        else:
            print(f"chunkwise: error: {safe(exc)}", file=sys.stderr)
        return exc.exit_code
    except BrokenPipeError:  # `chunkwise chunk ... | head`
        return 0
    except OSError as exc:  # a full disk (or a file size limit) while writing a report or a temporary file
        if exc.errno not in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG):
            raise
        print(f"chunkwise: error: cannot write {safe(exc.filename or 'a file')}: {exc.strerror}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
