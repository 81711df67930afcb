"""``chunkwise serve``: the HTTP service over one store (its own module: the CLI only parses flags)."""
from __future__ import annotations

import argparse


def add_serve_parser(sub) -> None:
    p = sub.add_parser("serve", help="HTTP service over a store: /search, /documents, /v1/embeddings, a web page",
                       description="Serve one store over HTTP: the embedder loads once and the Retriever stays "
                                   "open. Choose exactly one way the caller's groups reach the server.")
    p.add_argument("--db", required=True, help="SQLite file or postgresql://... URL written by chunkwise ingest")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=8080, help="port (default 8080; 0 picks a free one)")
    p.add_argument("--trust-groups-header", action="store_true",
                   help="take the caller's groups from X-Chunkwise-Groups: a,b (set by a gateway in front)")
    p.add_argument("--tokens", metavar="FILE", default=None,
                   help='bearer tokens mapped to groups: JSON {"TOKEN": ["group", ...], "sha256:HEX": [...]}')
    p.add_argument("--insecure-groups-in-body", action="store_true",
                   help='callers name their groups ("groups" in the JSON body): loopback only, or with --tokens '
                        '(then only token holders may, on any address)')
    p.add_argument("--allowed-host", action="append", default=[], metavar="NAME",
                   help="another Host name clients reach the server by (repeatable); by default only the loopback "
                        "names and the --host address are answered (DNS-rebinding defence)")
    p.add_argument("--model-alias", action="append", default=[], metavar="NAME",
                   help="another name /v1/embeddings answers to with the store's model (repeatable), for "
                        "clients that only send OpenAI's names, e.g. --model-alias text-embedding-ada-002")
    p.add_argument("--search-workers", type=int, default=None, metavar="N",
                   help="searches run at once, each on its own store connection (default: CPUs, 2 to 4)")
    p.add_argument("--query-timeout", type=float, default=None, metavar="SECONDS",
                   help="a search running longer is stopped and answered 503 (default 10)")
    p.add_argument("--max-connections", type=int, default=None, metavar="N",
                   help="open connections at most; beyond it the oldest one that has not sent a request is closed "
                        "(default 4096; every connection must send its request head within 10 s)")
    p.add_argument("--read-timeout", type=float, default=None, metavar="SECONDS",
                   help="a connection must send its request head within this (default 10) and its body within 3x "
                        "this; slower ones are closed (408 for a body)")
    from chunkwise.cli.ranking import add_engine_flags

    add_engine_flags(p)
    p.add_argument("--log-level", default="info", choices=("critical", "error", "warning", "info", "debug"),
                   help="uvicorn's log level (default info: one access line per request)")
    p.add_argument("--json", action="store_true",
                   help='when ready, print one JSON line {"url", "store", "model", "dim", "auth"} on stdout (for scripts)')
    p.set_defaults(func=cmd_serve)


def cmd_serve(args: argparse.Namespace) -> int:
    from chunkwise import api
    from chunkwise.cli.ranking import ranking_options, rerank_options
    from chunkwise.serve.start import run

    ranking = {**ranking_options(args, api.load_config(args.config).search), **rerank_options(args)}
    return run(args.db, args.host, args.port, trust_groups_header=args.trust_groups_header, tokens=args.tokens,
               insecure_groups_in_body=args.insecure_groups_in_body, bm25=args.bm25,
               generator_tokenizer=args.generator_tokenizer, log_level=args.log_level, ready_json=args.json,
               ranking=ranking, model_aliases=tuple(args.model_alias), allowed_hosts=tuple(args.allowed_host),
               workers=args.search_workers, query_seconds=args.query_timeout, max_connections=args.max_connections,
               read_seconds=args.read_timeout)
