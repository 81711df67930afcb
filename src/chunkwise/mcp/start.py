"""Start-up of ``chunkwise mcp``: check the groups policy, the store and the address before the
model loads, then serve over stdio or streamable HTTP.

Where the caller's groups come from: over stdio the process that starts the server is the caller,
so ``--groups`` names its groups; over HTTP each request's bearer token (``--tokens FILE``, the
file ``chunkwise serve`` takes) or a gateway's ``X-Chunkwise-Groups`` header
(``--trust-groups-header``) does, or ``--groups`` for every caller on a loopback address only.
"""
from __future__ import annotations

import importlib.util
import json
import sys

from chunkwise.access import caller_groups
from chunkwise.errors import ConfigError, DependencyError

INSTALL_HINT = "pip install 'chunkwise[mcp]'"
MAX_BODY = 1024 * 1024  # an MCP request is a query and a few options


def fixed_groups(groups: str | None) -> tuple[str, ...]:
    value = caller_groups(groups or "").tags  # the one tag grammar (what the facade's caller_groups returns)
    if not value:
        raise ConfigError("--groups: name at least one group (e.g. --groups sre,oncall); a caller without a "
                          "group may see nothing")
    return value


def group_source(transport: str, groups: str | None, tokens: str | None, trust_groups_header: bool, host: str):
    """(fixed groups or None, the HTTP GroupSource or None) the flags choose; anything else is a ConfigError."""
    chosen = [flag for flag, on in (("--groups", groups is not None), ("--tokens", tokens is not None),
                                    ("--trust-groups-header", trust_groups_header)) if on]
    if transport == "stdio":
        if chosen != ["--groups"]:
            raise ConfigError("over stdio the process that starts the server is the caller: name its groups with "
                              "--groups G,.. (--tokens and --trust-groups-header are for --transport http)")
        return fixed_groups(groups), None
    if len(chosen) != 1:
        raise ConfigError("say where callers' groups come from, once: --tokens FILE (bearer tokens), "
                          "--trust-groups-header (a gateway sets X-Chunkwise-Groups) or --groups G,.. (loopback only)")
    if groups is not None:
        from chunkwise.serve.start import is_loopback

        if not is_loopback(host):
            raise ConfigError(f"--groups gives every caller the same groups; over HTTP it listens only on loopback "
                              f"(--host 127.0.0.1), not {host}: use --tokens FILE")
        return fixed_groups(groups), None
    from chunkwise.serve.auth import TrustedHeader, load_tokens

    return None, (load_tokens(tokens) if tokens is not None else TrustedHeader())


def run(db: str, transport: str = "stdio", *, groups: str | None = None, tokens: str | None = None,
        trust_groups_header: bool = False, host: str = "127.0.0.1", port: int = 8765, bm25: str = "fts5",
        generator_tokenizer: str | None = None, ranking: dict | None = None, max_body: int = MAX_BODY,
        ready_json: bool = False, log_level: str = "warning", allowed_hosts: tuple[str, ...] = ()) -> int:
    needs = ["mcp"] + (["uvicorn"] if transport == "http" else [])
    missing = [m for m in needs if importlib.util.find_spec(m) is None]
    if missing:
        raise DependencyError(f"chunkwise mcp needs {' and '.join(missing)} (not installed); install with: {INSTALL_HINT}")
    if max_body < 1024:
        raise ConfigError(f"--max-body {max_body}: at least 1024 bytes")
    fixed, source = group_source(transport, groups, tokens, trust_groups_header, host)
    from chunkwise.serve.hosts import allowed_hosts as answered, is_loopback_name

    hosts = answered(host, allowed_hosts)
    if fixed is not None and transport == "http" and not all(is_loopback_name(h) for h in hosts):
        raise ConfigError("--groups gives every caller the same groups; over HTTP it answers only loopback names: "
                          "use --tokens FILE to serve --allowed-host names")
    from chunkwise.mcp.server import build_server
    from chunkwise.serve.engine import Engine

    engine = Engine(db, bm25=bm25, generator_tokenizer=generator_tokenizer, **(ranking or {}))
    try:
        server = build_server(engine, fixed)
        if transport == "stdio":
            engine.warm()
            _ready(ready_json, {"transport": "stdio", "store": str(db), "model": engine.model, "auth": "groups"})
            return _stdio(server)
        return _http(server, engine, source, host, port, max_body, ready_json, log_level, db, hosts)
    finally:
        engine.close()


def _ready(ready_json: bool, info: dict) -> None:
    """The ready line, on stderr: over stdio, stdout belongs to the protocol."""
    line = json.dumps(info) if ready_json else (f"chunkwise mcp: {info.get('url') or 'stdio'}  store {info['store']}  "
                                                f"model {info['model'] or 'none'}  groups from "
                                                + ("--groups" if info["auth"] == "groups" else info["auth"]))
    print(line, file=sys.stderr, flush=True)


def _stdio(server) -> int:
    import anyio
    from mcp.server.stdio import stdio_server

    async def main() -> None:
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())

    anyio.run(main)
    return 0


def _http(server, engine, source, host: str, port: int, max_body: int, ready_json: bool, log_level: str, db,
          hosts: frozenset[str]) -> int:
    import uvicorn

    from chunkwise.mcp.http import PATH, asgi_app
    from chunkwise.serve.start import listen

    sock = listen(host, port)
    engine.warm()
    app = asgi_app(server, source, host=host, max_body=max_body, hosts=hosts)
    shown = f"[{host}]" if ":" in host else host
    url = f"http://{shown}:{sock.getsockname()[1]}{PATH}"
    _ready(ready_json, {"transport": "http", "url": url, "store": str(db), "model": engine.model,
                        "auth": "groups" if source is None else source.name})
    config = uvicorn.Config(app, log_level=log_level, server_header=False, proxy_headers=False, lifespan="on",
                            timeout_graceful_shutdown=5)
    uvicorn.Server(config).run(sockets=[sock])
    return 0
