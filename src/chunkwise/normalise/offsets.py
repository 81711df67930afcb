"""Offset maps from normalised text back to the original, kept as pieces rather than one int per char.

A repair step is a list of edits ``(start, end, replacement)`` on its input. Between edits the text is
copied (slope 1); a replacement's characters all map to the start of the run they replaced (slope 0);
a deletion leaves no piece. Storing pieces instead of a per-character array keeps 10 MB of text with a
few thousand edits at a few thousand entries, and lets steps compose in time linear in their pieces.
"""
from __future__ import annotations

from array import array
from bisect import bisect_right
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

Edit = tuple[int, int, str]


class OffsetMap(Sequence):
    """``m[i]`` is the original index of normalised character ``i``; ``m[len(text)]`` is the original
    length. Non-decreasing. Read-only; ``list(m)`` or ``m.tolist()`` gives a plain list.

    Pieces: ``xs`` (start, normalised), ``ys`` (start, original), ``slopes`` (1 copied, 0 replaced) and,
    for replaced pieces, ``his``: the end of the original run they replaced.
    """

    __slots__ = ("_xs", "_ys", "_his", "_slopes", "_length", "_end")

    def __init__(self, xs: array, ys: array, his: array, slopes: bytearray, length: int, end: int):
        self._xs, self._ys, self._his, self._slopes = xs, ys, his, slopes
        self._length, self._end = length, end

    @classmethod
    def identity(cls, n: int) -> OffsetMap:
        one = [0] if n else []
        return cls(array("q", one), array("q", one), array("q", one), bytearray([1] if n else []), n, n)

    @classmethod
    def from_edits(cls, n: int, edits: Iterable[Edit]) -> OffsetMap:
        """The map of ``apply_edits(text, edits)`` back to ``text`` (``n == len(text)``)."""
        xs: list[int] = []
        ys: list[int] = []
        his: list[int] = []
        sl = bytearray()
        out = pos = 0
        for s, e, rep in edits:  # copied pieces here never continue one another: no merging needed
            if s > pos:
                xs.append(out), ys.append(pos), his.append(0), sl.append(1)
                out += s - pos
            if rep:
                xs.append(out), ys.append(s), his.append(e), sl.append(0)
                out += len(rep)
            pos = e
        if n > pos:
            xs.append(out), ys.append(pos), his.append(0), sl.append(1)
            out += n - pos
        return cls(array("q", xs), array("q", ys), array("q", his), sl, out, n)

    @property
    def is_identity(self) -> bool:
        return self._end == self._length and len(self._xs) <= 1 and (not self._slopes or self._slopes[0] == 1)

    def __len__(self) -> int:
        return self._length + 1

    def _piece(self, i: int) -> int:
        return bisect_right(self._xs, i) - 1

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[k] for k in range(*i.indices(len(self)))]
        if i < 0:
            i += len(self)
        if not 0 <= i <= self._length:
            raise IndexError(f"offset {i} outside 0..{self._length}")
        if i == self._length:
            return self._end
        j = self._piece(i)
        return self._ys[j] + self._slopes[j] * (i - self._xs[j])

    def char_end(self, i: int) -> int:
        """Where the original text behind normalised character ``i`` ends (exclusive)."""
        j = self._piece(i)
        return self._ys[j] + i - self._xs[j] + 1 if self._slopes[j] else self._his[j]

    def span_end(self, b: int) -> int:
        """The original end for a span ending at ``b``: ``self[b]``, widened when ``b`` cuts a
        multi-character replacement (an NFC cluster) so a span never splits a replaced run."""
        return self[b] if b <= 0 else max(self[b], self.char_end(b - 1))

    def __iter__(self) -> Iterator[int]:
        xs, ys, sl, n = self._xs, self._ys, self._slopes, len(self._xs)
        for j in range(n):
            stop = xs[j + 1] if j + 1 < n else self._length
            if sl[j]:
                yield from range(ys[j], ys[j] + stop - xs[j])
            else:
                yield from (ys[j] for _ in range(stop - xs[j]))
        yield self._end

    def tolist(self) -> list[int]:
        return list(self)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Sequence) and not isinstance(other, str):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"OffsetMap(length={self._length}, end={self._end}, pieces={len(self._xs)})"

    @property
    def pieces(self) -> int:
        """How many copied/replaced runs the map holds (a measure of how much normalisation changed)."""
        return len(self._xs)

    def compose(self, inner: OffsetMap) -> OffsetMap:
        """``self`` maps text B -> A and ``inner`` maps C -> B; return C -> A. One merge-walk over both
        piece lists (``inner``'s pieces point into B in order), so linear in their sizes."""
        if inner.is_identity:
            return self
        if self.is_identity:
            return inner
        oxs: list[int] = []
        oys: list[int] = []
        ohis: list[int] = []
        osl: list[int] = []
        big = inner._length + self._length + 1  # a sentinel start, so scans need no bounds checks
        xs, ys, his, sl = [*self._xs, big], self._ys.tolist(), self._his.tolist(), list(self._slopes)
        ixs, iys, ihis, isl = [*inner._xs, inner._length], inner._ys.tolist(), inner._his.tolist(), inner._slopes
        k = 0
        for j in range(len(isl)):
            x0, y0 = ixs[j], iys[j]
            while xs[k + 1] <= y0:
                k += 1
            if not isl[j]:  # replaced run B[y0:hi) -> from A[self[y0]] to the end of B[hi-1] in A
                hi, kk = ihis[j] - 1, k
                while xs[kk + 1] <= hi:
                    kk += 1
                oxs.append(x0), oys.append(ys[k] + sl[k] * (y0 - xs[k])), osl.append(0)
                ohis.append(ys[kk] + hi - xs[kk] + 1 if sl[kk] else his[kk])
                continue
            y1, y, kk = y0 + ixs[j + 1] - x0, y0, k
            while True:
                x, oy, slope = x0 + (y - y0), ys[kk] + sl[kk] * (y - xs[kk]), sl[kk]
                if not (slope and osl and osl[-1] and oys[-1] + (x - oxs[-1]) == oy):  # else it continues
                    oxs.append(x), oys.append(oy), ohis.append(his[kk]), osl.append(slope)
                kk += 1
                if xs[kk] >= y1:
                    break
                y = xs[kk]
        return OffsetMap(array("q", oxs), array("q", oys), array("q", ohis), bytearray(osl), inner._length, self._end)


