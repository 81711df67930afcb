"""Sentences that run across a page break, joined so that no chunker cuts them at the page end.

A PDF's extractor lays each page's blocks out in order with a blank line between pages (a
``page_break`` block spans it). To every chunker a blank line is a paragraph break, the cut it likes
best, so a sentence that starts at the bottom of one page and ends at the top of the next was cut in
two, and a question whose answer is that sentence could not be answered from one chunk. When the
last paragraph of a page stops mid-sentence and the first paragraph of the next page (after its
running header, when that is removed) goes on in lowercase, they are one paragraph to a reader, and
they become one here: the gap (blank line, footer, header, page number) is replaced by one line
break, so a word hyphenated across the page is repaired like any line-end hyphenation, and the two
paragraph blocks become one. Offsets still map back to the original through the edit.
"""
from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass, replace
from typing import Sequence

from chunkwise.types import Block, Document

TERMINAL = frozenset(".!?:;\u2026")  # a paragraph that ends in one of these ends its sentence
CLOSERS = "\"')]\u00bb\u201d\u2019"  # closing quotes and brackets after the sentence's end


@dataclass(frozen=True)
class Crossing:
    """Blocks ``first`` and ``second`` (indexes into ``doc.blocks``) are one paragraph across a page
    break; ``gap`` is the original text between their visible characters."""

    first: int
    second: int
    gap: tuple[int, int]


def page_crossings(doc: Document, removed: Sequence[tuple[int, int]] = ()) -> tuple[Crossing, ...]:
    """Where a paragraph continues on the next page (see the module rules). ``removed``: sorted,
    disjoint original spans that normalisation drops (running headers, footers, page numbers)."""
    if len(doc.pages) < 2 or not doc.blocks:
        return ()
    starts = [p.start for p in doc.pages]
    visible = _Visible(doc.text, removed)
    content = [(i, b, visible.first(b.start, b.end), visible.last(b.start, b.end))
               for i, b in enumerate(doc.blocks) if b.kind != "page_break"]
    content = [(i, b, a, z) for i, b, a, z in content if a is not None]
    out: list[Crossing] = []
    for (i, a, _, a_end), (j, b, b_start, _) in zip(content, content[1:]):
        if a.kind != "paragraph" or b.kind != "paragraph" or a.meta.get("role") or b.meta.get("role"):
            continue
        if bisect_right(starts, b_start) - bisect_right(starts, a_end - 1) != 1:
            continue  # not on consecutive pages
        tail = doc.text[a.start:a_end].rstrip().rstrip(CLOSERS)
        if not tail or tail[-1] in TERMINAL or not doc.text[b_start].islower():
            continue
        out.append(Crossing(i, j, (a_end, b_start)))
    return tuple(out)


def join_edits(removed: Sequence[tuple[int, int]], crossings: Sequence[Crossing]) -> list[tuple[int, int, str]]:
    """The edits of header removal plus the joins: each crossing's gap becomes one line break (the
    removed spans inside a gap go with it)."""
    gaps = sorted(c.gap for c in crossings)
    edits = [(s, e, "\n") for s, e in gaps]
    k = 0
    for s, e in removed:
        while k < len(gaps) and gaps[k][1] <= s:
            k += 1
        if k < len(gaps) and gaps[k][0] <= s and e <= gaps[k][1]:
            continue
        edits.append((s, e, ""))
    return sorted(edits)


def merge_blocks(blocks: Sequence[Block], crossings: Sequence[Crossing]) -> tuple[Block, ...]:
    """``blocks`` with each crossing's paragraphs as one (the page breaks and the removed furniture
    between them dropped; a paragraph may run on over several pages); the merged block keeps the
    first page and records the last (``meta["page_end"]``) and the boxes of every part (``meta["boxes"]``)."""
    if not crossings:
        return tuple(blocks)
    ends = {c.first: c.second for c in crossings}
    out, i = [], 0
    while i < len(blocks):
        b, last = blocks[i], i
        boxes = list(b.meta.get("boxes", ()))
        while last in ends:  # a paragraph may run on over several pages
            last = ends[last]
            boxes += blocks[last].meta.get("boxes", ())  # one box per page it runs over
        if last != i:
            tail = blocks[last]
            meta = {**b.meta, "page_end": tail.meta.get("page_end", tail.meta.get("page"))}
            if boxes:
                meta["boxes"] = tuple(boxes)
            b = replace(b, end=max(b.end, tail.end), meta=meta)
        out.append(b)
        i = last + 1
    return tuple(out)


class _Visible:
    """The first and last characters of a range that are neither whitespace nor removed."""

    def __init__(self, text: str, removed: Sequence[tuple[int, int]]):
        self.text, self.removed = text, list(removed)
        self.starts = [s for s, _ in self.removed]

    def _hidden(self, pos: int) -> tuple[int, int] | None:
        k = bisect_right(self.starts, pos) - 1
        if k >= 0 and self.removed[k][0] <= pos < self.removed[k][1]:
            return self.removed[k]
        return None

    def first(self, start: int, end: int) -> int | None:
        pos = start
        while pos < end:
            span = self._hidden(pos)
            if span is not None:
                pos = span[1]
            elif self.text[pos].isspace():
                pos += 1
            else:
                return pos
        return None

    def last(self, start: int, end: int) -> int | None:
        """One past the last visible character."""
        pos = end - 1
        while pos >= start:
            span = self._hidden(pos)
            if span is not None:
                pos = span[0] - 1
            elif self.text[pos].isspace():
                pos -= 1
            else:
                return pos + 1
        return None
