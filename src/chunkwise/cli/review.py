"""``chunkwise review``: the chunks in review (never served) with file, offsets, reasons and text,
and ``--release`` for the ones a person has looked at (``chunkwise.review``)."""
from __future__ import annotations

import argparse
import sys

from chunkwise import api
from chunkwise.cli.output import emit_json, preview, safe, table


def cmd_review(args: argparse.Namespace) -> int:
    if api.store_missing(args.db):
        raise api.ConfigError(f"--db {args.db}: no such store; create it with: chunkwise ingest PATH --db {args.db}")
    if args.release:
        done = api.release(args.db, args.release)
        if args.json:
            emit_json(done.to_dict())
        else:
            print(f"released {len(done.released)} chunk(s) from review: now served to readers of their tags")
            for cid in done.released:
                print(f"  {cid}")
        return 0
    items = api.review_queue(args.db, args.reason or ())
    if args.json:
        emit_json({"chunks": [i.to_dict() for i in items], "count": len(items),
                   "access": sum(i.access for i in items)})
        return 0
    if not items:
        print("no chunk in review" + (f" with reason {', '.join(args.reason)}" if args.reason else ""))
        return 0
    rows = [(i.chunk_id[:12], i.source_uri or i.doc_id, f"{i.start_char}-{i.end_char}",
             ", ".join(i.reasons) + (" (access)" if i.access else ""), preview(i.text, args.width))
            for i in items]
    print(table(["chunk", "file", "chars", "reasons", "text"], rows))
    access = sum(i.access for i in items)
    print(f"{len(items)} chunk(s) in review; {len(items) - access} can be released with "
          f"`chunkwise review --db {safe(args.db)} --release ID ...`"
          + (f"; {access} in access review (no readable tags): fix their tags and re-ingest" if access else ""))
    return 0


def add_review_parser(sub) -> None:
    p = sub.add_parser("review", help="list the chunks in review (never served) and release chosen ones")
    p.add_argument("--db", required=True, help="SQLite file or postgresql://... URL written by chunkwise ingest")
    p.add_argument("--reason", action="append", default=None, metavar="REASON",
                   help="list only chunks with this reason (repeatable), e.g. char_split")
    p.add_argument("--release", nargs="+", metavar="ID",
                   help="release these chunks (ids as listed, at least 8 characters): served from now on, and "
                        "after re-ingests while their text is unchanged; access review is never released")
    p.add_argument("--width", type=int, default=60, help="characters of text shown per chunk (default 60)")
    p.add_argument("--json", action="store_true", help="one JSON document (each chunk's whole text)")
    p.set_defaults(func=cmd_review)
