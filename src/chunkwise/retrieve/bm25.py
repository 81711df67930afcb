"""BM25 two ways: SQLite FTS5 (nothing to load, good to ~100k chunks) and an in-memory sparse
scorer (bm25s-style: per-term postings with precomputed weights, mask before top-k), which the
measurements in issue 5 show is the one that stays near 10 ms at a million chunks.

Both index the *embedded* text (contextual header included) and use k1=1.2, b=0.75 with the
Robertson–Spärck Jones idf that FTS5 uses, so they rank alike. Tokens are Unicode letters and
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


def fts_match(query: str, acl_expr: str, terms: list[str] | None = None) -> str | None:
    """FTS5 MATCH expression: query terms OR-ed (questions rarely share every word with the answer)
    in the text column, AND-ed with the caller's access tokens. ``None`` when the query has no terms."""
    terms = query_terms(query) if terms is None else terms
    if not terms:
        return None
    phrase = " OR ".join('"' + t.replace('"', '""') + '"' for t in terms)
    return f"embed_text : ({phrase}) AND {acl_expr}"


def at_floor(n_docs: int, df: int) -> bool:
    """A term in half the rows or more gets the floor idf: it shifts every score by ~1e-6 and
    changes no ranking that matters, but reading its postings is most of a query's cost (at a
    million chunks, ~30x for FTS5). Both engines leave such terms out of a query that has others."""
    return n_docs > 0 and 2 * df >= n_docs


def keep_informative(terms: list[str], df: dict[str, int], n_docs: int) -> list[str]:
    """Terms that occur and are not at the floor; all of them when no such term exists."""
    kept = [t for t in terms if df.get(t, 0) and not at_floor(n_docs, df[t])]
    return kept or terms


def idf(n_docs: int, df):
    """FTS5's idf: log((N - df + 0.5) / (df + 0.5)), floored at a small positive value so a word in
    most documents still counts a little (FTS5 uses 1e-6)."""
    import numpy as np

    value = np.log((n_docs - df + 0.5) / (df + 0.5))
    return np.maximum(value, 1e-6)


@dataclass
class SparseBM25:
    vocab: dict[str, int]
    indptr: "object"  # term t's postings are positions[indptr[t]:indptr[t+1]]
    positions: "object"
    weights: "object"  # precomputed BM25 contribution of the term in that row
    n_rows: int
    floor: "object" = None  # per term: idf at the floor (in half the collection or more)

    @classmethod
    def build(cls, texts: Iterable[str], n_rows: int, background: Iterable[str] = ()) -> "SparseBM25":
        """Index ``texts`` (in index-position order). One pass to map tokens to ids, then numpy.

        ``background`` texts are counted in the collection statistics (N, document frequencies,
        mean length) but never returned: rows a store holds but may not serve, so scores equal
        what FTS5 computes over the whole table."""
        import numpy as np

        vocab: dict[str, int] = {}
        bg_df: dict[int, int] = {}
        bg_rows = bg_len = 0
        for text in background:
            bg_rows += 1
            toks = tokenize(text)
            bg_len += len(toks)
            for t in set(toks):
                i = vocab.setdefault(t, len(vocab))
                bg_df[i] = bg_df.get(i, 0) + 1
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
            return cls(vocab, np.zeros(len(vocab) + 1, np.int64), np.zeros(0, np.int64), np.zeros(0, np.float32), n_rows)
        term = np.concatenate(terms)
        row = np.concatenate(rows)
        key, tf = np.unique(term * n_rows + row, return_counts=True)  # sorted by term, then row
        term, row = key // n_rows, key % n_rows
        df = np.bincount(term, minlength=len(vocab))
        total_df = df.copy()
        for i, c in bg_df.items():
            total_df[i] += c
        avg = (lengths.sum() + bg_len) / (n_rows + bg_rows) if n_rows + bg_rows else 1.0
        norm = K1 * (1 - B + B * lengths[row] / (avg or 1.0))
        weights = (idf(n_rows + bg_rows, total_df)[term] * tf * (K1 + 1) / (tf + norm)).astype(np.float32)
        indptr = np.concatenate([[0], np.cumsum(df)]).astype(np.int64)
        floor = 2 * total_df >= n_rows + bg_rows
        return cls(vocab, indptr, row.astype(np.int32 if n_rows < 2**31 else np.int64), weights, n_rows, floor)

    def scores(self, terms: Sequence[str], informative: bool = True):
        """(positions with a non-zero score, their scores) for the given query terms; with
        ``informative``, terms at the idf floor are skipped when others remain (see at_floor)."""
        import numpy as np

        ids = [self.vocab[t] for t in terms if t in self.vocab]
        if informative and self.floor is not None:
            ids = [i for i in ids if not self.floor[i]] or ids
        if not ids:
            return np.zeros(0, np.int64), np.zeros(0, np.float32)
        if len(ids) == 1:
            a, b = self.indptr[ids[0]], self.indptr[ids[0] + 1]
            return self.positions[a:b].astype(np.int64), self.weights[a:b]
        pos = np.concatenate([self.positions[self.indptr[t]:self.indptr[t + 1]] for t in ids])
        w = np.concatenate([self.weights[self.indptr[t]:self.indptr[t + 1]] for t in ids])
        total = np.bincount(pos, weights=w, minlength=self.n_rows)
        hit = np.flatnonzero(total)
        return hit, total[hit].astype(np.float32)

    @property
    def nbytes(self) -> int:
        return int(self.indptr.nbytes + self.positions.nbytes + self.weights.nbytes)
