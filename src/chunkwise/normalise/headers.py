"""Running headers, footers and page numbers: found across pages, removed with the offset map kept.

A line that opens or closes most pages ("ACME Corp - Confidential", "Page 3 of 9") is layout, not
content; left in, it lands in the middle of sentences that cross a page break and in every chunk's
embedding. Only the first/last few lines of a page are candidates, so a phrase that merely recurs in
the body is never removed.
"""
from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence

from chunkwise.errors import ConfigError
from chunkwise.normalise.offsets import Edit, Normalised, apply_edits
from chunkwise.types import Document

MAX_HEADER_CHARS = 80
_LINE_RE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)?")
_DIGITS_RE = re.compile(r"\d+")
_ROMAN_RE = re.compile(r"[ivxlcdm]{1,7}", re.IGNORECASE)


def line_key(line: str) -> str:
    """What two header lines must share: the same words, digit runs ignored ("Page 3 of 9" and
    "Page 10 of 9" -> "Page # of #"); a line that is only a roman numeral counts as a page number."""
    key = " ".join(line.split())
    if _ROMAN_RE.fullmatch(key):
        return "#"
    return _DIGITS_RE.sub("#", key)


def edge_lines(page: str, edge: int = 3) -> list[tuple[int, int, str]]:
    """The first and last ``edge`` non-blank lines of a page as ``(start, end, key)``; ``end`` includes
    the line break, so deleting ``[start, end)`` removes the whole line."""
    lines = [(m.start(), m.end(), m.group()) for m in _LINE_RE.finditer(page) if m.group().strip()]
    picked = lines if len(lines) <= 2 * edge else lines[:edge] + lines[-edge:]
    return [(s, e, line_key(t)) for s, e, t in picked]


def find_repeated_lines(pages: Sequence[str], min_share: float = 0.6, edge: int = 3) -> set[str]:
    """Keys (see ``line_key``) of lines found at the top or bottom of at least ``min_share`` of the
    pages that have text, and of at least two pages. Fewer than two such pages: nothing repeats."""
    if not 0 < min_share <= 1:
        raise ConfigError(f"min_share must be in (0, 1], got {min_share}; 0.6 means 'on 60% of pages'")
    with_text = [p for p in pages if p.strip()]
    if len(with_text) < 2:
        return set()
    # Running headers are short; a long line repeated at a page edge is prose that happens to recur
    # (boilerplate paragraphs, generated documents) and is kept.
    counts = Counter(k for p in with_text for k in {key for _, _, key in edge_lines(p, edge)
                                                     if len(key) <= MAX_HEADER_CHARS})
    need = max(2, math.ceil(min_share * len(with_text) - 1e-9))
    return {k for k, c in counts.items() if c >= need}


def strip_repeated_lines(
    doc: Document, lines: set[str] | None = None, *, min_share: float = 0.6, edge: int = 3
) -> Normalised:
    """``doc.text`` without its running headers/footers (found with ``find_repeated_lines`` unless
    ``lines`` is given), mapped back to ``doc.text``. A document without pages is returned unchanged."""
    if not doc.pages:
        return Normalised.identity(doc.text)
    pages = [doc.text[p.start : p.end] for p in doc.pages]
    repeated = find_repeated_lines(pages, min_share, edge) if lines is None else lines
    if not repeated:
        return Normalised.identity(doc.text)
    edits: set[Edit] = set()
    for page, text in zip(doc.pages, pages):
        edits.update((page.start + s, page.start + e, "") for s, e, key in edge_lines(text, edge) if key in repeated)
    return apply_edits(doc.text, sorted(edits))
