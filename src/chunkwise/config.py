"""Frozen, validated chunking configuration: a bad combination fails at construction, not mid-run."""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field

from chunkwise import ids
from chunkwise.errors import ConfigError

STRATEGIES = (
    "fixed",
    "sentence_window",
    "sentences",
    "paragraphs",
    "recursive",
    "structure",
    "table",
    "balanced",
    "auto",
    "semantic",
    "code",
)
UNITS = ("chars", "words", "tokens")
HEADERS = ("none", "title", "path", "full", "context")
BACKENDS = ("auto", "tokenizers", "tokie", "tiktoken")
FORMATS = ("markdown", "text", "code")

# The defaults of a run that names nothing, in one place (docs/_figures/model.md has the measurements).
# The embedder: all-MiniLM-L6-v2 on ONNX Runtime with int8 weights (no torch). When it cannot be loaded,
# ingest indexes for BM25 only and says so once (pipeline/settings.py); ``hashing`` is used only when named.
DEFAULT_EMBEDDER = "minilm-onnx-int8"
# MiniLM reads 256 tokens, [CLS] and [SEP] included; the default size is half that window. Chosen on the
# tune splits of both labelled sets (eval/examples.golden.jsonl and Chroma's questions; figures in
# docs/_figures/s3-chroma.md): at 128 a result is evidence rather than evidence plus padding -- Chroma's
# span IoU at k = 5 rises from 3.4 to 5.9 and the context sent falls by 44 %, while recall stays
# above 86 on tune (96 tokens drops it to 84) and the examples' first hit improves. A contextual
# header counts inside the size (the hard-cap contract), so it needs no room of its own.
DEFAULT_WINDOW = 256
DEFAULT_SIZE = 128


def _real(x) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def _close(name: str, options: tuple[str, ...]) -> str:
    import difflib

    near = difflib.get_close_matches(name, options, n=1)
    return f" (did you mean {near[0]!r}?)" if near else ""


