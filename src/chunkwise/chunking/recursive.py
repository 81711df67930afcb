"""Separator-driven strategies: paragraphs (then sentences, then words) and recursive separators."""
from __future__ import annotations

from bisect import bisect_left, bisect_right
from itertools import chain, repeat

import numpy as np

from chunkwise.chunking import boundaries
from chunkwise.chunking.base import BaseChunker, Draft, drafts_from_rows
from chunkwise.chunking import charpack
from chunkwise.chunking.codes import char_codes
from chunkwise.chunking.pack import pack_rows
from chunkwise.types import Chunk
from chunkwise.chunking.levels import Level

SENTENCE = "<sentence>"
DEFAULT_SEPARATORS = ("\n\n", "\n", SENTENCE, " ", "")
_SENTENCE_PUNCT = set(".!?;。！？；…")


def separator_level(sep: str) -> Level | None:
    """Where a separator sits in the level order; None for word/unit separators the packer handles."""
    if sep == "" or (sep.isspace() and "\n" not in sep):
        return None
    if sep.count("\n") >= 2:
        return Level.BLOCK
    if "\n" in sep:
        return Level.LINE
    if sep == SENTENCE or sep.strip() in _SENTENCE_PUNCT:
        return Level.SENTENCE
    return Level.ITEM  # a custom marker such as "---" or "<hr>"


class _RowsChunker(BaseChunker):
    """A strategy whose drafts are one ``pack`` of the whole text: its rows go straight into chunks
    (``finalize_rows``), with no ``Piece`` or ``Draft`` per chunk."""

    def rows(self, text: str, title: str, flags: bool = True) -> list[tuple]:  # pragma: no cover - abstract
        """``pack_rows``' rows of the whole text; ``flags=False``: see ``charpack.pack_chars``."""
        raise TypeError(f"{type(self).__name__} must implement rows()")

    def pack_rows(self, text: str, cuts, budget: int, title: str, flags: bool = True, **kw) -> list[tuple]:
        # Characters without overlap: the same rows from the packer that counts by subtraction.
        chars = self.body_chars((), title)
        rows = charpack.pack_chars(text, 0, len(text), cuts, self.sizer, budget, max_chars=chars, flags=flags,
                                   **kw)
        return rows if rows is not None else pack_rows(text, 0, len(text), cuts, self.sizer, budget,
                                                       max_chars=chars, **kw)

    def drafts(self, text: str, title: str) -> list[Draft]:
        return drafts_from_rows(self.rows(text, title))

    def _chunk(self, text: str) -> list[Chunk]:
        title = self.title_of(text)
        # ``finalize_rows`` reads a row's exactness only for an exact sizer (characters are not one).
        return self.finalize_rows(text, self.rows(text, title, self.sizer.exact), title)


class ParagraphsChunker(_RowsChunker):
    name = "paragraphs"

    def rows(self, text: str, title: str, flags: bool = True) -> list[tuple]:
        budget, _ = self.body_budget((), title)
        return self.pack_rows(text, boundaries.paragraphs(text), budget, title, flags, overlap=self.config.overlap,
                              fine=(boundaries.sentences,))


class RecursiveChunker(_RowsChunker):
    """Ordered separators, highest first; CJK full stops are sentence ends and a boundary between
    two CJK characters counts as a word boundary, so text without spaces splits cleanly. Sentence-level
    separators are only searched inside stretches that need them."""

    name = "recursive"

    def rows(self, text: str, title: str, flags: bool = True) -> list[tuple]:
        budget, _ = self.body_budget((), title)
        cuts, fine = self.top_cuts(text)
        return self.pack_rows(text, cuts, budget, title, flags, overlap=self.config.overlap, fine=fine)

    def top_cuts(self, text: str) -> tuple:
        """The cuts found up front (every separator above the sentence level) and the finders run
        inside a stretch that needs them (the sentence-level separators)."""
        seps = self.config.separators or DEFAULT_SEPARATORS
        fine_seps = [sep for sep in seps if separator_level(sep) == Level.SENTENCE]
        fine = (_sentence_finder(tuple(fine_seps)),) if fine_seps else ()
        coarse = [(separator_level(sep), sep) for sep in seps if separator_level(sep) not in (None, Level.SENTENCE)]
        if len(coarse) == 2 and {level for level, _ in coarse} == {Level.BLOCK, Level.LINE} and \
                (Level.LINE, "\n") in coarse:  # the usual pair: both read off the newlines
            return _newline_cuts(text), fine
        found: list[tuple[Level, list[int]]] = []  # each separator's level and cut positions
        for level, sep in coarse:
            found.append((level, boundaries.paragraph_starts(text) if level == Level.BLOCK
                          else boundaries.literal_positions(text, sep)))
        if charpack.fits(self.sizer, self.config.overlap):  # merged already: no pair per cut
            cuts = charpack.merge_levels(found, 0, len(text))
        else:
            cuts = list(chain.from_iterable(zip(positions, repeat(level)) for level, positions in found))
        return cuts, fine


