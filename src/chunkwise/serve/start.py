"""Start-up: check everything that can be wrong before listening, then hand over to uvicorn.

Order matters for failing fast: the groups policy (tokens file), the store, the address (a port in
use), and only then the slow model load; the ready line is printed when requests can be answered.
"""
from __future__ import annotations

import gc
import importlib.util
import ipaddress
import json
import socket
import sys

from chunkwise.api import ConfigError, DependencyError

SERVE_INSTALL_HINT = "pip install 'chunkwise[serve]'"
LOOPBACK_NAMES = ("localhost",)


def is_loopback(host: str) -> bool:
    if host.lower() in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def policy(trust_groups_header: bool = False, tokens: str | None = None, insecure_groups_in_body: bool = False,
           host: str = "127.0.0.1", allowed_hosts: tuple[str, ...] = ()):
    """The one GroupSource the flags choose; none or several is a configuration error. The body mode
    (callers name their groups) answers only on loopback, unless ``--tokens`` is given with it: then
    only holders of a token may name groups, and it may listen and answer anywhere."""
    from chunkwise.serve.auth import BearerTokens, CallerSays, TrustedHeader, load_tokens
    from chunkwise.serve.hosts import allowed_hosts as answered, is_loopback_name

    hosts = answered(host, allowed_hosts)
    chosen = [name for name, on in (("--trust-groups-header", trust_groups_header), ("--tokens", tokens is not None),
                                    ("--insecure-groups-in-body", insecure_groups_in_body)) if on]
    if not chosen:
        raise ConfigError("say where callers' groups come from: --trust-groups-header (a gateway sets "
                          "X-Chunkwise-Groups), --tokens FILE (bearer tokens), or --insecure-groups-in-body (local use)")
    if chosen == ["--tokens", "--insecure-groups-in-body"]:
        return CallerSays(load_tokens(tokens))
    if len(chosen) > 1:
        raise ConfigError(f"choose one of {' and '.join(chosen)}: each is a different way to name the caller's groups")
    if insecure_groups_in_body:
        if not is_loopback(host):
            raise ConfigError(f"--insecure-groups-in-body lets any caller name its groups; without --tokens it listens "
                              f"only on loopback (--host 127.0.0.1), not {host}")
        wider = sorted(h for h in hosts if not is_loopback_name(h))
        if wider:
            raise ConfigError(f"--insecure-groups-in-body lets any caller name its groups; without --tokens it answers "
                              f"only loopback names, not --allowed-host {wider[0]}")
        return CallerSays()
    if tokens is not None:
        tokens_policy: BearerTokens = load_tokens(tokens)
        return tokens_policy
    return TrustedHeader()


def listen(host: str, port: int) -> socket.socket:
    if not 0 <= port <= 65535:
        raise ConfigError(f"--port {port}: use 0-65535 (0 picks a free port)")
    try:
        family = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)[0][0]
        return socket.create_server((host, port), family=family, backlog=128)
    except OSError as exc:
        raise ConfigError(f"cannot listen on {host}:{port} ({exc.strerror or exc}); choose another --host/--port") from exc


def run(db: str, host: str = "127.0.0.1", port: int = 8080, *, trust_groups_header: bool = False,
        tokens: str | None = None, insecure_groups_in_body: bool = False, bm25: str = "fts5",
        generator_tokenizer: str | None = None, log_level: str = "info", max_body: int | None = None,
        ready_json: bool = False, ranking: dict | None = None, model_aliases: tuple[str, ...] = (),
        allowed_hosts: tuple[str, ...] = (), workers: int | None = None, query_seconds: float | None = None,
        max_connections: int | None = None, read_seconds: float | None = None) -> int:
    missing = [m for m in ("fastapi", "uvicorn") if importlib.util.find_spec(m) is None]
    if missing:
        raise DependencyError(f"chunkwise serve needs {' and '.join(missing)} (not installed); install with: "
                              f"{SERVE_INSTALL_HINT}")
    import uvicorn

    from chunkwise.serve.app import MAX_BODY, create_app
    from chunkwise.serve.engine import Engine

    from chunkwise.serve.hosts import allowed_hosts as answered

    auth = policy(trust_groups_header, tokens, insecure_groups_in_body, host, allowed_hosts)
    hosts = answered(host, allowed_hosts)
    from chunkwise.serve.openai import check_aliases

    model_aliases = check_aliases(model_aliases)
    from chunkwise.serve import connections as c
    from chunkwise.serve.engine import QUERY_SECONDS, WORKERS

    max_connections = c.MAX_CONNECTIONS if max_connections is None else max_connections
    if max_connections < 16:
        raise ConfigError(f"--max-connections {max_connections}: at least 16")
    read_seconds = c.HEAD_SECONDS if read_seconds is None else read_seconds
    if not 0 < read_seconds <= 3600:
        raise ConfigError(f"--read-timeout {read_seconds:g}: use 0-3600 seconds")
    # Workers share the GIL between the pure-Python parts of their searches: hand it over every 1 ms
    # instead of 5, so a light query waiting behind a heavy one's Python loop waits 1 ms, not 5, at
    # each hand-over (benchmarks/server_load.py).
    sys.setswitchinterval(0.001)
    engine = Engine(db, bm25=bm25, generator_tokenizer=generator_tokenizer, workers=WORKERS if workers is None else workers,
                    query_seconds=QUERY_SECONDS if query_seconds is None else query_seconds, **(ranking or {}))
    try:
        c.raise_open_files(max_connections + 256)
        sock = listen(host, port)
        engine.warm()
        app = create_app(engine, auth, max_body=max_body or MAX_BODY, model_aliases=model_aliases,
                         hosts=hosts, body_seconds=read_seconds * c.BODY_PER_HEAD)
        bound = sock.getsockname()[1]
        shown = f"[{host}]" if ":" in host else host
        url = f"http://{shown}:{bound}"
        print(f"chunkwise serve: {url}/  store {db}  model {engine.model or 'none'}  groups from {auth.name}",
              file=sys.stderr, flush=True)
        if ready_json:
            print(json.dumps({"url": url, "store": str(db), "model": engine.model, "dim": engine.dim,
                              "auth": auth.name}), flush=True)
        # Everything loaded so far (the framework, the app, the model's Python side, the index's
        # objects) lives as long as the server: out of the collector's sight, so the collections a
        # search's allocations trigger do not walk it again and again (benchmarks/serve.py).
        gc.collect()
        gc.freeze()
        config = uvicorn.Config(app, log_level=log_level, server_header=False, proxy_headers=False, lifespan="off",
                                timeout_graceful_shutdown=5, http=c.protocol(read_seconds, max_connections),
                                timeout_keep_alive=c.KEEP_ALIVE_SECONDS, h11_max_incomplete_event_size=c.MAX_HEAD_BYTES,
                                backlog=2048)
        uvicorn.Server(config).run(sockets=[sock])
    finally:
        engine.close()
    return 0
