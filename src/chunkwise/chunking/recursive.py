"""Separator-driven strategies: paragraphs (then sentences, then words) and recursive separators."""
from __future__ import annotations

from chunkwise.chunking import boundaries
from chunkwise.chunking.base import BaseChunker, Draft, drafts_from_pieces
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


class ParagraphsChunker(BaseChunker):
    name = "paragraphs"

    def drafts(self, text: str, title: str) -> list[Draft]:
        budget, _ = self.body_budget((), title)
        pieces = self.pack(text, 0, len(text), boundaries.paragraphs(text), budget, title=title,
                           overlap=self.config.overlap, fine=(boundaries.sentences,))
        return drafts_from_pieces(pieces)


class RecursiveChunker(BaseChunker):
    """Ordered separators, highest first; CJK full stops are sentence ends and a boundary between
    two CJK characters counts as a word boundary, so text without spaces splits cleanly. Sentence-level
    separators are only searched inside stretches that need them."""

    name = "recursive"

    def drafts(self, text: str, title: str) -> list[Draft]:
        budget, _ = self.body_budget((), title)
        cuts: list = []
        fine_seps: list[str] = []
        for sep in self.config.separators or DEFAULT_SEPARATORS:
            level = separator_level(sep)
            if level is None:
                continue
            if level == Level.SENTENCE:
                fine_seps.append(sep)
            elif level == Level.BLOCK:
                cuts.extend(boundaries.paragraphs(text))
            else:
                cuts.extend(boundaries.literal(text, sep, level))
        fine = (_sentence_finder(tuple(fine_seps)),) if fine_seps else ()
        pieces = self.pack(text, 0, len(text), cuts, budget, title=title, overlap=self.config.overlap, fine=fine)
        return drafts_from_pieces(pieces)


def _sentence_finder(seps: tuple[str, ...]):
    def find(text: str, start: int, end: int) -> list:
        out: list = []
        for sep in seps:
            if sep == SENTENCE:
                out.extend(boundaries.sentences(text, start, end))
            else:
                out.extend(boundaries.literal(text, sep, Level.SENTENCE, start, end))
        return out

    return find
