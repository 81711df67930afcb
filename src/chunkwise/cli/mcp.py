"""``chunkwise mcp``: the Model Context Protocol server over one store (the CLI only parses flags)."""
from __future__ import annotations

import argparse


def add_mcp_parser(sub) -> None:
    p = sub.add_parser("mcp", help="MCP server over a store: tools search and fetch, documents as resources",
                       description="Serve one store to MCP clients (assistants, IDEs) over stdio or streamable HTTP. "
                                   "Every answer is limited to the caller's groups, which come from --groups (the "
                                   "process that starts a stdio server is the caller) or, over HTTP, from each "
                                   "request's bearer token (--tokens) or a gateway's header; never from tool arguments.")
    p.add_argument("--db", required=True, help="SQLite file or postgresql://... URL written by chunkwise ingest")
    p.add_argument("--transport", default="stdio", choices=("stdio", "http"),
                   help="stdio (default: the client starts this process) or http (streamable HTTP at /mcp)")
    p.add_argument("--groups", default=None, metavar="G,..",
                   help="the caller's access groups (stdio; over http: every caller's, loopback only)")
    p.add_argument("--tokens", metavar="FILE", default=None,
                   help='http: bearer tokens mapped to groups, JSON {"TOKEN": ["group", ...], "sha256:HEX": [...]}')
    p.add_argument("--trust-groups-header", action="store_true",
                   help="http: take the caller's groups from X-Chunkwise-Groups: a,b (set by a gateway in front)")
    p.add_argument("--host", default="127.0.0.1", help="http: address to listen on (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=8765, help="http: port (default 8765; 0 picks a free one)")
    p.add_argument("--allowed-host", action="append", default=[], metavar="NAME",
                   help="http: another Host name clients reach the server by (repeatable); by default only the "
                        "loopback names and the --host address are answered (DNS-rebinding defence)")
    p.add_argument("--max-body", type=int, default=None, help="http: largest request body in bytes (default 1 MiB)")
    from chunkwise.cli.ranking import add_engine_flags

    add_engine_flags(p)
    p.add_argument("--log-level", default="warning", choices=("critical", "error", "warning", "info", "debug"),
                   help="http: uvicorn's log level (default warning)")
    p.add_argument("--json", action="store_true",
                   help='when ready, print one JSON line {"transport", "url", "store", "model", "auth"} on stderr')
    p.set_defaults(func=cmd_mcp)


def cmd_mcp(args: argparse.Namespace) -> int:
    from chunkwise import api
    from chunkwise.cli.ranking import ranking_options, rerank_options
    from chunkwise.mcp.start import MAX_BODY, run

    ranking = {**ranking_options(args, api.load_config(args.config).search), **rerank_options(args)}
    return run(args.db, args.transport, groups=args.groups, tokens=args.tokens,
               trust_groups_header=args.trust_groups_header, host=args.host, port=args.port, bm25=args.bm25,
               generator_tokenizer=args.generator_tokenizer, ranking=ranking, max_body=args.max_body or MAX_BODY,
               ready_json=args.json, log_level=args.log_level, allowed_hosts=tuple(args.allowed_host))
