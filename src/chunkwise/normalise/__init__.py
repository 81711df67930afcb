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
from chunkwise.normalise.headings import heading_label
from chunkwise.normalise.offsets import Normalised, OffsetMap, apply_edits
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
    "MIN_PAGES",
    "RunningLines",
    "fold_ligatures",
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
    are removed first. The map points into ``doc.text``."""
    base = strip_repeated_lines(doc, min_share=min_share) if strip_headers else Normalised.identity(doc.text)
    return base.then(normalise(base.text))
