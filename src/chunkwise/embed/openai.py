"""An OpenAI-compatible HTTP embedder (``--embedder openai:URL --model NAME``).

Why: a team with a hosted model or an inference server (OpenAI, vLLM, TEI, Ollama, ``chunkwise
serve``...) embeds through the same ``POST {URL}/embeddings`` request. Standard library only
(urllib): nothing to install.

What it does on the wire, exactly:
- The key comes from the environment variable ``CHUNKWISE_EMBED_API_KEY`` (else ``OPENAI_API_KEY``),
  sent as ``Authorization: Bearer ...``; never from the command line, never in a stored name.
- Requests hold at most ``batch_size`` inputs (default 256; the OpenAI API takes 2,048) and at most
  ``max_request_chars`` characters (default 400,000, well inside its 300,000-token request cap for any
  tokenizer that averages over 1.33 characters per token); a text is never split or truncated.
- Every request sends ``model``, ``input`` (a list) and ``encoding_format`` (``base64`` by default:
  4 bytes a float instead of ~20); a response in either ``float`` lists or base64 little-endian float32
  is accepted, ordered by each item's ``index``, and checked: one vector per input, one dimension.
- 408, 429 and 5xx answers and connection errors are retried with exponential backoff (0.5 s, 1 s, 2 s...,
  capped at 30 s, or the server's ``Retry-After``), ``max_retries`` times; other 4xx fail at once with
  the server's message.

Name: ``openai:{URL}#{model}``, so a store records where its vectors came from and queries are
embedded by the same server and model; another URL or model is another embedder and re-embeds.
"""
from __future__ import annotations

import base64
import json
import os
import struct
import time
import urllib.error
import urllib.request
from typing import Callable, Sequence

from chunkwise.embed.base import texts_of
from chunkwise.errors import ConfigError, EmbeddingServiceError
from chunkwise.httpjson import error_detail, retry_after

KEY_ENV = "CHUNKWISE_EMBED_API_KEY"
FALLBACK_KEY_ENV = "OPENAI_API_KEY"
MAX_INPUTS = 2048  # the OpenAI API's limit of inputs per request
RETRY_STATUS = frozenset({408, 429, 500, 502, 503, 504})
_MAX_BACKOFF = 30.0


def parse_name(name: str) -> tuple[str, str | None]:
    """``openai:URL`` or ``openai:URL#MODEL`` -> (URL, MODEL or None)."""
    rest = name.strip()[len("openai:"):]
    url, _, model = rest.partition("#")
    return url, (model or None)


