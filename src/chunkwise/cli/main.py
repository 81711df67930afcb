"""``chunkwise`` entry point. Errors become one clean line and an exit code (2: usage/config, 1: run)."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from chunkwise import api
from chunkwise.cli.output import emit_json, emit_jsonl, preview, table
from chunkwise.config import BACKENDS, HEADERS, STRATEGIES, UNITS, ChunkConfig
from chunkwise.errors import ChunkwiseError

def _chunk_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--strategy", default="auto", choices=STRATEGIES, help="chunking strategy (default: auto)")
    p.add_argument("--size", type=int, default=256, help="hard cap per chunk, in --unit (default: 256)")
    p.add_argument("--overlap", type=int, default=0, help="overlap in units (sentences for sentence_window)")
    p.add_argument("--unit", default="tokens", choices=UNITS, help="what --size counts (default: tokens)")
    p.add_argument("--tokenizer", default="minilm",
                   help="'minilm' (default), 'cl100k_base', or a path to a tokenizer.json")
    p.add_argument("--backend", default="auto", choices=BACKENDS, help="tokenizer implementation")
    p.add_argument("--header", default="none", choices=HEADERS,
                   help="contextual header in the embedded text, counted in the cap")
    p.add_argument("--window", type=int, default=3, help="sentences per window (sentence_window)")
    p.add_argument("--special-tokens", action="store_true", help="count [CLS]/[SEP] in every chunk")


def _config(args: argparse.Namespace) -> ChunkConfig:
    return ChunkConfig(
        strategy=args.strategy, size=args.size, overlap=args.overlap, unit=args.unit,
        tokenizer=args.tokenizer, backend=args.backend, header=args.header, window=args.window,
        special_tokens=args.special_tokens,
    )


def cmd_chunk(args: argparse.Namespace) -> int:
    config = _config(args)
    chunker = api.make_chunker(config)
    single = len(args.paths) == 1 and Path(args.paths[0]).is_file()
    summary, failed = [], 0
    for item in api.iter_documents(args.paths, max_bytes=args.max_bytes):
        if isinstance(item, api.SourceFailure):  # one bad file is reported; the rest still run
            failed += not item.skipped
            print(f"{'skipped' if item.skipped else 'error'}: {item.error}", file=sys.stderr)
            summary.append((item.source, None, None, None, None, "skipped" if item.skipped else "error"))
            continue
        try:
            chunks = api.chunk_document(item, api.for_document(chunker, item))
        except ChunkwiseError as exc:
            failed += 1
            print(f"error: {item.source}: {exc}", file=sys.stderr)
            summary.append((item.source, None, None, None, None, "error"))
            continue
        if args.json:
            emit_jsonl({"source": item.source, **c.to_dict()} for c in chunks)
        elif single:
            rows = [(c.index, f"{c.start_char}-{c.end_char}", c.page or "", c.size, "yes" if c.needs_review else "",
                     " > ".join(c.heading_path)[-40:], preview(c.text, 56)) for c in chunks]
            print(table(["#", "chars", "page", "size", "review", "heading path", "text"], rows, right=(0, 3)))
        sizes = [c.size for c in chunks]
        summary.append((item.source, len(chunks), round(sum(sizes) / len(sizes), 1) if sizes else 0,
                        max(sizes, default=0), sum(c.needs_review for c in chunks), "ok"))
    if not args.json and not single:
        print(f"strategy={config.strategy} size={config.size} {config.unit} overlap={config.overlap} "
              f"header={config.header} (config {config.fingerprint()})")
        print(table(["file", "chunks", "mean size", "max size", "review", "status"], summary, right=(1, 2, 3, 4)))
        ok = [r for r in summary if r[1] is not None]
        skipped = sum(1 for r in summary if r[5] == "skipped")
        print(f"{len(ok)} files, {sum(r[1] for r in ok)} chunks, largest {max((r[3] for r in ok), default=0)} "
              f"<= cap {config.size}; {skipped} skipped, {failed} failed")
    return 1 if failed else 0


def cmd_audit(args: argparse.Namespace) -> int:
    rows = list(api.audit(args.paths, max_bytes=args.max_bytes))
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
                     "yes" if r.needs_ocr else "", preview(note, 60)))
    print(table(["file", "status", "format", "pages", "empty", "chars/page", "(cid:", "U+FFFD", "lang",
                 "headers", "tables", "ocr", "notes"], body, right=(3, 4, 5, 6, 7, 9, 10)))
    counts = {s: sum(r.status == s for r in rows) for s in ("ok", "warn", "skipped", "error")}
    print(f"{len(rows)} files: {counts['ok']} ok, {counts['warn']} with warnings, {counts['skipped']} skipped, "
          f"{counts['error']} failed")
    return 1 if failed else 0


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


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="chunkwise", description="Chunk documents for RAG with exact offsets "
                                     "and hard size caps.")
    parser.add_argument("--version", action="version", version=f"chunkwise {__import__('chunkwise').__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("chunk", help="chunk files or folders and print chunks (one file) or a summary")
    p.add_argument("paths", nargs="+", metavar="PATH", help="files (Markdown, text, HTML, PDF, DOCX), folders, globs")
    _chunk_options(p)
    p.add_argument("--max-bytes", type=int, default=50_000_000, help="refuse files larger than this")
    p.add_argument("--json", action="store_true", help="JSON Lines, one chunk per line")
    p.set_defaults(func=cmd_chunk)

    p = sub.add_parser("audit", help="extraction audit: pages, empty pages, garbage, language, OCR needs")
    p.add_argument("paths", nargs="+", metavar="PATH", help="files, folders, globs")
    p.add_argument("--max-bytes", type=int, default=50_000_000, help="refuse files larger than this")
    p.add_argument("--json", action="store_true", help="JSON Lines, one row per file")
    p.set_defaults(func=cmd_audit)

    p = sub.add_parser("plan", help="chunk count, inflation and straddle risk of a size/overlap choice")
    p.add_argument("--size", type=int, required=True, help="chunk size S in units")
    p.add_argument("--overlap", type=int, required=True, help="overlap O in units")
    p.add_argument("--doc-words", type=int, default=100_000, help="document length W (default 100000)")
    p.add_argument("--evidence", type=int, default=26, help="evidence length L (default 26)")
    p.add_argument("--json", action="store_true", help="one JSON document")
    p.set_defaults(func=cmd_plan)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except ChunkwiseError as exc:
        print(f"chunkwise: error: {exc}", file=sys.stderr)
        return exc.exit_code
    except BrokenPipeError:  # `chunkwise chunk ... | head`
        return 0


if __name__ == "__main__":
    sys.exit(main())
