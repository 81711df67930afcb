"""Page furniture an extractor reports but nobody should chunk: spans to drop, with the offset map kept.

An HTML page's menus, sidebars, "related articles" and footers are text of the page (Docling's
groundtruth keeps them, ``chunkwise extract`` shows them) but not of the article: in a chunk they
dilute its embedding and match queries about the site instead of the topic. The HTML extractor
writes them as blocks with ``meta["role"] == "furniture"``; normalisation removes them like running
headers, so chunks never hold them while every offset still points into the extracted text.
"""
from __future__ import annotations

from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import replace

from chunkwise.normalise.offsets import apply_edits
from chunkwise.types import Block, Document

ROLE = "furniture"


def is_furniture(block: Block) -> bool:
    return block.meta.get("role") == ROLE


def furniture_spans(blocks: Sequence[Block], tidy: bool = True) -> list[tuple[int, int]]:
    """Sorted, disjoint spans covering each run of furniture blocks with the separator after it. A
    run that ends the text takes the separator before it only when ``tidy``: normalisation keeps that
    one, so the end of the last main block maps back to itself and not past the removed run (an offset
    at the edge of a deletion maps to its far side)."""
    out: list[tuple[int, int]] = []
    i, n = 0, len(blocks)
    while i < n:
        if not is_furniture(blocks[i]):
            i += 1
            continue
        j = i
        while j + 1 < n and is_furniture(blocks[j + 1]):
            j += 1
        if j + 1 < n:
            out.append((blocks[i].start, blocks[j + 1].start))
        elif i > 0 and tidy:
            out.append((blocks[i - 1].end, blocks[j].end))
        else:
            out.append((blocks[i].start, blocks[j].end))
        i = j + 1
    return out


def without_furniture(doc: Document) -> str:
    """The document's text as chunking sees it before character repairs: furniture runs removed."""
    return apply_edits(doc.text, [(s, e, "") for s, e in furniture_spans(doc.blocks)]).text


def strip_furniture(doc: Document) -> Document:
    """The document without its furniture: text and blocks as if it had never been written (the main
    content alone; what ``html.extract`` returned before furniture was reported)."""
    spans = furniture_spans(doc.blocks)
    if not spans:
        return doc
    norm = apply_edits(doc.text, [(s, e, "") for s, e in spans])
    to_orig = norm.to_original

    def fwd(o: int) -> int:
        return bisect_left(to_orig, o)

    def moved(b: Block) -> Block:
        meta = b.meta
        if "rows" in meta:  # a table's row spans move with it
            meta = {**meta, "rows": [(fwd(s), fwd(e)) for s, e in meta["rows"]]}
        return replace(b, start=fwd(b.start), end=fwd(b.end), meta=meta)

    return replace(doc, text=norm.text, body_start=fwd(doc.body_start),
                   blocks=tuple(moved(b) for b in doc.blocks if not is_furniture(b)))
