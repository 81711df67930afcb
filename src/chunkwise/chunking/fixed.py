"""Fixed windows of N units with overlap O: the mechanical baseline (seed 000).

Word and token windows are the shared packer with every word end as an equal candidate: a window
holds as many whole words as fit the cap (units *and* characters), and the next one starts at the
earliest word whose overlap with it stays within O units. So a window never starts or ends inside a
word ("1994–95" is one word; Korean words are separated by spaces, so a cut never falls between two
syllables of one word; Japanese and Chinese characters are words of their own); a single word longer
than a window is cut between tokens (or, past the character bound, between characters) and flagged.
Token windows are re-measured before they are reported: ``size`` is the measured size. Windows come
from offsets, never from decoding ids (an uncased WordPiece decode lowercases and re-spaces the
text). The last window stops at the end of the text: no duplicated tail window.
"""
from __future__ import annotations

import re
from chunkwise.chunking.base import BaseChunker, Draft, drafts_from_rows
from chunkwise.chunking.levels import Level
from chunkwise.chunking.pack import _FINE_WORD, pack_rows
from chunkwise.chunking.word_ends import word_ends
from chunkwise.errors import ConfigError
from chunkwise.types import Chunk

_WORD = re.compile(r"\S+")


class FixedChunker(BaseChunker):
    name = "fixed"
    overlapping = True

    def _chunk(self, text: str) -> list[Chunk]:
        """Word and token windows go from the packer's rows straight to chunks (``finalize_rows``:
        no ``Piece`` or ``Draft`` per window); the chunks are ``finalize``'s of ``drafts``."""
        title = self.title_of(text)
        rows = self._rows(text, title)
        if rows is None:
            return self.finalize(text, self.drafts(text, title), title)
        return self.finalize_rows(text, rows, title, exact=self.config.unit != "tokens")

    def drafts(self, text: str, title: str) -> list[Draft]:
        rows = self._rows(text, title)
        if rows is None:
            budget, _ = self.body_budget((), title)
            return self._char_windows(text, budget, self.config.overlap)
        # Token windows: the reported size is the measured size.
        return drafts_from_rows(rows, exact=self.config.unit != "tokens")

    def _rows(self, text: str, title: str) -> list[tuple] | None:
        """The packer's rows of word and token windows (None for character windows)."""
        budget, _ = self.body_budget((), title)
        overlap = self.config.overlap
        if overlap >= budget:
            raise ConfigError(
                f"overlap {overlap} leaves no progress: only {budget} units remain for text after the "
                "header and special tokens; lower --overlap or raise --size"
            )
        if self.config.unit == "chars":
            return None
        words = self.config.unit == "words"
        ends = word_ends(text, cjk_alone=not words, as_array=True)  # ~230k a MB: one vectorised scan
        if ends is None:
            finder = _WORD if words else _FINE_WORD  # words as the unit counts them
            ends = list(map(re.Match.end, finder.finditer(text)))
            if ends and ends[-1] == len(text):
                ends.pop()
        cuts = (ends, [Level.WORD] * len(ends))  # sorted, unique, inside the text: no merging needed
        return pack_rows(text, 0, len(text), cuts, self.sizer, budget, overlap=overlap,
                         max_chars=self.body_chars((), title))

    def _char_windows(self, text: str, budget: int, overlap: int) -> list[Draft]:
        """Exactly N characters (whitespace counts), O of them shared; blank edges trimmed."""
        n = len(text)
        out: list[Draft] = []
        i = 0
        while i < n:
            e = min(i + budget, n)
            a, b = i, e
            while a < b and text[a].isspace():
                a += 1
            while b > a and text[b - 1].isspace():
                b -= 1
            if b > a and (not out or b > out[-1].end):  # a window adding only blanks adds nothing
                out.append(Draft(a, b, b - a, Level.END if e == n else Level.WORD, exact=False))
            if e == n:
                break
            i = e - overlap
        return out