class OpenAIEmbedder:
    """Embeds through ``POST {url}/embeddings`` in the OpenAI format (see the module docstring)."""

    max_tokens: int | None = None  # the server's own limit; chunkwise cannot know it

    def __init__(self, url: str, model: str | None, *, batch_size: int = 256, max_request_chars: int = 400_000,
                 encoding_format: str = "base64", max_retries: int = 5, timeout: float = 60.0,
                 api_key: str | None = None, sleep: Callable[[float], None] = time.sleep) -> None:
        url = (url or "").strip()
        if not url.startswith(("http://", "https://")) or any(c in url for c in " \t\n#+@?"):
            raise ConfigError(f"--embedder openai:URL needs an http(s) URL without credentials, query or '+' "
                              f"(e.g. openai:http://127.0.0.1:8080/v1), got {url!r}")
        if not model or not isinstance(model, str) or not model.strip() or "#" in model:
            raise ConfigError("the openai embedder needs the model name the server serves: "
                              "--embedder openai:URL --model NAME (e.g. --model text-embedding-3-small)")
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or not 1 <= batch_size <= MAX_INPUTS:
            raise ConfigError(f"batch_size must be an integer in 1..{MAX_INPUTS}, got {batch_size!r}")
        if encoding_format not in ("float", "base64"):
            raise ConfigError(f"encoding_format must be 'float' or 'base64', got {encoding_format!r}")
        if isinstance(max_retries, bool) or not isinstance(max_retries, int) or max_retries < 0:
            raise ConfigError(f"max_retries must be an integer >= 0, got {max_retries!r}")
        self.url = url.rstrip("/")
        self.endpoint = self.url if self.url.endswith("/embeddings") else self.url + "/embeddings"
        self.model = model.strip()
        self.name = f"openai:{self.url}#{self.model}"
        self.dim: int | None = None  # known after the first response; every later one must match
        self.batch_size = batch_size
        self.max_request_chars = max_request_chars
        self.encoding_format = encoding_format
        self.max_retries = max_retries
        self.timeout = timeout
        self._key = api_key if api_key is not None else (os.environ.get(KEY_ENV) or os.environ.get(FALLBACK_KEY_ENV))
        self._sleep = sleep
        self.requests = 0  # HTTP requests sent, retries included (for tests and progress)

    def __repr__(self) -> str:
        return f"OpenAIEmbedder(url={self.url!r}, model={self.model!r})"

    def __reduce__(self):  # workers read the key from their own environment
        return (OpenAIEmbedder, (self.url, self.model), {"batch_size": self.batch_size,
                                                          "max_request_chars": self.max_request_chars,
                                                          "encoding_format": self.encoding_format,
                                                          "max_retries": self.max_retries, "timeout": self.timeout})

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        texts = texts_of(texts)
        out: list[list[float]] = []
        for batch in self.batches(texts):
            out.extend(self._request(batch))
        return out

    def batches(self, texts: list[str]) -> list[list[str]]:
        """Consecutive runs of at most ``batch_size`` texts and ``max_request_chars`` characters (a
        longer text goes alone: the server decides whether it fits its model)."""
        out: list[list[str]] = []
        cur: list[str] = []
        chars = 0
        for t in texts:
            if cur and (len(cur) == self.batch_size or chars + len(t) > self.max_request_chars):
                out.append(cur)
                cur, chars = [], 0
            cur.append(t)
            chars += len(t)
        if cur:
            out.append(cur)
        return out

    def _request(self, batch: list[str]) -> list[list[float]]:
        body = json.dumps({"model": self.model, "input": batch, "encoding_format": self.encoding_format}).encode()
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self._key:
            headers["Authorization"] = f"Bearer {self._key}"
        attempt = 0
        while True:
            self.requests += 1
            req = urllib.request.Request(self.endpoint, data=body, headers=headers, method="POST")
            try:
                with urllib.request.urlopen(req, timeout=self.timeout) as resp:
                    payload = resp.read()
                return self._vectors(payload, len(batch))
            except urllib.error.HTTPError as exc:
                detail = error_detail(exc)
                if exc.code not in RETRY_STATUS or attempt >= self.max_retries:
                    hint = f" (set {KEY_ENV})" if exc.code in (401, 403) else ""
                    raise EmbeddingServiceError(f"{self.endpoint} answered {exc.code} {exc.reason}{hint}: {detail}") from None
                wait = retry_after(exc.headers.get("Retry-After")) if exc.headers else None
            except (urllib.error.URLError, TimeoutError, ConnectionError) as exc:
                if attempt >= self.max_retries:
                    raise EmbeddingServiceError(f"{self.endpoint} unreachable after {attempt + 1} attempts: "
                                                f"{getattr(exc, 'reason', exc)}") from None
                wait = None
            self._sleep(min(_MAX_BACKOFF, wait if wait is not None else 0.5 * 2 ** attempt))
            attempt += 1

    def _vectors(self, payload: bytes, n: int) -> list[list[float]]:
        try:
            data = json.loads(payload)["data"]
            items = sorted(data, key=lambda d: d["index"])
            vectors = [_decode(item["embedding"]) for item in items]
        except (ValueError, KeyError, TypeError, struct.error) as exc:
            raise EmbeddingServiceError(f"{self.endpoint} sent a response that is not an OpenAI embeddings "
                                        f"list ({type(exc).__name__}: {exc})") from None
        if [d["index"] for d in items] != list(range(n)):
            raise EmbeddingServiceError(f"{self.endpoint} returned {len(items)} embeddings for {n} inputs")
        dims = {len(v) for v in vectors}
        if self.dim is not None:
            dims.add(self.dim)
        if len(dims) != 1 or 0 in dims:
            raise EmbeddingServiceError(f"{self.endpoint} returned vectors of dimensions {sorted(dims)}; "
                                        f"one model gives one dimension")
        self.dim = dims.pop()
        return vectors


def _decode(embedding) -> list[float]:
    if isinstance(embedding, str):
        raw = base64.b64decode(embedding, validate=True)
        if len(raw) % 4:
            raise ValueError("base64 embedding is not a whole number of float32 values")
        return list(struct.unpack(f"<{len(raw) // 4}f", raw))
    if isinstance(embedding, list) and all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in embedding):
        return [float(x) for x in embedding]
    raise TypeError("embedding is neither a list of numbers nor a base64 string")
