"""Every word end of a text in one vectorised scan: the candidates of fixed windows.

Why: a fixed window may end after any word, so a megabyte of prose has ~230,000 candidates; a regex
``finditer`` loop hands each match to Python (~40 ms a MB). The same positions come from a class per
character (blank, word character, or a CJK character that is a word of its own) compared with its
neighbour, in numpy. The classes are Python's: ``str.isspace`` is what ``\\s`` matches, and the CJK
ranges are the packer's, so the result equals the regex scan (a test holds them equal).
"""
from __future__ import annotations

import numpy as np

from chunkwise.chunking.codes import char_codes
from chunkwise.chunking.pack import _CJK

BLANK, WORD, ALONE = 0, 1, 2
# Longer texts are scanned a block of this many characters at a time: the class arrays take ~6 bytes
# a character while built, and a contained worker's whole address space is 2 GB by default.
MAX_CHARS = 8_000_000
_ASCII = np.array([BLANK if chr(c).isspace() else WORD for c in range(128)], dtype=np.int8)
_CJK_RANGES = [(ord(_CJK[i]), ord(_CJK[i + 2])) for i in range(0, len(_CJK), 3)]


def _runs(codes: list[int]) -> list[tuple[int, int]]:
    """Ascending codes as runs of consecutive ones: (first, count)."""
    out: list[tuple[int, int]] = []
    for c in codes:
        if out and sum(out[-1]) == c:
            out[-1] = (out[-1][0], out[-1][1] + 1)
        else:
            out.append((c, 1))
    return out


_BLANK_RUNS = _runs([c for c in range(128) if _ASCII[c] == BLANK])  # (9, 5), (28, 5)


def _ascii_classes(low: np.ndarray) -> np.ndarray:
    """``_ASCII[low]`` for uint8 ASCII codes, by a comparison per run of blanks (the table lookup
    took three times as long on a 6 MB text)."""
    blank = np.zeros(low.shape, dtype=bool)
    for first, count in _BLANK_RUNS:
        blank |= (low - np.uint8(first)) < count  # uint8: below ``first`` wraps round to a large code
    return (~blank).view(np.int8)  # WORD is 1, BLANK 0


def _classes(text: str, cjk_alone: bool) -> np.ndarray | None:
    code = char_codes(text)
    if code is None:  # lone surrogates: left to the regex
        return None
    if code.dtype == np.uint8:  # ASCII
        return _ASCII[code]
    high = code >= 128
    cls = _ascii_classes(code.astype(np.uint8))  # non-ASCII characters are set below
    where = np.flatnonzero(high)
    uniq, inverse = np.unique(code[where], return_inverse=True)
    table = []
    for c in uniq.tolist():
        if cjk_alone and any(a <= c <= b for a, b in _CJK_RANGES):
            table.append(ALONE)
        else:
            table.append(BLANK if chr(c).isspace() else WORD)
    cls[where] = np.array(table, dtype=np.int8)[inverse]
    return cls


def word_ends(text: str, cjk_alone: bool = True, as_array: bool = False) -> list[int] | np.ndarray | None:
    """Ends of the words of ``text`` strictly before its end, ascending: runs of non-blank characters,
    each CJK character a word of its own when ``cjk_alone`` (the packer's ``_FINE_WORD``), else runs
    of non-blank characters (``\\S+``), as an int64 array when ``as_array``. None when the text cannot
    be scanned this way. A text over ``MAX_CHARS`` is scanned ``MAX_CHARS`` characters at a time (an
    end depends only on a character and the one before it), so the class arrays stay that small."""
    if len(text) < 2:
        return np.zeros(0, dtype=np.int64) if as_array else []
    parts = []
    for a in range(0, len(text) - 1, MAX_CHARS):  # each block also holds the next one's first character
        block = text if a == 0 and len(text) <= MAX_CHARS + 1 else text[a : a + MAX_CHARS + 1]
        cls = _classes(block, cjk_alone)
        if cls is None:
            return None
        left, right = cls[:-1], cls[1:]
        end = (left != BLANK) & ((right == BLANK) | (right == ALONE) | (left == ALONE))
        parts.append(np.flatnonzero(end) + (1 + a))
        del block, cls, left, right, end
    ends = parts[0] if len(parts) == 1 else np.concatenate(parts)
    return ends if as_array else ends.tolist()
