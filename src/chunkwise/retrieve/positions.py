"""Positions in a document (character offsets, chunk indices) for callers who may read all of it.

Why (issue 25, items 2 and 6): offsets are positions in the *whole* document. A caller who may
read the chunk at characters 120-480 and the one at 9,120-9,480, but nothing between, learns that
9,000 characters they may not read sit there (a restricted section's length), and a gap in chunk
indices counts the chunks hidden between two visible ones. Renumbering over the visible text would
still differ from the document's own offsets exactly where something is hidden, so the rule is
simpler: a caller gets a document's positions only when they may read every chunk of it (every
chunk ``ready`` and sharing a tag with their groups). Otherwise ``start_char``, ``end_char`` and
``chunk_index`` are ``null``, chunk boundaries are not listed, and omission messages and citations
name no characters; chunk ids, heading paths, page numbers and text are still served. What such a
caller learns is one bit per document they can already see: that it holds something they may not read.
"""
from __future__ import annotations

import re
from typing import Iterable

from chunkwise.access import permitted

_CHARS = re.compile(r",? ?\bchars \d+-\d+")


def partial(chunks: Iterable, groups) -> bool:
    """Whether ``groups`` may not read some chunk of a document (``chunks``: all of its chunks,
    each with ``acl`` and ``quality``; a secured PostgreSQL store's stand-ins for hidden ones count)."""
    return any(not permitted(c.acl, c.quality, groups) for c in chunks)


def withheld(source, doc_ids: Iterable[str], groups) -> frozenset[str]:
    """The documents among ``doc_ids`` whose positions ``groups`` may not be given. A store-backed
    ``source`` has ``permitted_counts(doc_ids, groups)``: per document, how many chunks the caller
    may read (counted through the permission filter, no hidden row read) and the document row's
    chunk count, so the cost does not grow with what is hidden (the timing rule of
    ``visible_document``). Another ``source`` has ``doc_chunks(doc_id)`` (every chunk, any quality),
    as expansion reads it; None (hits ranked in memory by a trusted caller such as the evaluation,
    no store behind them) withholds nothing."""
    if source is None:
        return frozenset()
    counts = getattr(source, "permitted_counts", None)
    if counts is not None:
        return frozenset(d for d, (seen, total) in counts(set(doc_ids), groups).items() if seen != total)
    return frozenset(d for d in set(doc_ids) if partial(source.doc_chunks(d), groups))


def without_chars(text: str) -> str:
    """A message with its ``chars N-M`` positions taken out."""
    return _CHARS.sub("", text)


def hide_span(d: dict) -> dict:
    """A dict with ``start_char``/``end_char`` (a hit, a version reference, a result) without them,
    and without its PDF ``boxes``: a box covers a whole block, so it shows where on the page the
    unreadable part of a block lies, as offsets would."""
    if "start_char" not in d:
        return d
    return {**d, "start_char": None, "end_char": None, **({"boxes": []} if "boxes" in d else {})}


def hide_record(record: dict) -> dict:
    """A served record without its positions (offsets, chunk index and boxes)."""
    return {**record, "start_char": None, "end_char": None, "chunk_index": None,
            **({"boxes": []} if "boxes" in record else {})}
