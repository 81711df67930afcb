"""Where every token of a document starts, from one tokenizer pass, so any slice can be counted by
two binary searches instead of being tokenised again.

Why: the packer measures a document many times over (segments, then sentences or words inside the
long ones, then the final chunks), and each measure built a slice and tokenised it. For a WordPiece
tokenizer whose pre-tokenizer splits on whitespace and punctuation (BERT's, MiniLM's), the tokens of
``text[a:b]`` are exactly the tokens of the whole text that start inside ``[a, b)`` whenever ``a``
and ``b`` are pre-token boundaries: a cut with whitespace or an ASCII punctuation mark on one side.
Cuts between two other characters (inside a word) are counted the old way, slice by slice.

How the starts are found without offsets (tokie's offsets are bytes into the *normalised* text and
cost more than the pass itself to read from Python): every non-blank character of the normalised
text belongs to exactly one token, in order, and a token's length is its vocabulary string's
(``##`` dropped). So the k-th normalised character is mapped back to the source character that
produced it, and each token's start is the source position of its first character. The sums are
checked (token lengths must add up to the normalised characters) and any doubt - an unknown token,
a control character, a text that cannot be encoded - gives ``None``: the caller counts slices.
"""
from __future__ import annotations

import re
import unicodedata
from typing import Callable, Sequence

import numpy as np

from chunkwise.chunking.codes import char_codes, forget

# ASCII classes: a pre-token boundary sits next to whitespace or punctuation (BERT splits both).
_BLANKS = (9, 10, 13, 32)
_ASCII_SPLIT = np.zeros(128, dtype=bool)
for _c in range(128):
    _ch = chr(_c)
    _ASCII_SPLIT[_c] = _ch in " \t\n\r" or (32 < _c < 127 and not _ch.isalnum())


# Python calls it whitespace, BERT deletes it (a control character): a word may run across it.
_SOFT_BLANK = re.compile("\x85")
# An unknown token ([UNK]) stands for a whole pre-token whose length is found from the text, one at
# a time; past this many a document is counted slice by slice.
MAX_UNKNOWN = 2048
# A token index answers this many positions or more with a table of every position (``_ends_before``);
# below it, by binary search (a table costs ~1 ns a character to build, a search ~20 ns a position).
_TABLE_AFTER = 32
# BERT's CJK ideograph ranges: each such character is a pre-token of its own.
_CJK = ((0x4E00, 0x9FFF), (0x3400, 0x4DBF), (0x20000, 0x2A6DF), (0x2A700, 0x2B73F), (0x2B740, 0x2B81F),
        (0x2B820, 0x2CEAF), (0xF900, 0xFAFF), (0x2F800, 0x2FA1F))


def _alone(ch: str) -> bool:
    """A character BERT's pre-tokenizer makes a pre-token of its own: punctuation or a CJK ideograph."""
    c = ord(ch)
    if c < 128:
        return bool(_ASCII_SPLIT[c]) and not ch.isspace()
    return unicodedata.category(ch).startswith("P") or any(a <= c <= b for a, b in _CJK)


def _blank(low: np.ndarray) -> np.ndarray:
    """Where ``low`` (ASCII codes) holds a blank, by four comparisons (a table lookup per
    character took four times as long on a 6 MB text)."""
    out = low == _BLANKS[0]
    for b in _BLANKS[1:]:
        out |= low == b
    return out


def _measure_unknown(text: str, lens: np.ndarray, unknown: np.ndarray, source: np.ndarray) -> bool:
    """Set each [UNK]'s length: the normalised characters of the pre-token it replaces (a run up to
    whitespace or a character that stands alone, or that one character). False when lost."""
    n = len(text)
    cum = np.cumsum(lens)
    shift = 0  # how much the lengths already set moved the running sums
    for u in unknown.tolist():
        k = int(cum[u] - lens[u]) + shift  # the unknown's first normalised character
        if k >= source.size:
            return False
        j = int(source[k])
        if _alone(text[j]):
            end = j + 1
        else:
            end = j + 1
            while end < n and not text[end].isspace() and not _alone(text[end]):
                end += 1
        length = int(np.searchsorted(source, end)) - k
        if length < 1:
            return False
        shift += length - int(lens[u])
        lens[u] = length
    return True


class TokenIndex:
    """Token starts of one text (source character positions, ascending) and, per position, whether
    a cut there is a pre-token boundary (so a slice's count can be read off the starts)."""

    __slots__ = ("starts", "safe", "_before")

    def __init__(self, starts: np.ndarray, safe: np.ndarray) -> None:
        self.starts = starts
        self.safe = safe
        self._before: np.ndarray | None = None  # per position, the tokens starting before it (built on need)

    def _ends_before(self, p: np.ndarray) -> np.ndarray:
        """The tokens starting before each position of ``p``: ``searchsorted(starts, p)``. For many
        positions (a fixed window's every word end: ~160,000 a MB) a table of all ``len + 1``
        positions is read instead: one gather, ~6x cheaper than the binary searches it replaces."""
        if self._before is None and p.size * _TABLE_AFTER >= self.safe.size:
            starts = self.starts
            if (starts[1:] > starts[:-1]).all():
                before = np.zeros(self.safe.size, dtype=np.int32)  # one a position: 4 bytes a character
                before[starts + 1] = 1  # distinct starts (a character making several tokens: no table)
                np.cumsum(before, out=before)
                self._before = before
        if self._before is not None:
            return self._before[p]
        return np.searchsorted(self.starts, p)

    def count(self, starts: Sequence[int], ends: Sequence[int], slow: Callable[[int, int], int]) -> list[int]:
        """Tokens of each ``text[a:b]``; spans with an edge inside a word are given to ``slow``."""
        a = np.fromiter(starts, dtype=np.int64, count=len(starts))
        b = np.fromiter(ends, dtype=np.int64, count=len(ends))
        return self.count_array(a, b, slow).tolist()

    def count_array(self, a: np.ndarray, b: np.ndarray, slow: Callable[[int, int], int]) -> np.ndarray:
        """``count`` of spans given as int64 arrays, as an array (the packer's flat top level)."""
        out = np.subtract(self._ends_before(b), self._ends_before(a), dtype=np.int64)
        for i in np.flatnonzero(~(self.safe[a] & self.safe[b])).tolist():
            out[i] = slow(int(a[i]), int(b[i]))
        return out


