"""The one lexical analyzer: what a word is to BM25, at index and at query time, in every engine.

``analyze(text)``: Unicode case folding, NFKD (``ﬁ`` = ``fi``, fullwidth = ASCII), the combining
diacritics of Latin, Greek and Cyrillic dropped (``café`` = ``cafe``, ``Ärger`` = ``arger``), then
words = maximal runs of letters, digits and the remaining combining marks (a Devanagari vowel sign or
a kana voicing mark stays inside its word), each stemmed by Snowball English (PyStemmer:
``paged``, ``pages``, ``paging`` -> ``page``).

The stores never tokenize text themselves: they keep each chunk's analysed fields (``LexicalFields``:
body = the chunk's embedded text (its text, with the contextual header and repeated table header
rows when the chunker added them), title = the document title, heading = the heading path; terms
joined by one space) in their own columns and index those with a tokenizer that only splits on that space
(SQLite FTS5 ``ascii``, PostgreSQL ``simple`` over the same column); a query is analysed here too.
So the FTS5 engine, the in-memory sparse engine and the PostgreSQL backend see the same terms by
construction. Access tags are *not* text: their index tokens (``chunkwise.access``) live in a column
of their own and never pass through this analyzer.

``ANALYZER`` names the analysis; a change to it is a schema migration that re-analyses every row.
BM25 (``K1``, ``B``) and the field weights live here too, because every engine scores with them.
"""
from __future__ import annotations

import math
import re
import threading
import unicodedata
from dataclasses import dataclass
from functools import lru_cache
from typing import Iterable, Mapping, Sequence

from chunkwise.errors import ConfigError

ANALYZER = "casefold+NFKD, Latin/Greek/Cyrillic diacritics dropped, letter/digit/mark runs, Snowball english"
K1, B = 1.2, 0.75
FIELDS = ("body", "title", "heading")

# Combining diacritical marks (and their extended/supplement blocks, marks for symbols, half marks).
_DIACRITICS = re.compile("[\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f]+")
_ASCII_WORD = re.compile(r"[a-z0-9]+")
_WORD = re.compile(r"[^\W_]+")
_local = threading.local()  # a PyStemmer object is not safe to share between threads


def _stemmer():
    stemmer = getattr(_local, "stemmer", None)
    if stemmer is None:
        try:
            import Stemmer
        except ImportError as exc:  # a core dependency: only a broken install lacks it
            raise ConfigError("lexical search needs PyStemmer: pip install 'PyStemmer>=3.1'") from exc
        stemmer = _local.stemmer = Stemmer.Stemmer("english")
    return stemmer


@lru_cache(maxsize=256)
def _word_pattern(marks: frozenset[str]) -> re.Pattern:
    return re.compile("(?:[^\\W_]|[" + "".join(re.escape(m) for m in sorted(marks)) + "])+")


def _words(text: str) -> list[str]:
    """Folded words of ``text`` (unstemmed)."""
    if text.isascii():
        return _ASCII_WORD.findall(text.lower())
    # Folded again after NFKD: a compatibility decomposition can be upper case ("\u2121" -> "TEL").
    folded = _DIACRITICS.sub("", unicodedata.normalize("NFKD", text.casefold()).casefold())
    if folded.isascii():
        return _ASCII_WORD.findall(folded)
    marks = frozenset(c for c in set(folded) if not c.isascii() and not c.isalnum()
                      and unicodedata.category(c)[0] == "M")
    return (_word_pattern(marks) if marks else _WORD).findall(folded)


def analyze(text: str) -> list[str]:
    """The terms of ``text``, in order, repeats kept (see the module docstring)."""
    words = _words(text)
    return _stemmer().stemWords(words) if words else []


def query_terms(query: str) -> list[str]:
    """Distinct terms of a query, in first-seen order (a repeated word does not count twice)."""
    return list(dict.fromkeys(analyze(query)))


@dataclass(frozen=True)
class LexicalFields:
    """One chunk's analysed fields, each a string of terms joined by one space (what the stores keep
    and index). Build it with ``of``."""

    body: str = ""
    title: str = ""
    heading: str = ""

    @classmethod
    def of(cls, text: str, title: str = "", heading_path: Sequence[str] = ()) -> "LexicalFields":
        return cls(" ".join(analyze(text)), " ".join(analyze(title or "")),
                   " ".join(analyze("\n".join(heading_path or ()))))

    @classmethod
    def of_record(cls, record: Mapping) -> "LexicalFields":
        """A stored chunk record's fields: its embedded text (what a reader of the chunk is shown as
        its context: header and repeated table header included), its document's title, its
        (visible) heading path."""
        return cls.of(record.get("embed_text") or record.get("text") or "", str(record.get("title") or ""),
                      tuple(record.get("heading_path") or ()))

    def values(self) -> tuple[str, str, str]:
        return self.body, self.title, self.heading

    def terms(self) -> tuple[list[str], list[str], list[str]]:
        return tuple(v.split() for v in self.values())


