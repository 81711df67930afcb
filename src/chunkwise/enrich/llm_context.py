"""LLM-written chunk context (contextual retrieval): one situating sentence per chunk, from a chat model.

Why: a chunk such as "Revenue grew 3% over the previous quarter" does not say whose revenue or which
quarter; a model that reads the document can say so in a sentence, and that sentence in the embedded
text lets a query that names the company find the chunk. Any OpenAI-compatible chat endpoint serves
(``--context-llm URL#MODEL``: vLLM, llama.cpp's server, Ollama, OpenAI itself); the key, when one is
needed, comes from ``CHUNKWISE_CONTEXT_API_KEY``, never from the command line.

Three rules make it safe to switch on:
- **Permissions.** The model sees only the chunks of the document that every reader of this chunk
  may read (their tags include all of this chunk's), so a restricted section can never be
  paraphrased into a wider chunk's context. A chunk with no readable tags gets no context.
- **The cap.** The chunker reserves ``context_tokens`` of the cap; the context line is cut to what
  fits, measured with the chunk's own sizer on the final text, so a chunk never exceeds the cap.
- **Cost.** Answers are cached on disk by a hash of (model, prompt version, what the model saw, the
  chunk), so re-ingesting unchanged content sends no request.
"""
from __future__ import annotations

import os
import re
import tempfile
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Sequence

from chunkwise import ids
from chunkwise.errors import ChunkwiseError, ConfigError

PROMPT_VERSION = 1
CACHE_ENV = "CHUNKWISE_CONTEXT_DIR"
KEY_ENV = "CHUNKWISE_CONTEXT_API_KEY"
PREFIX = "Context: "
MAX_DOCUMENT_CHARS = 24_000  # what the model sees around the chunk (about 6k tokens)
MAX_ANSWER_CHARS = 1_000
PROMPT = ("<document>\n{document}\n</document>\nHere is the chunk we want to situate within the whole "
          "document:\n<chunk>\n{chunk}\n</chunk>\nGive a short, succinct context that situates this chunk "
          "within the overall document, to improve search retrieval of the chunk. Answer only with the "
          "succinct context and nothing else.")
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2066-\u2069]")


class ContextError(ChunkwiseError):
    """The context model could not be asked (reported for the file; nothing is stored for it)."""


@dataclass(frozen=True)
class ContextModel:
    """``url``: the server's base (``http://host:8000/v1``); ``model``: the name it serves."""

    url: str
    model: str
    timeout: float = 60.0

    @classmethod
    def parse(cls, spec: str) -> "ContextModel":
        """``URL#MODEL`` (``--context-llm``) -> a ContextModel; anything else is a ConfigError."""
        url, _, model = spec.strip().partition("#")
        if not re.match(r"https?://[^\s/]+", url) or not model.strip():
            raise ConfigError(f"--context-llm wants URL#MODEL, e.g. http://localhost:8000/v1#llama3, got {spec!r}")
        return cls(url.rstrip("/"), model.strip())

    def situate(self, document: str, chunk: str) -> str:
        """The model's context for ``chunk`` in ``document``: from the cache, else one request."""
        key = ids.fingerprint([self.model, PROMPT_VERSION, document, chunk], 40)
        path = cache_dir() / key[:2] / f"{key}.txt"
        try:
            return path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            pass
        answer = clean(self._ask(document, chunk))
        _write_atomic(path, answer)
        return answer

    def _ask(self, document: str, chunk: str) -> str:
        from chunkwise.httpjson import post_json

        payload = {"model": self.model, "temperature": 0, "max_tokens": 200,
                   "messages": [{"role": "user", "content": PROMPT.format(document=document, chunk=chunk)}]}
        answer = post_json(f"{self.url}/chat/completions", payload, key=os.environ.get(KEY_ENV) or None,
                           timeout=self.timeout, max_retries=3, error=ContextError, key_hint=f"set {KEY_ENV}")
        try:
            content = answer["choices"][0]["message"]["content"]
        except (KeyError, IndexError, TypeError):
            raise ContextError(f"{self.url}/chat/completions answered without choices[0].message.content") from None
        if not isinstance(content, str):
            raise ContextError(f"{self.url}/chat/completions answered a non-text message")
        return content


def cache_dir() -> Path:
    if os.environ.get(CACHE_ENV):
        return Path(os.environ[CACHE_ENV]).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "chunkwise" / "context"


def clean(answer: str) -> str:
    """One line, no control or bidirectional characters (the text is embedded and displayed)."""
    return " ".join(_CONTROL.sub(" ", answer[:MAX_ANSWER_CHARS]).split())


def _write_atomic(path: Path, text: str) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".ctx-")
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    except OSError:
        pass  # an unwritable cache costs a repeated request, never the ingest


def visible_document(records: Sequence, i: int, limit: int = MAX_DOCUMENT_CHARS) -> str:
    """The text of the chunks every reader of ``records[i]`` may read, in order, at most ``limit``
    characters around it (nearest chunks first)."""
    mine = set(records[i].acl)
    ok = [j for j, r in enumerate(records) if mine and mine <= set(r.acl)]
    at = ok.index(i)
    chosen, used, lo, hi = {i}, len(records[i].text), at - 1, at + 1
    while lo >= 0 or hi < len(ok):
        for j in (lo, hi):
            if 0 <= j < len(ok) and used + len(records[ok[j]].text) <= limit:
                chosen.add(ok[j])
                used += len(records[ok[j]].text) + 2
        lo, hi = lo - 1, hi + 1
    return "\n\n".join(records[j].text for j in sorted(chosen))


def add_context(records: list, model: ContextModel, sizer, cap: int) -> list:
    """``records`` with a ``Context:`` line first in each readable chunk's embedded text (and its
    embed key and size updated); the line is cut word by word until the chunk fits ``cap``."""
    out = []
    for i, r in enumerate(records):
        if not r.acl:
            out.append(r)
            continue
        words = model.situate(visible_document(records, i), r.text).split()
        text, size = r.embed_text, r.size
        while words:
            candidate = f"{PREFIX}{' '.join(words)}\n{r.embed_text}"
            n = sizer.count(candidate)
            if n <= cap:
                text, size = candidate, n
                break
            words = words[: max(0, min(len(words) - 1, len(words) * cap // max(n, 1)))]
        out.append(replace(r, embed_text=text, size=size, embed_key=ids.embed_key(r.embed_model, text)))
    return out