def build(text: str, ids: np.ndarray, token_chars: np.ndarray, unk: int,
          normalised_chars: Callable[[str], int]) -> TokenIndex | None:
    """The index of ``text`` from its token ``ids`` (no special tokens); ``token_chars[id]`` is the
    characters a token covers in the normalised text and ``normalised_chars(ch)`` the non-blank
    characters the normaliser makes of a non-ASCII character. None when the mapping is not exact."""
    n = len(text)
    if ids.size and int(ids.max()) >= token_chars.size or _SOFT_BLANK.search(text):
        return None
    lens = token_chars[ids]
    unknown = np.flatnonzero(ids == unk) if unk >= 0 else np.zeros(0, dtype=np.int64)
    if unknown.size > MAX_UNKNOWN:
        return None
    if unknown.size:
        lens = lens.copy()
        lens[unknown] = 1  # placeholders until each is measured below
    if (lens <= 0).any():
        return None
    code = char_codes(text)
    if code is None:  # lone surrogates
        return None
    if code.dtype == np.uint8:  # ASCII
        source = np.flatnonzero(~_blank(code))  # the k-th normalised character's position
        split = _ASCII_SPLIT[code]
    else:
        high = code >= 128
        low = code.astype(np.uint8) & 127  # one byte a character; non-ASCII ones are set below
        per_char = (~_blank(low)).view(np.int8)  # 1 a character, 0 a blank
        split = _ASCII_SPLIT[low] & ~high
        del low
        if high.any():
            where = np.flatnonzero(high)
            uniq, inverse = np.unique(code[where], return_inverse=True)
            made = [min(normalised_chars(chr(c)), 127) for c in uniq.tolist()]  # 127: no exact sum, no index
            per_char[where] = np.array(made, dtype=np.int8)[inverse]
            del where, inverse
        del code, high
        if int(per_char.max(initial=0)) <= 1:  # every character makes at most one: no repeat needed
            source = np.flatnonzero(per_char.view(bool))  # 0s and 1s: a bool's bytes (twice as fast)
        else:
            source = np.repeat(np.arange(n, dtype=np.int64), per_char)
        del per_char
    if unknown.size and not _measure_unknown(text, lens, unknown, source):
        return None
    if int(lens.sum()) != source.size:
        return None
    first = np.cumsum(lens) - lens  # each token's first normalised character
    starts = source[first] if first.size else np.zeros(0, dtype=np.int64)
    del source, first
    safe = np.ones(n + 1, dtype=bool)
    if n > 1:
        safe[1:n] = split[:-1] | split[1:]
    return TokenIndex(starts, safe)


def block_cuts(text: str, block: int) -> list[int] | None:
    """Cuts splitting ``text`` into pieces of under ``block`` characters, each but the first starting
    at a space or a newline (a pre-token boundary: the tokens of the whole are the pieces' tokens in
    turn), with 0 and ``len(text)``; None when ``block`` characters in a row hold neither."""
    cuts, n = [0], len(text)
    while n - cuts[-1] >= block:
        a = cuts[-1]
        p = max(text.rfind(" ", a + 1, a + block), text.rfind("\n", a + 1, a + block))
        if p <= a:
            return None
        cuts.append(p)
    cuts.append(n)
    return cuts


def build_blocks(text: str, cuts: Sequence[int], encode: Callable[[str], np.ndarray], token_chars: np.ndarray,
                 unk: int, normalised_chars: Callable[[str], int]) -> TokenIndex | None:
    """``build`` of a long ``text`` a block at a time (``cuts``: ``block_cuts``'s; ``encode(piece)``:
    its ids), the same index.
    Why: the arrays ``build`` makes take ~30 bytes a character while it runs; here only a block's
    are alive at once (reused from block to block: a third of the page faults of one pass on a
    5.8 MB text), and what is kept is the starts and safe cuts (~3 bytes a character)."""
    starts, safe, unknown = [], [], 0
    for a, b in zip(cuts, cuts[1:]):
        piece = text[a:b]
        ids = encode(piece)
        if unk >= 0:
            unknown += int(np.count_nonzero(ids == unk))
            if unknown > MAX_UNKNOWN:  # the document's limit, as for one pass
                return None
        index = build(piece, ids, token_chars, unk, normalised_chars)
        forget(piece)  # its code points are not kept past its block
        if index is None:
            return None
        starts.append(index.starts + a)
        safe.append(index.safe[:-1])  # a block's end is the next one's start: a blank, so a safe cut
    safe.append(np.ones(1, dtype=bool))
    return TokenIndex(np.concatenate(starts), np.concatenate(safe))
