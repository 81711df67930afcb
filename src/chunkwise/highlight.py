"""Which words of a result to mark for a reader: the query's words as the search analyzer sees them.

A result is marked with the analyzer BM25 ranks with (``chunkwise.lexical``): a word is marked when
one of its terms is a term of the query, so stemmed and folded forms match (``deploys``, ``Deploying``
for ``deploy``; ``café`` for ``cafe``). Stopwords are never marked, in the query or in the text:
"the", "how", "is" carry no evidence and marking them hides the words that do. The ranker keeps
them (they still count, a little, through idf); only the display leaves them out.

Spans are offsets into the text as given (Python string indices), so every consumer (the CLI, the
JSON, the web page) marks the same characters without analysing anything itself.
"""
from __future__ import annotations

import re
import unicodedata
from functools import lru_cache
from typing import Iterable, Sequence

from chunkwise.lexical import _stemmer, _words

# English function words (folded, unstemmed): pronouns, determiners, auxiliaries, prepositions,
# conjunctions and question words. A word in this set is never marked.
STOPWORDS = frozenset("""
a about above after again against all am an and any are aren as at be because been before being below
between both but by can cannot could couldn did didn do does doesn doing don down during each few for
from further had hadn has hasn have haven having he her here hers herself him himself his how i if in
into is isn it its itself just let me more most mustn my myself no nor not now of off on once only or
other ought our ours ourselves out over own same shall shan she should shouldn so some such than that
the their theirs them themselves then there these they this those through to too under until up upon
very was wasn we were weren what when where which while who whom whose why will with won would wouldn
you your yours yourself yourselves s t d ll m re ve y also may might must us etc via
""".split())

_ASCII_RUN = re.compile(r"[A-Za-z0-9]+")


@lru_cache(maxsize=4096)
def _wordish(c: str) -> bool:
    """Whether the analyzer reads ``c`` as (part of) a word: a letter or digit, a combining mark, or
    a character whose compatibility form is one (``℡`` -> ``TEL``)."""
    if c.isascii():
        return c.isalnum()
    return c.isalnum() or unicodedata.category(c)[0] == "M" or bool(_words(c))


def _runs(text: str) -> Iterable[tuple[int, int]]:
    """(start, end) of each maximal run of word characters in ``text``."""
    if text.isascii():
        for m in _ASCII_RUN.finditer(text):
            yield m.start(), m.end()
        return
    start = None
    for i, c in enumerate(text):
        if _wordish(c):
            if start is None:
                start = i
        elif start is not None:
            yield start, i
            start = None
    if start is not None:
        yield start, len(text)


def terms(query: str) -> tuple[str, ...]:
    """The query's terms a reader is shown marked: its analysed terms, stopwords left out, in
    first-seen order."""
    words = [w for w in _words(query) if w not in STOPWORDS]
    return tuple(dict.fromkeys(_stemmer().stemWords(words))) if words else ()


def spans(text: str, marked: Sequence[str]) -> list[tuple[int, int]]:
    """(start, end) offsets of the words of ``text`` to mark for the terms ``marked`` (see
    :func:`terms`): each word one of whose analysed terms is among them, stopwords never."""
    wanted = set(marked)
    if not wanted or not text:
        return []
    runs = list(_runs(text))
    folded = [[w for w in _words(text[s:e]) if w not in STOPWORDS] for s, e in runs]
    flat = [w for ws in folded for w in ws]
    stems = iter(_stemmer().stemWords(flat) if flat else [])
    out = []
    for (s, e), ws in zip(runs, folded):
        if any([next(stems) in wanted for _ in ws]):  # a list: every stem of the run is consumed
            out.append((s, e))
    return out

