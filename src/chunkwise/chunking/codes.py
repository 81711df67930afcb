"""A document's characters as one numpy array of code points, made once per document.

Why: the token index (``token_index``), the word ends (``word_ends``) and the packer's flat top level
(``flat``) each read every character of the same text as numbers; each encoded it on its own (a
UTF-32 copy is 4 bytes a character: 23 MB for a 5.8 MB file, three times over, each page of it a
fresh page fault in a contained worker). The last document's array is kept (one entry, by identity)
while that document is chunked; ``forget`` drops it after (a server or an integration must not keep
the last document's text and its 4-byte-a-character copy alive for the life of the process).
"""
from __future__ import annotations

import numpy as np

_last: tuple[str, np.ndarray | None] | None = None


def char_codes(text: str) -> np.ndarray | None:
    """``text``'s code points: uint8 when it is ASCII, else uint32; None when it holds a lone
    surrogate (it cannot be encoded). Read-only."""
    global _last
    last = _last
    if last is not None and last[0] is text:
        return last[1]
    if text.isascii():
        codes = np.frombuffer(text.encode("ascii"), dtype=np.uint8)
    else:
        try:
            codes = np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32)
        except UnicodeEncodeError:  # lone surrogates
            codes = None
    _last = (text, codes)
    return codes


def forget(text: str) -> None:
    """Drop the kept array if it is ``text``'s (the chunker is done with that document)."""
    global _last
    last = _last
    if last is not None and last[0] is text:
        _last = None
