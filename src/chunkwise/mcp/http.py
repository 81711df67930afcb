"""Streamable HTTP: the SDK's ASGI app inside chunkwise's own guards.

Outermost the HTTP service's guard (``chunkwise.serve.middleware.Guard``: the request body limit,
413 before anything is parsed, and the security headers), then the caller's authentication
(``chunkwise.serve.auth``: a bearer token mapped to groups, or a gateway's header), which puts the
groups in the request's ASGI scope; the MCP handlers read them from there. A request without valid
credentials is answered 401/403 and never reaches the MCP session. The SDK runs stateless with JSON
responses: every request carries its own credentials, no session outlives it.
"""
from __future__ import annotations

import json

from starlette.datastructures import Headers

from chunkwise.mcp.server import SCOPE_KEY
from chunkwise.serve.auth import AuthError, GroupSource

PATH = "/mcp"


class Authenticate:
    """ASGI: each HTTP request's groups from ``source``, set as ``scope["chunkwise.groups"]``."""

    def __init__(self, app, source: GroupSource) -> None:
        self.app = app
        self.source = source

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        try:
            groups = self.source.groups(Headers(scope=scope), None)
        except AuthError as exc:
            return await _refuse(send, exc)
        await self.app({**scope, SCOPE_KEY: groups}, receive, send)


async def _refuse(send, exc: AuthError) -> None:
    kind = "authentication_error" if exc.status == 401 else "permission_error" if exc.status == 403 else "invalid_request_error"
    body = json.dumps({"error": {"message": exc.message, "type": kind, "param": None, "code": exc.code}}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    if exc.bearer:
        headers.append((b"www-authenticate", b'Bearer realm="chunkwise"'))
    await send({"type": "http.response.start", "status": exc.status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def _sdk_check(hosts: frozenset[str]):
    """The SDK's own DNS-rebinding check with the same names as the Guard (it also checks Origin)."""
    from mcp.server.transport_security import TransportSecuritySettings

    shown = sorted(f"[{h}]" if ":" in h else h for h in hosts)
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True, allowed_hosts=[x for h in shown for x in (h, h + ":*")],
        allowed_origins=[f"{scheme}://{h}{port}" for h in shown for scheme in ("http", "https") for port in ("", ":*")])


def asgi_app(server, source: GroupSource | None, *, host: str, max_body: int, hosts: frozenset[str]):
    """The whole ASGI application: Guard(Authenticate(the SDK's streamable HTTP app)). ``source``
    None: the server's fixed groups serve every caller (loopback only; checked by the caller).
    ``hosts``: the Host names answered (``chunkwise.serve.hosts.allowed_hosts``)."""
    from chunkwise.serve.middleware import Guard

    app = server.streamable_http_app(streamable_http_path=PATH, stateless_http=True, json_response=True,
                                     max_request_body_size=max_body, host=host, transport_security=_sdk_check(hosts))
    return Guard(app if source is None else Authenticate(app, source), max_body, hosts)
