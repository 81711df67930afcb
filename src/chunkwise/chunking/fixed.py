"""Fixed windows of N units with overlap O: the mechanical baseline (seed 000).

Windows are built from unit *offsets* (never by decoding token ids, which for an uncased WordPiece
model would lowercase and re-space the text). With tokens, a window edge that falls inside a word
moves back to the word's first token, so each window re-tokenizes to what was counted; a single word
longer than a window is cut between tokens and flagged. The last window stops at the end of the
text: no duplicated tail window.
"""
from __future__ import annotations

from chunkwise.chunking.base import BaseChunker, Draft
from chunkwise.chunking.levels import Level
from chunkwise.errors import ConfigError


class FixedChunker(BaseChunker):
    name = "fixed"
    overlapping = True

    def drafts(self, text: str, title: str) -> list[Draft]:
        budget, _ = self.body_budget((), title)
        overlap = self.config.overlap
        if overlap >= budget:
            raise ConfigError(
                f"overlap {overlap} leaves no progress: only {budget} units remain for text after the "
                "header and special tokens; lower --overlap or raise --size"
            )
        starts, ends = self.sizer.spans(text)
        n = len(starts)
        snap = self.config.unit == "tokens"

        def inside_word(i: int) -> bool:
            # Unit i continues the word of unit i-1: no gap and both sides are word characters.
            if not snap or i <= 0 or i >= n or starts[i] != ends[i - 1]:
                return False
            return text[starts[i]].isalnum() and text[ends[i - 1] - 1].isalnum()

        out: list[Draft] = []
        i = 0
        while i < n:
            e = min(i + budget, n)
            review = False
            if e < n and inside_word(e):
                b = e
                while b > i + 1 and inside_word(b):
                    b -= 1
                if inside_word(b):  # one word longer than the window: cut between its tokens
                    review = True
                else:
                    e = b
            level = Level.END if e == n else (Level.UNIT if review else Level.WORD)
            out.append(
                Draft(starts[i], ends[e - 1], e - i, level, review, ("word_split",) if review else ())
            )
            if e == n:
                break
            nxt = e - overlap
            while nxt > i + 1 and inside_word(nxt):
                nxt -= 1
            i = nxt if nxt > i else e
        return out
