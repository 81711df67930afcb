"""``POST /v1/embeddings`` in the OpenAI format, served by the store's own query embedder.

What a client of the OpenAI API relies on, kept: ``input`` a string or a list of up to 2048
non-empty strings, ``data`` in input order with ``index``, ``encoding_format`` ``float`` or
``base64`` (little-endian float32, what the official client decodes), ``usage`` token counts, errors
as ``{"error": {"message", "type", "param", "code"}}``. A text longer than the model reads is an
error (``context_length_exceeded``), never silently cut to its head.
"""
from __future__ import annotations

import base64
import struct
from typing import Sequence


class EmbeddingError(Exception):
    def __init__(self, status: int, message: str, param: str | None, code: str) -> None:
        super().__init__(message)
        self.status, self.message, self.param, self.code = status, message, param, code


def accepts(requested: str, served: str) -> bool:
    """The served name (``all-MiniLM-L6-v2@1``) or the same without its ``@version``, any case."""
    want, have = requested.strip().lower(), served.lower()
    return want == have or want == have.split("@", 1)[0]


def check_request(model: str | None, dim: int | None, requested: str, dimensions: int | None) -> None:
    if model is None:
        raise EmbeddingError(404, "this store was ingested without vectors (--embedder none): there is no model "
                                  "to serve", "model", "model_not_found")
    if not accepts(requested, model):
        raise EmbeddingError(404, f"the model {requested!r} is not served here; this server embeds with {model!r}",
                             "model", "model_not_found")
    if dimensions is not None and dimensions != dim:
        raise EmbeddingError(400, f"{model} gives {dim}-dimensional vectors; it cannot give {dimensions}",
                             "dimensions", "invalid_dimensions")


def check_lengths(counts: Sequence[int], limit: int | None, model: str) -> None:
    if limit is None:
        return
    for i, n in enumerate(counts):
        if n > limit:
            raise EmbeddingError(400, f"input[{i}] has {n} tokens; {model} reads at most {limit} (special tokens "
                                      "included) and never truncates: split the text", "input", "context_length_exceeded")


def encode(vector: Sequence[float], encoding_format: str):
    if encoding_format == "base64":
        return base64.b64encode(struct.pack(f"<{len(vector)}f", *vector)).decode("ascii")
    return [float(x) for x in vector]


def response(vectors: Sequence[Sequence[float]], counts: Sequence[int], model: str, encoding_format: str) -> dict:
    tokens = sum(counts)
    return {
        "object": "list",
        "data": [{"object": "embedding", "index": i, "embedding": encode(v, encoding_format)}
                 for i, v in enumerate(vectors)],
        "model": model,
        "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
    }