@dataclass(frozen=True)
class Normalised:
    """Normalised ``text`` and ``to_original``: index (0..len inclusive) -> index in the original."""

    text: str
    to_original: OffsetMap

    @classmethod
    def identity(cls, text: str) -> Normalised:
        return cls(text, OffsetMap.identity(len(text)))

    def original_span(self, start: int, end: int) -> tuple[int, int]:
        """The original ``[a, b)`` that normalised ``[start, end)`` came from. Equals
        ``(to_original[start], to_original[end])`` unless ``end`` splits a multi-character replacement
        (an NFC cluster), where it is widened to cover the whole replaced run."""
        if not 0 <= start <= end <= len(self.text):
            raise IndexError(f"span [{start}, {end}) outside 0..{len(self.text)}")
        return self.to_original[start], self.to_original.span_end(end)

    def then(self, step: Normalised) -> Normalised:
        """Chain a further step computed on ``self.text``; the result still maps to the first original."""
        return Normalised(step.text, self.to_original.compose(step.to_original))


def apply_edits(text: str, edits: Sequence[Edit]) -> Normalised:
    """Apply sorted, disjoint edits to ``text``. No edits: the same string object, identity map."""
    if not edits:
        return Normalised.identity(text)
    parts, pos = [], 0
    for s, e, rep in edits:
        parts.append(text[pos:s])
        parts.append(rep)
        pos = e
    parts.append(text[pos:])
    return Normalised("".join(parts), OffsetMap.from_edits(len(text), edits))
