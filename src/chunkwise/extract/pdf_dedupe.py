"""pdfplumber's ``Page.dedupe_chars`` with the same answer in linear time.

Why: pdfplumber 0.11 puts the kept characters back in page order with ``sorted(kept,
key=chars.index)``, a linear search per character: quadratic in the page's characters. On the
overprinted pages of ``DA-619p.pdf`` (bold faked by drawing each glyph twice) that one sort was a
sixth of the file's extraction. Here ``chars`` is a list whose ``index`` answers from a table, with
``list.index``'s exact meaning (the first element that *is* or *equals* the character), so the
characters kept, and their order, are pdfplumber's own.
"""
from __future__ import annotations


class _Indexed(list):
    """The page's characters, with ``index`` looked up instead of searched."""

    def __init__(self, chars) -> None:
        super().__init__(chars)
        self._at: dict[tuple, list[int]] = {}
        for i, c in enumerate(self):  # equal characters share text and position: candidates
            self._at.setdefault(_spot(c), []).append(i)

    def index(self, c, *args) -> int:  # type: ignore[override]
        if args:
            return super().index(c, *args)
        for i in self._at.get(_spot(c), ()):
            if self[i] is c or self[i] == c:
                return i
        return super().index(c)  # not there: list.index's ValueError


def _spot(c) -> tuple:
    return (c.get("text"), c.get("x0"), c.get("doctop"))


def dedupe_chars(page):
    """``page.dedupe_chars()`` (pdfplumber's defaults): a page whose characters drawn twice on one
    spot are kept once."""
    from pdfplumber.page import FilteredPage
    from pdfplumber.utils import dedupe_chars as dedupe

    out = FilteredPage(page, lambda obj: True)
    out._objects = dict(page.objects)  # as pdfplumber's own method builds it
    out._objects["char"] = dedupe(_Indexed(page.chars))
    return out
