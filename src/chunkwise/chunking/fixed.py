"""Fixed windows of N units with overlap O: the mechanical baseline (seed 000).

Windows are built from unit *offsets* (never by decoding token ids, which for an uncased WordPiece
model would lowercase and re-space the text). With tokens, the document is measured once in short
whitespace-bounded stretches; only the stretch where a window ends is tokenized again for offsets. A
window edge that falls inside a word moves back to the word's first token, so each window
re-tokenizes to what was counted; a single word longer than a window is cut between tokens and
flagged. The last window stops at the end of the text: no duplicated tail window.
"""
from __future__ import annotations

import re
from bisect import bisect_right
from itertools import accumulate
from typing import Sequence

from chunkwise.chunking.base import BaseChunker, Draft
from chunkwise.chunking.levels import Level
from chunkwise.errors import ConfigError

_STRETCH = 96  # characters per measured stretch (cut at whitespace)
_SPACE = re.compile(r"\s")
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")


class _TokenIndex:
    """Token index <-> character position, from per-stretch counts plus spans of a few stretches."""

    def __init__(self, text: str, sizer) -> None:
        self.text = text
        self.sizer = sizer
        cuts = [0]
        n = len(text)
        while cuts[-1] + _STRETCH < n:
            m = _SPACE.search(text, cuts[-1] + _STRETCH)
            if not m:
                break
            cuts.append(m.start())
        cuts.append(n)
        self.cuts = cuts
        self.prefix = [0, *accumulate(sizer.count_many([text[a:b] for a, b in zip(cuts, cuts[1:])]))]
        self.total = self.prefix[-1]
        self._spans: dict[int, tuple[Sequence[int], Sequence[int]]] = {}

    def _stretch(self, t: int) -> tuple[int, int, Sequence[int], Sequence[int]]:
        k = bisect_right(self.prefix, t) - 1
        if k not in self._spans:
            a, b = self.cuts[k], self.cuts[k + 1]
            st, en = self.sizer.spans(self.text[a:b])
            self._spans[k] = ([a + x for x in st], [a + x for x in en])
        st, en = self._spans[k]
        return k, t - self.prefix[k], st, en

    def start_of(self, t: int) -> int:
        _, i, st, _ = self._stretch(t)
        return st[i] if i < len(st) else self.cuts[bisect_right(self.prefix, t)]

    def word_start(self, t: int, floor: int) -> int:
        """The token index <= t that starts t's word (never below ``floor``); t if the word started
        at or before ``floor``."""
        k, i, st, en = self._stretch(t)
        text = self.text
        j = i
        while j > 0 and t - (i - j) > floor and st[j] == en[j - 1] and text[st[j]].isalnum() and text[en[j - 1] - 1].isalnum():
            j -= 1
        snapped = t - (i - j)
        if snapped > floor:
            return snapped
        return t


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
        if self.config.unit == "tokens":
            return self._token_windows(text, budget, overlap)
        starts, ends = self.sizer.spans(text)
        n = len(starts)
        out: list[Draft] = []
        i = 0
        while i < n:
            e = min(i + budget, n)
            a, b = starts[i], ends[e - 1]
            while a < b and text[a].isspace():  # character windows: no blank edges
                a += 1
            while b > a and text[b - 1].isspace():
                b -= 1
            if b > a and (not out or b > out[-1].end):  # a window adding only blanks adds nothing
                out.append(Draft(a, b, e - i, Level.END if e == n else Level.WORD,
                                 exact=self.config.unit == "words"))
            if e == n:
                break
            i = e - overlap
        return out

    def _token_windows(self, text: str, budget: int, overlap: int) -> list[Draft]:
        idx = _TokenIndex(text, self.sizer)
        n = idx.total
        out: list[Draft] = []
        i = 0
        end_text = len(text.rstrip())
        while i < n:
            a = idx.start_of(i)
            while a < end_text and text[a].isspace():  # byte-level BPE has whitespace tokens
                a += 1
            if i + budget >= n:
                if a < end_text and (not out or end_text > out[-1].end):
                    out.append(Draft(a, end_text, n - i, Level.END, exact=not _CONTROL.search(text, a, end_text)))
                break
            e = idx.word_start(i + budget, i)
            review = e == i + budget and not self._at_word_start(idx, e)
            b = idx.start_of(e)
            while b > a and text[b - 1].isspace():
                b -= 1
            if b > a and (not out or b > out[-1].end):
                # Control characters vanish in the tokenizer's normaliser and can join two words
                # once the window is cut out: such windows are re-measured.
                exact = not review and not _CONTROL.search(text, a, b)
                out.append(Draft(a, b, e - i, Level.UNIT if review else Level.WORD, review,
                                 ("word_split",) if review else (), exact=exact))
            nxt = e - overlap
            if nxt > i:
                nxt = idx.word_start(nxt, i)
                while nxt < e and not self._at_word_start(idx, nxt):  # never start inside a word
                    nxt += 1
            i = nxt if nxt > i else e
        return out

    @staticmethod
    def _at_word_start(idx: _TokenIndex, t: int) -> bool:
        _, i, st, en = idx._stretch(t)
        return i == 0 or st[i] != en[i - 1] or not (idx.text[st[i]].isalnum() and idx.text[en[i - 1] - 1].isalnum())