@dataclass(frozen=True)
class FieldWeights:
    """How much a term counts in the title and the heading path relative to the body (1.0).

    A term's count in a row is ``tf_body + title * tf_title + heading * tf_heading`` (BM25F with one
    length, the body's): a word of the heading path counts ``heading`` times more than it would in
    the body alone (a contextual header already puts it in the body once). 0 turns a field off."""

    title: float = 2.0  # a title word says more about a chunk than a body word (BM25F's usual prior)
    heading: float = 1.5

    def __post_init__(self) -> None:
        for name in ("title", "heading"):
            check_weight(f"field weight {name}", getattr(self, name))

    @classmethod
    def parse(cls, value: "FieldWeights | Mapping | str | None") -> "FieldWeights":
        """``None`` (defaults), a mapping, or ``"title=2,heading=1.5"`` (the CLI's form)."""
        if value is None or isinstance(value, FieldWeights):
            return value or cls()
        if isinstance(value, str):
            value = _pairs(value, "field weights", ("title", "heading"))
        unknown = sorted(set(value) - {"title", "heading"})
        if unknown:
            raise ConfigError(f"unknown field {unknown[0]!r} in field weights; use title=N,heading=N")
        return cls(**dict(value))

    def spec(self) -> str:
        """The CLI's form, ``title=N,heading=N`` (parses back to an equal value)."""
        return f"title={self.title:g},heading={self.heading:g}"

    def vector(self) -> tuple[float, float, float]:
        """Weights of ``FIELDS`` in order (the body is 1)."""
        return 1.0, float(self.title), float(self.heading)

    def active(self) -> tuple[str, ...]:
        """The fields a term can match in (weight above zero)."""
        return tuple(f for f, w in zip(FIELDS, self.vector()) if w > 0)


def check_weight(what: str, value) -> None:
    """A ranking weight is a finite number from 0 to 100 (field weights, fusion weights)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) \
            or not 0 <= value <= 100:
        raise ConfigError(f"{what} must be a number from 0 to 100, got {value!r}")


def _pairs(text: str, what: str, names: Iterable[str]) -> dict[str, float]:
    out: dict[str, float] = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        name, eq, number = part.partition("=")
        try:
            out[name.strip()] = float(number)
        except ValueError:
            eq = ""
        if not eq:
            raise ConfigError(f"{what}: expected NAME=NUMBER pairs separated by commas (e.g. "
                              f"{','.join(n + '=1' for n in names)}), got {part!r}")
    return out


def parse_weights(text: str, what: str, names: Sequence[str]) -> dict[str, float]:
    """``"a=1,b=0.5"`` -> ``{"a": 1.0, "b": 0.5}``, every name known (fusion weights use this too)."""
    out = _pairs(text, what, names)
    unknown = sorted(set(out) - set(names))
    if unknown:
        raise ConfigError(f"{what}: unknown name {unknown[0]!r}; use {', '.join(names)}")
    return out


def idf(n_docs, df):
    """Robertson–Spärck Jones idf, ``log((N - df + 0.5) / (df + 0.5))``, floored at 1e-6 (as FTS5
    does, so a word in most rows still counts a little). numpy arrays or scalars."""
    import numpy as np

    value = np.log((n_docs - np.asarray(df, dtype=np.float64) + 0.5) / (np.asarray(df, dtype=np.float64) + 0.5))
    return np.maximum(value, 1e-6)


def term_weights(tf, lengths, df: int, n_docs: int, avgdl: float):
    """BM25 contribution of one term in each row holding it: weighted term counts ``tf`` and body
    lengths per row, with the statistics (document frequency, row count, mean body length) *of the
    rows the caller may see*. The one formula every engine scores with."""
    import numpy as np

    tf = np.asarray(tf, dtype=np.float64)
    norm = K1 * (1 - B + B * np.asarray(lengths, dtype=np.float64) / (avgdl or 1.0))
    return idf(n_docs, df) * tf * (K1 + 1) / (tf + norm)
