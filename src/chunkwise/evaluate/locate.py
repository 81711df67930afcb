"""Finding a golden answer in its document the way a reader copied it, in original-text offsets.

A reader copies an answer from what they see: a PDF viewer shows "immigration" where the extracted
text holds "immi-\\ngration", a sentence that crosses a page reads on without the running header and
page number printed between, and a copy-paste re-flows line breaks. So an answer is looked for in
three places, in this order, and the first that finds it exactly once wins:

1. the original text, exactly (what an answer pasted from the source file matches);
2. the *normalised* text: hyphenation across line ends repaired, running headers/footers/page numbers
   removed, ligatures folded, invisible characters dropped, whitespace collapsed (the same repairs
   chunking uses, ``normalise.normalise_document``), with the answer normalised the same way and
   whitespace ignored; the match is mapped back through the offset map, so the span covers whatever
   was removed in between (a header crossed by the answer is inside the span, as it is inside any chunk
   that holds the answer);
3. the original text with whitespace ignored;
4. the original text with inline Markdown markup ignored as well (a reader of the rendered page copies
   "run the breakglass command" where the source says ``run the `breakglass` command``).

Zero places, or several, raise ConfigError: several because scoring against the first of two
occurrences would score retrieval against the wrong place; zero with the longest beginning of the
answer that does occur, so the author sees where their copy departs from the document.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property

from chunkwise.errors import ConfigError


@dataclass(frozen=True)
class SourceText:
    """A document's original text (offsets count in it) and, for extracted formats, the Document it
    came from (its pages let running headers be found)."""

    text: str
    document: object | None = None  # chunkwise.types.Document

    @cached_property
    def normalised(self):
        """The normalised view with its map back to ``text`` (``normalise.Normalised``)."""
        from chunkwise import normalise as nm

        if self.document is not None and getattr(self.document, "text", None) == self.text:
            return nm.normalise_document(self.document, strip_headers=True)
        return nm.normalise(self.text)


def as_source(value) -> SourceText:
    return value if isinstance(value, SourceText) else SourceText(value)


def locate(source, answer: str, *, what: str = "the answer") -> tuple[int, int]:
    """The one place ``answer`` occurs in ``source`` (a SourceText or a plain string) as original
    offsets ``(start, end)``; see the module docstring for where it looks. ConfigError otherwise."""
    src = as_source(source)
    text = src.text
    if not answer.strip():
        raise ConfigError(f"{what} is empty; give the answer text or start_char/end_char")
    exact = _occurrences(text, answer)
    if len(exact) == 1:
        return exact[0], exact[0] + len(answer)
    norm = src.normalised
    wanted = _normalise_answer(answer)
    found = [norm.original_span(s, e) for s, e in _flexible(norm.text, wanted)]
    if len(found) == 1:
        return _trim(text, *found[0])
    loose = _flexible(text, answer)
    if len(loose) == 1:
        return loose[0]
    marked = [] if loose else _flexible(text, answer, markup=True)
    if len(marked) == 1:
        return marked[0]
    n = max(len(exact), len(found), len(loose), len(marked))
    if n:
        raise ConfigError(f"{what} ({_short(answer)}) occurs {n} times in the document; give start_char/end_char "
                          "or a longer answer that occurs once")
    raise ConfigError(f"{what} ({_short(answer)}) does not occur in the document, not even with hyphenation, "
                      f"running headers and whitespace repaired{_departure(norm.text, wanted)}; copy it from "
                      "the document as it reads, or give start_char/end_char")


def matches_span(source, start: int, end: int, answer: str) -> bool:
    """``answer`` is what original ``[start, end)`` reads as: the same words in the original text or in
    the normalised text (a span crossing a removed page header reads without it)."""
    src = as_source(source)
    if _squash(src.text[start:end]) == _squash(answer):
        return True
    from bisect import bisect_left

    norm = src.normalised
    a, b = bisect_left(norm.to_original, start), bisect_left(norm.to_original, end)
    return _squash(norm.text[a:b]) == _squash(_normalise_answer(answer))


def _normalise_answer(answer: str) -> str:
    from chunkwise import normalise as nm

    return nm.normalise(answer).text.strip()


_MARKUP = r"[*_`~]*"  # inline Markdown emphasis, code and strike-through around a word


def _flexible(text: str, answer: str, *, markup: bool = False) -> list[tuple[int, int]]:
    """Matches of ``answer``'s words with any whitespace between them (and, with ``markup``, inline
    markup around each word; the span then covers the markup, as a chunk holding the words does)."""
    words = answer.split()
    if not words:
        return []
    if markup:
        pattern = re.compile(_MARKUP + (_MARKUP + r"\s+" + _MARKUP).join(re.escape(w) for w in words) + _MARKUP)
    else:
        pattern = re.compile(r"\s+".join(re.escape(w) for w in words))
    return [(m.start(), m.end()) for m in pattern.finditer(text)]


def _trim(text: str, start: int, end: int) -> tuple[int, int]:
    """A mapped span without the whitespace a removed line left at either edge."""
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


def _departure(text: str, answer: str) -> str:
    """Where the answer stops matching: its longest leading run of words that occurs in ``text``."""
    words = answer.split()
    lo, hi = 0, len(words)  # invariant: words[:lo] occurs (trivially for lo = 0)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if re.search(r"\s+".join(re.escape(w) for w in words[:mid]), text):
            lo = mid
        else:
            hi = mid - 1
    if not lo:
        return f" (not even its first word {_short(words[0], 30)} occurs)"
    return f" (it matches up to {_short(' '.join(words[:lo]), 40)}, then the document differs at {_short(words[lo], 30)})"


def _occurrences(text: str, needle: str) -> list[int]:
    out, i = [], text.find(needle)
    while i != -1:
        out.append(i)
        i = text.find(needle, i + 1)
    return out


def _short(s: str, n: int = 60) -> str:
    return repr(s if len(s) <= n else s[: n - 3] + "...")


def _squash(s: str) -> str:
    return " ".join(s.split())
