"""Sentence strategies: windows of W sentences with K overlap (seed 002), and packing whole sentences."""
from __future__ import annotations

from itertools import accumulate

from chunkwise.chunking import boundaries
from chunkwise.chunking.base import BaseChunker, Draft, drafts_from_pieces
from chunkwise.chunking.levels import Level


class SentenceWindowChunker(BaseChunker):
    """W sentences per chunk, the next window starting W-K sentences later; stops once a window
    reaches the last sentence. A window over the cap drops sentences from its end; a single sentence
    over the cap is split at words and flagged."""

    name = "sentence_window"
    overlapping = True

    def drafts(self, text: str, title: str) -> list[Draft]:
        budget, _ = self.body_budget((), title)
        spans = boundaries.sentence_spans(text)
        counts = self.sizer.count_many([text[a:b] for a, b in spans])
        prefix = [0, *accumulate(counts)]
        w, k = self.config.window, self.config.overlap
        out: list[Draft] = []
        start, n = 0, len(spans)
        while start < n:
            end = min(start + w, n)
            # Sentences are joined by the whitespace between them; exact sizers count it as zero.
            while end > start + 1 and prefix[end] - prefix[start] > budget:
                end -= 1
            a, b = spans[start][0], spans[end - 1][1]
            size = prefix[end] - prefix[start]
            if size <= budget:
                # sentences that touch (a CJK full stop needs no space) may not add up: re-measured
                touching = any(spans[i][1] == spans[i + 1][0] for i in range(start, end - 1))
                out.append(Draft(a, b, size, Level.END if end == n else Level.SENTENCE, exact=not touching))
            else:
                # a sentence over the cap is cut at lines, then words: whole rows of a table stay together
                pieces = self.pack(text, a, b, [], budget, title=title, fine=(boundaries.lines,))
                out.extend(drafts_from_pieces(pieces))
            if end == n:
                break
            start = max(start + 1, min(start + w - k, end))
        return out


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