_BLANK_CODES = np.array([ord(c) for c in " \t\r\f\v"])  # ``boundaries._PARA``'s blanks between two newlines


def _newline_cuts(text: str) -> tuple[list[int], list[Level]]:
    """``merge_levels`` of the paragraph starts (BLOCK, ``boundaries.paragraph_starts``) and the
    newlines (LINE), both read off the newlines: a paragraph starts at a newline when only blanks lie
    between it and the next one, unless that newline ends the paragraph before (the regex's matches
    do not overlap). One array pass for the newlines, no regex scan and no dict entry a line."""
    codes = char_codes(text)
    if codes is None:  # lone surrogates
        return charpack.merge_levels([(Level.BLOCK, boundaries.paragraph_starts(text)),
                                      (Level.LINE, boundaries.literal_positions(text, "\n"))], 0, len(text))
    at = np.flatnonzero(codes == 10)
    lines = at.tolist()
    marks = [Level.LINE] * len(lines)
    if len(lines) > 1:
        gap = np.diff(at)
        after = codes[at[:-1] + 1]
        blank = np.isin(after, _BLANK_CODES)  # a newline followed by a blank: maybe a blank line
        joined = (gap == 1).tolist()
        for i in np.flatnonzero(blank & (gap > 1)).tolist():
            joined[i] = not text[lines[i] + 1 : lines[i + 1]].strip(" \t\r\f\v")
        last = -2
        block = Level.BLOCK
        for i in np.flatnonzero(joined).tolist():  # left to right, as the regex: a match ends on i + 1
            if i != last + 1:
                marks[i] = block
                last = i
    if lines and lines[0] == 0:  # cuts lie strictly inside the text (no newline is at its end)
        return lines[1:], marks[1:]
    return lines, marks


def _mark_ends(text: str, marks: tuple[str, ...]) -> list[int]:
    """``boundaries.mark_ends(text, marks)`` off the document's code points (``codes.char_codes``,
    made once a document): one comparison a mark over an array, where a regex scan a mark makes a
    ``Match`` a mark found (~2x the time on prose, where every sentence ends in one)."""
    codes = char_codes(text)
    if codes is None:  # lone surrogates
        return boundaries.mark_ends(text, marks)
    wanted = sorted({ord(m) for m in marks})
    at = codes == wanted[0]
    for c in wanted[1:]:
        at |= codes == c
    return (np.flatnonzero(at) + 1).tolist()


def _sentence_finder(seps: tuple[str, ...]):
    """Sentence-level cuts of ``seps`` (the sentence heuristic and literal marks such as "." and "?")
    inside a stretch; the cuts of one position found twice are merged by the packer. Marks alone
    (the usual characters configuration) are found once for the whole document, and each stretch
    takes its share already merged: a long paragraph costs two bisections, not a scan."""
    heuristic = SENTENCE in seps
    marks = tuple(sep for sep in seps if sep != SENTENCE)
    if not heuristic and boundaries.marks_only(marks):
        found: list = [None, []]  # (the document, every mark's cut in it)

        def find_marks(text: str, start: int, end: int) -> tuple[list[int], list[Level]]:
            if found[0] is not text:
                found[:] = [text, _mark_ends(text, marks)]
            ends = found[1]
            inside = ends[bisect_right(ends, start) : bisect_left(ends, end)]
            return inside, [Level.SENTENCE] * len(inside)

        return find_marks

    if heuristic and not marks:  # the default separators: merged already
        def find_sentences(text: str, start: int, end: int) -> tuple[list[int], list[Level]]:
            ends = boundaries.sentence_ends(text, start, end)
            return ends, [Level.SENTENCE] * len(ends)

        return find_sentences

    def find(text: str, start: int, end: int) -> list:
        out: list = boundaries.sentences(text, start, end) if heuristic else []
        if marks:
            out += boundaries.literals(text, marks, Level.SENTENCE, start, end)
        return out

    return find
