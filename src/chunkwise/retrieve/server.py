"""Ranking inside a server store (PostgreSQL): the backend's own search primitives, no rows loaded
into the process.

``ServerBM25`` is the FTS5 ranker's algorithm (retrieve/fts.py: the same terms left out, the same
formula, the same tie-break) fed by the store's permitted statistics and postings instead of
inverted FTS5 ranks; the whole ranking reads one snapshot of the store. ``dense_rank`` asks the
store for the permitted rows nearest the query (exact or HNSW, the filter inside the query) and
re-scores those candidates with ``dense.exact_scores`` as the in-memory engine does its own, so
scores and the order of ties (smaller key first) are those the SQLite store gives for the same
content.
"""
from __future__ import annotations

from chunkwise.access import caller_groups
from chunkwise.lexical import FieldWeights
from chunkwise.retrieve.bm25 import at_floor, combine_fields, query_terms
from chunkwise.retrieve.fts import FTSRanker


class ServerBM25(FTSRanker):
    """BM25 over the permitted rows, computed from ``store.lexical_stats`` and ``lexical_postings``."""

    def __init__(self, store, weights: FieldWeights | None = None) -> None:
        super().__init__(store, weights)
        self._query_df: dict[tuple, int] = {}
        self._prefetched: dict = {}
        self._groups: tuple[str, ...] = ()
        self._call_stats: tuple[int, float] | None = None

    def stats(self, groups) -> tuple[int, float]:
        if self._call_stats is None:
            self._call_stats = self.store.lexical_stats(groups)
        return self._call_stats

    def _global_df(self, term: str, fields: tuple[str, ...]) -> int:
        # Only the permitted document frequency is asked for: a term no permitted row holds drops out
        # of the query exactly as one absent from the whole store does in the FTS5 ranker.
        return self._permitted_df(term, self._groups, fields)

    def _permitted_df(self, term: str, groups, fields: tuple[str, ...]) -> int:
        if (term, fields) not in self._query_df:
            self._query_df.update({(t, fields): n for t, n in self.store.lexical_df([term], groups, fields).items()})
        return self._query_df[term, fields]

    def _postings(self, term: str, groups, weights: FieldWeights):
        got = self._prefetched.get(term)
        if got is None:
            got = self.store.lexical_postings([term], groups, weights.active())[term]
        return got.keys, got.lengths, combine_fields(got.tf, weights)

    def rank(self, query: str, groups, n: int, weights: FieldWeights | None = None) -> list[tuple[int, float]]:
        """Three round trips for most queries: the caller's statistics, every term's document
        frequency, the postings of the terms not at the idf floor (those the ranker reads first)."""
        weights = weights or self.weights
        fields = weights.active()
        self._groups = caller_groups(groups).tags
        self._call_stats, self._prefetched = None, {}
        with self.store.snapshot():
            try:
                terms = query_terms(query)
                if not terms or n < 1 or not self._groups:
                    return self._rank(query, groups, n, weights)
                rows, _ = self.stats(groups)
                self._query_df = {(t, fields): c for t, c in self.store.lexical_df(terms, groups, fields).items()}
                wanted = [t for t in terms if self._query_df[t, fields] and not at_floor(rows, self._query_df[t, fields])]
                self._prefetched = self.store.lexical_postings(wanted, groups, fields)
                return self._rank(query, groups, n, weights)
            finally:
                self._call_stats, self._prefetched, self._query_df = None, {}, {}


def dense_rank(store, query_vector, groups, n: int) -> list[tuple[int, float]]:
    """Top ``n`` (key, cosine) among the rows ``groups`` may see, best first, ties by key."""
    import numpy as np

    from chunkwise.retrieve.dense import exact_scores, normalise
    from chunkwise.retrieve.fusion import top_k

    if n < 1:
        return []
    keys, matrix = store.dense_candidates(query_vector, caller_groups(groups).tags, n)
    if not len(keys):
        return []
    q = normalise(query_vector)[0]
    if q.shape[0] != matrix.shape[1]:
        raise ValueError(f"query vector has {q.shape[0]} dimensions, the store's vectors {matrix.shape[1]}")
    scores = exact_scores(normalise(matrix), q)
    keys = np.asarray(keys, dtype=np.int64)
    chosen = top_k(scores, n, keys)
    return [(int(keys[i]), float(scores[i])) for i in chosen]
