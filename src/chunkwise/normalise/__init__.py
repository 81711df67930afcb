"""Pure text repair with an offset map back to the original.

``normalise(text).text`` is what gets stored and embedded; ``normalise(text).original_span(a, b)``
says where a normalised span came from, so chunk offsets keep pointing into the original text.
"""
from __future__ import annotations

from chunkwise.normalise.headers import (
    MIN_PAGES,
    RunningLines,
    find_repeated_lines,
    line_key,
    running_lines,
    strip_repeated_lines,
)
from chunkwise.normalise.furniture import furniture_spans, is_furniture, strip_furniture, without_furniture
from chunkwise.normalise.headings import heading_label
from chunkwise.normalise.offsets import Normalised, OffsetMap, apply_edits
from chunkwise.normalise.pages import Crossing, join_edits, merge_blocks, page_crossings
from chunkwise.normalise.repair import (
    CHARACTER_STEPS,
    STEPS,
    collapse_whitespace,
    fold_ligatures,
    nfc,
    remove_invisible,
    remove_soft_hyphens,
    repair_hyphenation,
)
from chunkwise.types import Document

__all__ = [
    "CHARACTER_STEPS",
    "Crossing",
    "MIN_PAGES",
    "RunningLines",
    "fold_ligatures",
    "furniture_spans",
    "is_furniture",
    "strip_furniture",
    "without_furniture",
    "heading_label",
    "running_lines",
    "Normalised",
    "OffsetMap",
    "STEPS",
    "apply_edits",
    "collapse_whitespace",
    "find_repeated_lines",
    "line_key",
    "nfc",
    "normalise",
    "normalise_document",
    "normalise_paged",
    "merge_blocks",
    "page_crossings",
    "remove_invisible",
    "remove_soft_hyphens",
    "repair_hyphenation",
    "strip_repeated_lines",
]


def normalise(text: str) -> Normalised:
    """Apply every step in ``STEPS`` in order; the map points into ``text``. Linear time, idempotent."""
    result = Normalised.identity(text)
    for step in STEPS:
        result = result.then(step(result.text))
    return result


def normalise_document(doc: Document, *, strip_headers: bool = True, min_share: float = 0.6) -> Normalised:
    """Normalise a whole Document; for a paged one (PDF), running headers, footers and page numbers
    are removed first and a paragraph that runs on across a page break is joined. The map points
    into ``doc.text``."""
    return normalise_paged(doc, strip_headers=strip_headers, min_share=min_share)[0]


def normalise_paged(doc: Document, *, strip_headers: bool = True,
                    min_share: float = 0.6) -> tuple[Normalised, tuple[Crossing, ...]]:
    """``normalise_document`` and the page crossings it joined (``merge_blocks`` merges their blocks)."""
    removed = running_lines(doc, min_share=min_share).spans if strip_headers and doc.pages else ()
    if furniture := furniture_spans(doc.blocks, tidy=False):  # page furniture an extractor reported (HTML chrome)
        removed = _union(removed, furniture)
    crossings = page_crossings(doc, removed)
    base = apply_edits(doc.text, join_edits(removed, crossings))
    return base.then(normalise(base.text)), crossings


def _union(a, b) -> tuple[tuple[int, int], ...]:
    """Two sets of sorted spans as one sorted, disjoint set (overlaps merged)."""
    out: list[list[int]] = []
    for s, e in sorted([*a, *b]):
        if out and s <= out[-1][1]:
            out[-1][1] = max(out[-1][1], e)
        else:
            out.append([s, e])
    return tuple((s, e) for s, e in out)
