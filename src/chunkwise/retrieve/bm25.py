"""BM25 two ways: SQLite FTS5 (good to ~100k chunks) and an in-memory sparse scorer (bm25s-style
per-term postings, mask before top-k), which stays near 10 ms at a million chunks.

No side channel: the statistics a score uses (row count, document frequency, mean length) are those
of the rows *the caller may see*, never the whole table, so a permitted chunk scores the same
whatever forbidden documents hold. Both engines score with ``term_weights`` (k1=1.2, b=0.75, the
Robertson–Spärck Jones idf that FTS5 uses) over the embedded text's own length (access tokens not
counted): the same scores from either engine. Tokens are Unicode letters and
digits, case-folded: the same split as FTS5's unicode61 tokenizer (diacritics aside).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable, Sequence

K1, B = 1.2, 0.75
_TOKEN = re.compile(r"[^\W_]+")


def tokenize(text: str) -> list[str]:
    return _TOKEN.findall(text.casefold())


def query_terms(query: str) -> list[str]:
    """Distinct query terms in first-seen order (a repeated word should not count twice)."""
    return list(dict.fromkeys(tokenize(query)))


def at_floor(n_docs: int, df: int) -> bool:
    """A term in half the rows or more gets the floor idf: it shifts every score by ~1e-6 and
    changes no ranking that matters, but reading its postings is most of a query's cost (at a
    million chunks, ~30x for FTS5). Both engines leave such terms out of a query that has others."""
    return n_docs > 0 and 2 * df >= n_docs


def keep_informative(terms: list[str], df: dict[str, int], n_docs: int) -> list[str]:
    """Terms that occur and are not at the floor; all of them when no such term exists."""
    kept = [t for t in terms if df.get(t, 0) and not at_floor(n_docs, df[t])]
    return kept or terms


def idf(n_docs, df):
    """FTS5's idf: log((N - df + 0.5) / (df + 0.5)), floored at a small positive value so a word in
    most documents still counts a little (FTS5 uses 1e-6)."""
    import numpy as np

    value = np.log((n_docs - df + 0.5) / (df + 0.5))
    return np.maximum(value, 1e-6)


def term_weights(tf, lengths, df: int, n_docs: int, avgdl: float):
    """BM25 contribution of one term in each row holding it: ``tf`` and ``lengths`` per row, and
    the statistics (document frequency, row count, mean length) *of the rows the caller may see*.
    The one formula both engines score with, so a score never depends on a forbidden row."""
    import numpy as np

    tf = np.asarray(tf, dtype=np.float64)
    norm = K1 * (1 - B + B * np.asarray(lengths, dtype=np.float64) / (avgdl or 1.0))
    return idf(n_docs, df) * tf * (K1 + 1) / (tf + norm)


def fts5_term_frequency(score, idf_all, length_all, avgdl_all):
    """Invert FTS5's ``bm25()`` of a one-phrase query back to the term's count in the row.

    FTS5's score is ``idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * D / avgdl))`` with its *own*
    (whole-table) idf, row length D and mean length over all columns; given those, ``tf`` follows
    exactly (rounded: it is an integer). This is how the FTS5 engine gets per-row term counts while
    the filter stays inside ``MATCH`` and FTS5 keeps its tokenizer."""
    import numpy as np

    x = -np.asarray(score, dtype=np.float64) / idf_all  # FTS5 reports bm25 negated
    k = K1 * (1 - B + B * np.asarray(length_all, dtype=np.float64) / avgdl_all)
    return np.maximum(np.rint(x * k / np.maximum(K1 + 1 - x, 1e-12)), 1.0)


@dataclass(frozen=True)
class Stats:
    """Collection statistics of what one caller may see."""

    rows: int
    avgdl: float


@dataclass
class SparseBM25:
    """Postings with raw term counts; weights are computed per query from the caller's statistics."""

    vocab: dict[str, int]
    indptr: "object"  # term t's postings are positions[indptr[t]:indptr[t+1]]
    positions: "object"
    tf: "object"  # term count in that row (float32)
    lengths: "object"  # tokens per row (float64), by position
    n_rows: int

    @classmethod
    def build(cls, texts: Iterable[str], n_rows: int) -> "SparseBM25":
        """Index ``texts`` (in index-position order). One pass to map tokens to ids, then numpy."""
        import numpy as np

        vocab: dict[str, int] = {}
        rows: list = []
        terms: list = []
        lengths = np.zeros(n_rows, dtype=np.float64)
        for pos, text in enumerate(texts):
            ids = [vocab.setdefault(t, len(vocab)) for t in tokenize(text)]
            lengths[pos] = len(ids)
            if ids:
                terms.append(np.asarray(ids, dtype=np.int64))
                rows.append(np.full(len(ids), pos, dtype=np.int64))
        if not terms:
            return cls(vocab, np.zeros(len(vocab) + 1, np.int64), np.zeros(0, np.int64), np.zeros(0, np.float32),
                       lengths, n_rows)
        term = np.concatenate(terms)
        row = np.concatenate(rows)
        key, tf = np.unique(term * n_rows + row, return_counts=True)  # sorted by term, then row
        term, row = key // n_rows, key % n_rows
        df = np.bincount(term, minlength=len(vocab))
        indptr = np.concatenate([[0], np.cumsum(df)]).astype(np.int64)
        return cls(vocab, indptr, row.astype(np.int32 if n_rows < 2**31 else np.int64), tf.astype(np.float32),
                   lengths, n_rows)

    def stats(self, mask) -> Stats:
        n = int(mask.sum())
        return Stats(n, float(self.lengths[mask].sum() / n) if n else 1.0)

    def scores(self, terms: Sequence[str], mask, stats: Stats, informative: bool = True):
        """(positions with a non-zero score, their scores) among the positions ``mask`` admits, for
        the given query terms, scored with the statistics of those positions alone. With
        ``informative``, terms at the idf floor *among them* are skipped when others remain."""
        import numpy as np

        postings = []
        for t in terms:
            if t not in self.vocab:
                continue
            i = self.vocab[t]
            pos = self.positions[self.indptr[i]:self.indptr[i + 1]]
            keep = mask[pos]
            if keep.any():
                postings.append((pos[keep], self.tf[self.indptr[i]:self.indptr[i + 1]][keep]))
        if informative:
            postings = [p for p in postings if not at_floor(stats.rows, len(p[0]))] or postings
        if not postings:
            return np.zeros(0, np.int64), np.zeros(0, np.float32)
        pos = np.concatenate([p for p, _ in postings]).astype(np.int64)
        w = np.concatenate([term_weights(tf, self.lengths[p], len(p), stats.rows, stats.avgdl) for p, tf in postings])
        if len(postings) == 1:
            return pos, w.astype(np.float32)
        total = np.bincount(pos, weights=w, minlength=self.n_rows)
        hit = np.flatnonzero(total)
        return hit, total[hit].astype(np.float32)

    @property
    def nbytes(self) -> int:
        return int(self.indptr.nbytes + self.positions.nbytes + self.tf.nbytes + self.lengths.nbytes)
