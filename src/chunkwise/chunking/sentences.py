"""Sentence strategies: windows of W sentences with K overlap (seed 002), and packing whole sentences."""
from __future__ import annotations

from chunkwise.chunking import boundaries
from chunkwise.chunking.base import BaseChunker, Draft, drafts_from_pieces
from chunkwise.chunking.levels import Level


class SentenceWindowChunker(BaseChunker):
    """W sentences per chunk, the next window starting W-K sentences later; stops once a window
    reaches the last sentence. The windows are the shared packer's (``pack(window=(W, K))`` over the
    sentence ends), so the cap holds exactly as everywhere else: a window over the cap drops
    sentences from its end; a single sentence over the cap is cut at lines, then words (whole rows of
    a table stay together), and its pieces stay apart from the sentences around it."""

    name = "sentence_window"
    overlapping = True

    def drafts(self, text: str, title: str) -> list[Draft]:
        budget, _ = self.body_budget((), title)
        spans = boundaries.sentence_spans(text)
        # The last sentence's end is no cut: what follows it is blank, and the last window ends the text.
        cuts = [(b, Level.SENTENCE) for _, b in spans[:-1]]
        pieces = self.pack(text, 0, len(text), cuts, budget, title=title, fine=(boundaries.lines,),
                           window=(self.config.window, self.config.overlap))
        return drafts_from_pieces(pieces)


class SentencesChunker(BaseChunker):
    """Pack whole sentences up to the cap (paragraph ends count as sentence ends)."""

    name = "sentences"

    def drafts(self, text: str, title: str) -> list[Draft]:
        budget, _ = self.body_budget((), title)
        cuts = [(p, Level.SENTENCE) for p, _ in boundaries.sentences(text)]
        cuts += [(p, Level.SENTENCE) for p, _ in boundaries.paragraphs(text)]
        # A "sentence" over the cap (a table, a list without stops) is cut at its lines, then words, and
        # its pieces pack with the sentences around them: no fragment is parked in review.
        pieces = self.pack(text, 0, len(text), cuts, budget, title=title, overlap=self.config.overlap,
                           fine=(boundaries.lines,))
        return drafts_from_pieces(pieces)
