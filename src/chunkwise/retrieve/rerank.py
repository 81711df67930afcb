"""A second stage: reorder the permitted candidates with a reranking service.

Why: a first-stage ranker (BM25, a bi-encoder, their fusion) scores query and passage apart; a
cross-encoder reads them together and orders a short list much better. Rerankers are served over
HTTP in two request shapes in use today, both supported:

- ``tei:URL`` — text-embeddings-inference: ``POST URL/rerank`` with ``{"query", "texts"}``, answered
  with ``[{"index", "score"}, ...]``.
- ``cohere:URL#MODEL`` (``jina:`` is the same shape) — Cohere / Jina: ``POST URL/rerank`` with
  ``{"model", "query", "documents", "top_n"}`` (URL ends in ``/v1``), answered with
  ``{"results": [{"index", "relevance_score"}, ...]}``.

Only hits the caller may see are ever sent: the stage runs on the retriever's permission-filtered
candidates, so a service never reads hidden text. The top ``depth`` hits are reordered by the
service's score (ties keep the first stage's order) and take that score; the rest follow in their
first-stage order. The key comes from ``CHUNKWISE_RERANK_API_KEY``, never from the command line.
"""
from __future__ import annotations

import os
from dataclasses import replace
from typing import Protocol, Sequence

from chunkwise.errors import ChunkwiseError, ConfigError
from chunkwise.httpjson import post_json
from chunkwise.retrieve.types import Hit

KEY_ENV = "CHUNKWISE_RERANK_API_KEY"
SHAPES = {"tei": "tei", "cohere": "cohere", "jina": "cohere"}
DEFAULT_DEPTH = 20
MAX_DEPTH = 200  # texts one query may send to the service


class RerankError(ChunkwiseError):
    """A reranking service refused or kept failing a request, or answered out of shape."""


class Reranker(Protocol):
    name: str

    def scores(self, query: str, texts: Sequence[str]) -> list[float]:
        """One relevance score per text, larger is better."""


class HTTPReranker:
    """A reranking service in one of the two shapes (see the module docstring)."""

    def __init__(self, url: str, shape: str = "tei", model: str | None = None, *, timeout: float = 30.0,
                 max_retries: int = 2) -> None:
        url = (url or "").strip().rstrip("/")
        if not url.startswith(("http://", "https://")) or any(c in url for c in " \t\n#?"):
            raise ConfigError(f"reranker URL must be http(s)://host[:port][/path], got {url!r}")
        if shape not in SHAPES:
            raise ConfigError(f"unknown reranker shape {shape!r}; use one of: {', '.join(SHAPES)}")
        if SHAPES[shape] == "cohere" and not model:
            raise ConfigError(f"a {shape}: reranker needs a model: {shape}:{url}#MODEL")
        self.url, self.shape, self.model = url, SHAPES[shape], model
        self.endpoint = f"{url}/rerank"
        self.timeout, self.max_retries = timeout, max_retries
        self.name = f"{shape}:{url}" + (f"#{model}" if model else "")

    def __repr__(self) -> str:
        return f"HTTPReranker({self.name!r})"

    def scores(self, query: str, texts: Sequence[str]) -> list[float]:
        texts = list(texts)
        if not texts:
            return []
        if self.shape == "tei":
            payload: dict = {"query": query, "texts": texts, "raw_scores": False}
        else:
            payload = {"model": self.model, "query": query, "documents": texts, "top_n": len(texts)}
        answer = post_json(self.endpoint, payload, key=os.environ.get(KEY_ENV) or None, timeout=self.timeout,
                           max_retries=self.max_retries, error=RerankError, key_hint=f"set {KEY_ENV}")
        return self._read(answer, len(texts))

    def _read(self, answer, n: int) -> list[float]:
        items = answer if self.shape == "tei" else (answer.get("results") if isinstance(answer, dict) else None)
        key = "score" if self.shape == "tei" else "relevance_score"
        out: list[float | None] = [None] * n
        try:
            for item in items:
                i, s = item["index"], item[key]
                if not isinstance(i, int) or isinstance(s, bool) or not isinstance(s, (int, float)) or out[i] is not None:
                    raise ValueError
                out[i] = float(s)
        except (TypeError, KeyError, IndexError, ValueError):
            raise RerankError(f"{self.endpoint} answered out of the {self.shape} rerank shape") from None
        if any(s is None for s in out):
            raise RerankError(f"{self.endpoint} scored {sum(s is not None for s in out)} of {n} texts")
        return out  # type: ignore[return-value]


def make_reranker(spec: str | None) -> Reranker | None:
    """``None``/``"none"`` -> no reranker; ``tei:URL``, ``cohere:URL#MODEL``, ``jina:URL#MODEL``."""
    if spec is None or spec == "none":
        return None
    shape, sep, rest = spec.partition(":")
    if not sep or shape not in SHAPES:
        raise ConfigError(f"unknown reranker {spec!r}; use tei:URL, cohere:URL#MODEL or jina:URL#MODEL")
    url, _, model = rest.partition("#")
    return HTTPReranker(url, shape, model or None)


def check_depth(depth: int) -> int:
    if not isinstance(depth, int) or isinstance(depth, bool) or not 1 <= depth <= MAX_DEPTH:
        raise ConfigError(f"rerank depth must be a whole number from 1 to {MAX_DEPTH}, got {depth!r}")
    return depth


def rerank(hits: Sequence[Hit], query: str, reranker: Reranker, depth: int = DEFAULT_DEPTH) -> list[Hit]:
    """``hits`` (permitted, ranked) with the first ``depth`` reordered by the reranker's scores."""
    head, tail = list(hits[:depth]), list(hits[depth:])
    if len(head) < 2:
        return list(hits)
    scores = reranker.scores(query, [h.text for h in head])
    order = sorted(range(len(head)), key=lambda i: (-scores[i], head[i].rank))
    out = [replace(head[i], score=scores[i]) for i in order] + tail
    return [replace(h, rank=r) for r, h in enumerate(out, start=1)]
