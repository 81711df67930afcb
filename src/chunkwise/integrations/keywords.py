"""Each framework's splitter keywords, mapped onto ``chunkwise chunk``'s options.

A user moving from ``RecursiveCharacterTextSplitter(chunk_size=500, chunk_overlap=50)``,
``SentenceSplitter(chunk_size=...)`` or Haystack's ``DocumentSplitter(split_by="word",
split_length=200)`` passes the same keywords here. Keywords that have a chunkwise meaning are
translated; those that cannot mean the same thing (a custom ``length_function``, hand-written
separators outside the recursive strategy) are refused with a one-line error saying what to use instead, never silently ignored.
An option given twice (``size`` and ``chunk_size``) is an error too.
"""
from __future__ import annotations

from dataclasses import fields
from typing import Any

from chunkwise import api

OPTIONS = frozenset(f.name for f in fields(api.ChunkConfig) if f.name != "extra")
# framework keyword -> chunkwise option (a unit is set too where the keyword implies one)
ALIASES = {
    "langchain": {"chunk_size": "size", "chunk_overlap": "overlap"},
    "llamaindex": {"chunk_size": "size", "chunk_overlap": "overlap"},
    "haystack": {"split_length": "size", "split_overlap": "overlap"},
}
# keywords whose only value chunkwise can honour is the one it always has
ALWAYS = {"add_start_index": True, "strip_whitespace": False, "keep_separator": True}
REFUSED = {
    "length_function": "chunkwise measures size in unit='tokens' (tokenizer='minilm', 'cl100k_base' or a "
                       "tokenizer.json), 'words' or 'chars'; pass unit= and tokenizer= instead",
    "separator": "chunkwise finds boundaries by document structure; choose strategy= instead of separator",
    "paragraph_separator": "chunkwise finds paragraphs itself; choose strategy= instead of paragraph_separator",
    "is_separator_regex": "chunkwise finds boundaries by document structure; choose strategy= instead",
    "tokenizer_name": "pass tokenizer= ('minilm', 'cl100k_base' or a path to a tokenizer.json)",
    "split_threshold": "chunkwise merges short pieces itself under the cap; there is no split_threshold",
    "respect_sentence_boundary": "chunkwise keeps sentences whole by default (strategy='auto' or 'sentence')",
}
HAYSTACK_SPLIT_BY = {"word": "words"}  # split_by -> unit; sentences, passages, pages: a strategy, not a unit


def chunk_options(framework: str, options: dict[str, Any]) -> dict[str, Any]:
    """``options`` with ``framework``'s keywords translated to chunkwise's (a ConfigError for a
    keyword that cannot map, or for one option given under two names)."""
    aliases = ALIASES[framework]
    out: dict[str, Any] = {}
    for key, value in options.items():
        if key in REFUSED:
            raise api.ConfigError(f"{key}: not supported by chunkwise's splitter; {REFUSED[key]}")
        if key in ALWAYS:
            if value != ALWAYS[key]:
                raise api.ConfigError(f"{key}={value!r}: chunkwise's splitter always works as {key}={ALWAYS[key]!r} "
                                      "(exact offsets into the source text)")
            continue
        if framework == "haystack" and key == "split_by":
            if value not in HAYSTACK_SPLIT_BY:
                raise api.ConfigError(f"split_by={value!r}: chunkwise sizes chunks in words, tokens or chars and keeps "
                                      f"sentences and sections whole by itself; use split_by='word', or unit= with "
                                      f"strategy= ('sentence', 'structure', ...)")
            key, value = "unit", HAYSTACK_SPLIT_BY[value]
        name = aliases.get(key, key)
        if name not in OPTIONS:
            raise api.ConfigError(f"{key}: not an option of chunkwise's splitter; options: {', '.join(sorted(OPTIONS))} "
                                  f"(and {', '.join(aliases)})")
        if name in out:
            raise api.ConfigError(f"{key}: the same option as {name!r}, given twice; pass one")
        out[name] = value
    if out.get("separators") is not None:  # LangChain's recursive separators: honoured by strategy "recursive" only
        if out.setdefault("strategy", "recursive") != "recursive":
            raise api.ConfigError(f"separators apply to strategy='recursive', not {out['strategy']!r}; drop one")
    return out
