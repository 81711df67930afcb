"""Plain ASGI middleware around the whole app: the Host allowlist, a request body limit and the
security headers.

A request whose ``Host`` is not one the server was configured with (``chunkwise.serve.hosts``) is
answered 400 before anything else: that is what a DNS-rebinding page sends. No CORS header is ever
set, so no other origin's script may read an answer.

The body is read (up to the limit) before the app sees it, so an oversized or endless upload is
answered 413 without being held in memory, whatever the framework would do with it; the rest of
a refused upload is read and dropped first (bounded) so that the client gets to read the 413. Every response
carries a strict Content-Security-Policy: the page loads only its own script and style from this
origin and talks only to this origin; nothing may frame it.
"""
from __future__ import annotations

import json

from chunkwise.serve.hosts import permitted_host

CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
       "base-uri 'none'; form-action 'self'; frame-ancestors 'none'")
SECURITY_HEADERS = [
    (b"content-security-policy", CSP.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"DENY"),
    (b"cross-origin-resource-policy", b"same-origin"),
]


def error_bytes(message: str, type_: str, code: str | None = None, param: str | None = None) -> bytes:
    return json.dumps({"error": {"message": message, "type": type_, "param": param, "code": code}}).encode()


DRAIN_BYTES = 64 * 1024 * 1024
DRAIN_SECONDS = 10.0


async def _drain(receive, size: int) -> None:
    """Read and drop what is left of a refused upload (bounded in bytes and time) before answering:
    the server closes the connection after the 413, and closing a socket with unread data in it
    makes the kernel send a reset, which can reach the client before it has read the 413. (The
    server's ``receive`` gives nothing once the response is sent, so this must come first.)"""
    import asyncio

    async def read() -> None:
        got = size
        while got <= DRAIN_BYTES:
            message = await receive()
            if message["type"] != "http.request":
                return
            got += len(message.get("body", b""))
            if not message.get("more_body", False):
                return

    try:
        await asyncio.wait_for(read(), DRAIN_SECONDS)
    except asyncio.TimeoutError:
        pass


def _expects_continue(scope) -> bool:
    return any(k.lower() == b"expect" and v.lower() == b"100-continue" for k, v in scope.get("headers", []))


class Guard:
    def __init__(self, app, max_body: int, hosts: frozenset[str] | None = None, body_seconds: float = 30.0) -> None:
        """``hosts``: the Host names answered (None: any, for an app mounted behind another guard);
        ``body_seconds``: the whole request body must arrive within it (else 408)."""
        self.app = app
        self.max_body = max_body
        self.hosts = hosts
        self.body_seconds = body_seconds

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        if self.hosts is not None and not permitted_host(scope.get("headers", []), self.hosts):
            return await self._refuse_host(scope, send)

        async def send_secure(message):
            if message["type"] == "http.response.start":
                headers = [h for h in message.get("headers", []) if h[0].lower() not in dict(SECURITY_HEADERS)]
                if not any(h[0].lower() == b"cache-control" for h in headers):
                    headers.append((b"cache-control", b"no-store"))
                message = {**message, "headers": headers + SECURITY_HEADERS}
            await send(message)

        declared = [v for k, v in scope.get("headers", []) if k.lower() == b"content-length"]
        if declared and (len(declared) > 1 or not declared[0].isdigit() or int(declared[0]) > self.max_body):
            if not _expects_continue(scope):  # else the client waits for our answer before sending
                await _drain(receive, 0)
            return await self._too_large(send_secure)
        import asyncio
        import time

        body, more = [], True
        size = 0
        deadline = time.monotonic() + self.body_seconds
        while more:
            try:
                message = await asyncio.wait_for(receive(), max(0.0, deadline - time.monotonic()))
            except asyncio.TimeoutError:
                return await self._too_slow(send_secure)
            if message["type"] == "http.disconnect":
                return None
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.max_body:
                if message.get("more_body", False):
                    await _drain(receive, size)
                return await self._too_large(send_secure)
            body.append(chunk)
            more = message.get("more_body", False)
        whole = b"".join(body)
        sent = False

        async def replay():
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": whole, "more_body": False}
            return await receive()

        await self.app(scope, replay, send_secure)

    async def _refuse_host(self, scope, send):
        names = [v.decode("latin-1") for k, v in scope.get("headers", []) if k.lower() == b"host"]
        shown = (names[0][:100] if len(names) == 1 else f"{len(names)} Host headers") if names else "no Host header"
        body = error_bytes(f"this server does not answer to {shown!r}; start it with --allowed-host NAME to serve "
                           "that name", "invalid_request_error", "host_not_allowed")
        await send({"type": "http.response.start", "status": 400,
                    "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                                (b"connection", b"close"), *SECURITY_HEADERS, (b"cache-control", b"no-store")]})
        await send({"type": "http.response.body", "body": body})

    async def _too_slow(self, send):
        body = error_bytes(f"the request body did not arrive within {self.body_seconds:g} s", "invalid_request_error",
                           "body_timeout")
        await send({"type": "http.response.start", "status": 408,
                    "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                                (b"connection", b"close")]})
        await send({"type": "http.response.body", "body": body})

    async def _too_large(self, send):
        body = error_bytes(f"request body over {self.max_body} bytes", "invalid_request_error", "body_too_large")
        await send({"type": "http.response.start", "status": 413,
                    "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                                (b"connection", b"close")]})
        await send({"type": "http.response.body", "body": body})