@dataclass(frozen=True)
class ChunkConfig:
    """Everything that decides where cuts go. ``fingerprint()`` identifies it in stores and manifests.

    ``size`` and ``overlap`` count ``unit``s; for ``sentence_window`` ``window``/``overlap`` count
    sentences while ``size`` stays the hard cap.
    """

    strategy: str = "structure"
    size: int = DEFAULT_SIZE
    overlap: int = 0
    unit: str = "tokens"
    tokenizer: str = "minilm"
    backend: str = "auto"
    special_tokens: bool = False
    header: str = "none"
    title: str = ""
    context_llm: str = ""  # URL#MODEL of a chat model that writes each chunk's context (enrich/llm_context.py)
    context_tokens: int = 0  # of the cap, kept for that context (default 64 with context_llm)
    description: str = ""  # header "context": the document's one-line description (enrich/describe.py)
    separators: tuple[str, ...] | None = None
    window: int = 3
    min_tail: int | None = None
    table_rows_as_fields: bool = False
    format: str = "markdown"
    # semantic: a boundary where adjacent sentences' cosine is below the threshold, or (threshold None)
    # below this percentile of the document's similarities; runs under min size (None: size // 8) merge
    semantic_threshold: float | None = None
    semantic_percentile: float = 10.0
    semantic_min_size: int | None = None
    # int8 MiniLM: ~35% less CPU than fp32 ("minilm"), retrieval equal on labelled questions
    # (benchmarks/semantic_quality.py); the name is in the fingerprint, so stores re-chunk on a change
    semantic_embedder: str = "minilm-onnx-int8"
    language: str = ""  # code: the grammar (python, go, ...); set per document from its file
    docx_comments: bool = False  # DOCX reviewers' comments become text (chunked, embedded, searchable)
    extra: dict = field(default_factory=dict, compare=False, hash=False)

    def __post_init__(self) -> None:
        if self.strategy not in STRATEGIES:
            raise ConfigError(
                f"unknown strategy {self.strategy!r}{_close(self.strategy, STRATEGIES)}; "
                f"choose one of: {', '.join(STRATEGIES)}"
            )
        if self.unit not in UNITS:
            raise ConfigError(f"unknown unit {self.unit!r}; choose one of: {', '.join(UNITS)}")
        if self.header not in HEADERS:
            raise ConfigError(f"unknown header mode {self.header!r}; choose one of: {', '.join(HEADERS)}")
        if self.backend not in BACKENDS:
            raise ConfigError(f"unknown backend {self.backend!r}; choose one of: {', '.join(BACKENDS)}")
        if self.format not in FORMATS:
            raise ConfigError(f"unknown format {self.format!r}; choose one of: {', '.join(FORMATS)}")
        if not isinstance(self.size, int) or self.size < 1:
            raise ConfigError(f"size must be a positive integer, got {self.size!r}; try --size {DEFAULT_SIZE}")
        if not isinstance(self.context_tokens, int) or self.context_tokens < 0:
            raise ConfigError(f"context_tokens must be >= 0, got {self.context_tokens!r}")
        if self.context_llm:
            from chunkwise.enrich.llm_context import ContextModel

            ContextModel.parse(self.context_llm)
            if self.context_tokens == 0:
                object.__setattr__(self, "context_tokens", 64)
            if self.context_tokens * 2 > self.size:
                raise ConfigError(f"context_tokens {self.context_tokens} takes over half of size {self.size}; "
                                  f"lower --context-tokens or raise --size")
        if not isinstance(self.overlap, int) or self.overlap < 0:
            raise ConfigError(f"overlap must be >= 0, got {self.overlap!r}; use --overlap 0 for none")
        if self.strategy == "sentence_window":
            if self.window < 1:
                raise ConfigError(f"window must be >= 1 sentence, got {self.window}")
            if self.overlap >= self.window:
                raise ConfigError(
                    f"overlap ({self.overlap} sentences) must be smaller than window ({self.window}); "
                    f"lower --overlap to at most {self.window - 1} or raise --window"
                )
        elif self.overlap >= self.size:
            raise ConfigError(
                f"overlap ({self.overlap}) must be smaller than size ({self.size}): each chunk must "
                f"advance; lower --overlap to at most {self.size - 1} (a common choice is "
                f"{max(self.size // 10, 0)}) or raise --size"
            )
        if self.min_tail is not None and not 0 < self.min_tail <= self.size:
            raise ConfigError(f"min_tail must be in 1..size ({self.size}), got {self.min_tail}")
        if self.separators is not None:
            if isinstance(self.separators, (str, bytes)) or not all(
                isinstance(s, str) for s in self.separators
            ):
                raise ConfigError("separators must be a list of strings, e.g. ['\\n\\n', '\\n', ' ', '']")
            object.__setattr__(self, "separators", tuple(self.separators))
        if not isinstance(self.docx_comments, bool):
            raise ConfigError(f"docx_comments must be true or false, got {self.docx_comments!r}")
        if not isinstance(self.language, str):
            raise ConfigError(f"language must be a name such as 'python', got {self.language!r}")
        self._check_semantic()

    def _check_semantic(self) -> None:
        t, p, m, e = self.semantic_threshold, self.semantic_percentile, self.semantic_min_size, self.semantic_embedder
        if t is not None and (not _real(t) or not -1.0 <= t <= 1.0):
            raise ConfigError(f"semantic_threshold is a cosine similarity in -1..1, got {t!r}; try 0.3, "
                              f"or leave it unset to cut below a percentile (semantic_percentile)")
        if not _real(p) or not 0.0 <= p <= 100.0:
            raise ConfigError(f"semantic_percentile must be in 0..100, got {p!r}; the default 10 cuts at the "
                              f"lowest tenth of adjacent-sentence similarities")
        if m is not None and (isinstance(m, bool) or not isinstance(m, int) or not 0 <= m <= self.size):
            raise ConfigError(f"semantic_min_size must be an integer in 0..size ({self.size}), got {m!r}; "
                              f"0 keeps every topic run, unset uses size // 8")
        if not isinstance(e, str) or not e.strip() or (self.strategy == "semantic" and e.strip().lower() == "none"):
            raise ConfigError(f"semantic_embedder must name an embedder such as 'minilm' or 'hashing', got {e!r}: "
                              f"semantic chunking compares sentence vectors")

    def to_json(self) -> str:
        """The form a store records (``settings.config``); ``from_json`` reads it back."""
        import json

        data = asdict(self)
        data.pop("extra", None)
        return json.dumps(data, default=list, sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> "ChunkConfig":
        import json

        data = json.loads(text)
        data.pop("extra", None)
        data["separators"] = tuple(data["separators"]) if data.get("separators") else None
        known = {f for f in cls.__dataclass_fields__}
        return cls(**{k: v for k, v in data.items() if k in known})

    def differences(self, other: "ChunkConfig") -> list[str]:
        """``field a -> b`` for every field that differs (for messages)."""
        mine, theirs = asdict(self), asdict(other)
        return [f"{k} {mine[k]!r} -> {theirs[k]!r}" for k in mine if k != "extra" and mine[k] != theirs[k]]

    def fingerprint(self) -> str:
        """A stable 16-hex id of every field that changes chunk boundaries or embedded text (DOCX
        comments are extracted text), and of
        the Markdown parser that finds the structure (see ``chunking.markdown.markdown_backend``)."""
        from chunkwise.chunking.markdown import markdown_backend

        data = asdict(self)
        data.pop("extra", None)
        if not self.language:  # only code documents set it: every other fingerprint stays as it was
            del data["language"]
        if not self.description:  # set per document for header "context" only
            del data["description"]
        if not self.context_llm and not self.context_tokens:  # opt-in: other fingerprints stay as they were
            del data["context_llm"], data["context_tokens"]
        if not self.docx_comments:  # opt-in: stores built without it keep their fingerprint
            del data["docx_comments"]
        if self.strategy != "semantic":  # unused: leave every other strategy's fingerprint as it was
            for key in [k for k in data if k.startswith("semantic_")]:
                del data[key]
        data["markdown_parser"] = markdown_backend()
        return ids.fingerprint(data, 16)
