"""The chunk-setting flags every command shares (one name, one meaning), and small argparse types."""
from __future__ import annotations

import argparse

from chunkwise import api
from chunkwise.api import BACKENDS, HEADERS, STRATEGIES, UNITS
from chunkwise.cli.extract import add_docx_comments


def _chunk_options(p: argparse.ArgumentParser, stored: bool = False) -> None:
    """The chunk settings, one name and one meaning for every command. ``stored``: ingest, where an
    option not given keeps the store's recorded value (a new store: the default shown)."""
    def add(flag, default, text, **kw):
        if stored:
            text += f" (default: the store's; a new store: {default})" if default is not None else " (default: the store's)"
            default = None
        elif default not in (None, False):
            text += f" (default: {default})"
        p.add_argument(flag, default=default, help=text, **kw)

    add("--strategy", "auto", "chunking strategy", choices=STRATEGIES)
    add("--size", api.DEFAULT_SIZE, "hard cap per chunk, in --unit (MiniLM reads up to 254 whole)", type=int)
    add("--overlap", 0, "overlap in units (sentences for sentence_window)", type=int)
    add("--unit", "tokens", "what --size counts", choices=UNITS)
    add("--tokenizer", "minilm", "'minilm', 'cl100k_base', or a path to a tokenizer.json")
    add("--backend", "auto", "tokenizer implementation", choices=BACKENDS)
    add("--header", "none", "contextual header in the embedded text, counted in the cap", choices=HEADERS)
    _context_options(p, keep_store=stored)
    add("--window", 3, "sentences per window (sentence_window)", type=int)
    p.add_argument("--special-tokens", action="store_true", default=None if stored else False,
                   help="count [CLS]/[SEP] in every chunk")
    add_docx_comments(p, default=None if stored else False)  # None: the store's recorded choice
    _semantic_options(p)


def _context_options(p: argparse.ArgumentParser, keep_store: bool) -> None:
    """``--context-llm``/``--context-tokens``; ``keep_store``: unset means the store's recorded choice."""
    p.add_argument("--context-llm", default=None if keep_store else "", metavar="URL#MODEL",
                   help="an OpenAI-compatible chat model writes each chunk's context into its embedded text "
                        "(key from CHUNKWISE_CONTEXT_API_KEY; answers cached by content hash)")
    p.add_argument("--context-tokens", type=int, default=None if keep_store else 0,
                   help="of the cap, kept for that context (default 64 with --context-llm)")


def _semantic_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--semantic-threshold", type=float, default=None,
                   help="semantic: cut where adjacent sentences' cosine is below this (-1..1)")
    p.add_argument("--semantic-percentile", type=float, default=None,
                   help="semantic: without a threshold, cut below this percentile of similarities (default 10)")
    p.add_argument("--semantic-min-size", type=int, default=None, help="semantic: merge topic runs smaller than this")
    p.add_argument("--semantic-embedder", default=None, help="semantic: sentence embedder (default minilm-onnx-int8; minilm: fp32)")


_SEMANTIC_FLAGS = ("semantic_threshold", "semantic_percentile", "semantic_min_size", "semantic_embedder")
_CHUNK_FLAGS = ("strategy", "size", "overlap", "unit", "tokenizer", "backend", "header", "window", "special_tokens",
                "docx_comments", "context_llm", "context_tokens", *_SEMANTIC_FLAGS)
_DEFAULTS = {"strategy": "auto"}


def _positive(kind):
    """An argparse type: a number above zero, else a one-line usage error (exit 2)."""
    def parse(text: str):
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a {kind.__name__}") from None
        if not value > 0:
            raise argparse.ArgumentTypeError(f"must be above 0, got {text}")
        return value

    parse.__name__ = kind.__name__
    return parse


def _passage_budget(text: str) -> int | None:
    """``--passage-budget``: tokens, or ``none`` for passages that merge without bound."""
    return None if text.strip().lower() == "none" else _positive(int)(text)


_PASSAGE_HELP = ("tokens one merged passage may grow to around its best hit (default "
                 f"{api.DEFAULT_PASSAGE_BUDGET}; 'none': unbounded)")
