"""One JSON POST with retries, for the HTTP services chunkwise calls (rerankers; embedders).

Why one place: every service client needs the same behaviour — a bearer key from the environment
and never from the command line, retries with exponential backoff on 408/429/5xx and connection
errors (0.5 s doubling, capped at 30 s, or the server's ``Retry-After``), other 4xx failing at once
with the server's own message, and that message cleaned of terminal escapes before it reaches a
user. Standard library only (urllib): nothing to install.
"""
from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from typing import Any, Callable

from chunkwise.errors import ChunkwiseError

RETRY_STATUS = frozenset({408, 429, 500, 502, 503, 504})
MAX_BACKOFF = 30.0
MAX_RESPONSE_BYTES = 64 << 20  # a bound on what one answer may make this process hold


def post_json(endpoint: str, payload: dict, *, key: str | None = None, timeout: float = 60.0,
              max_retries: int = 5, error: type[ChunkwiseError] = ChunkwiseError, key_hint: str = "",
              sleep: Callable[[float], None] = time.sleep) -> Any:
    """The decoded JSON answer of ``POST endpoint`` with ``payload``; ``error`` on failure."""
    body = json.dumps(payload).encode()
    headers = {"Content-Type": "application/json", "Accept": "application/json"}
    if key:
        headers["Authorization"] = f"Bearer {key}"
    attempt = 0
    while True:
        req = urllib.request.Request(endpoint, data=body, headers=headers, method="POST")
        try:
            with urllib.request.urlopen(req, timeout=timeout) as resp:
                raw = resp.read(MAX_RESPONSE_BYTES + 1)
            if len(raw) > MAX_RESPONSE_BYTES:
                raise error(f"{endpoint} sent more than {MAX_RESPONSE_BYTES >> 20} MiB")
            try:
                return json.loads(raw)
            except ValueError:
                raise error(f"{endpoint} did not answer with JSON") from None
        except urllib.error.HTTPError as exc:
            if exc.code not in RETRY_STATUS or attempt >= max_retries:
                hint = f" ({key_hint})" if key_hint and exc.code in (401, 403) else ""
                raise error(f"{endpoint} answered {exc.code} {exc.reason}{hint}: {error_detail(exc)}") from None
            wait = retry_after(exc.headers.get("Retry-After")) if exc.headers else None
        except (urllib.error.URLError, TimeoutError, ConnectionError) as exc:
            if attempt >= max_retries:
                raise error(f"{endpoint} unreachable after {attempt + 1} attempts: "
                            f"{getattr(exc, 'reason', exc)}") from None
            wait = None
        sleep(min(MAX_BACKOFF, wait if wait is not None else 0.5 * 2 ** attempt))
        attempt += 1


def retry_after(value: str | None) -> float | None:
    """Seconds from a ``Retry-After`` header (None for an HTTP date: the caller's own backoff)."""
    try:
        return max(0.0, float(value)) if value is not None else None
    except ValueError:
        return None


def error_detail(exc: urllib.error.HTTPError) -> str:
    """The server's error message (OpenAI-style ``error.message`` when present), at most 300
    characters, non-printable characters escaped (no terminal escapes reach a user)."""
    try:
        body = exc.read(2000).decode("utf-8", "replace")
    except OSError:
        return ""
    try:
        err = json.loads(body).get("error")
        msg = err.get("message") if isinstance(err, dict) else err
        body = str(msg) if msg else body
    except (ValueError, AttributeError):
        pass
    body = body[:300]
    return "".join(ch if ch.isprintable() else f"\\x{ord(ch):02x}" for ch in body)
