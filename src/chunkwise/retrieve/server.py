"""Ranking inside a server store (PostgreSQL): the backend's own search primitives, no rows loaded
into the process.

``ServerBM25`` is the FTS5 ranker's algorithm (retrieve/fts.py: the same terms left out, the same
BM25F formula and field weights, the same tie-break) with the scoring done by the server:
``store.lexical_top`` sums the BM25 of the permitted rows with the permitted statistics and returns
only the candidates for the top n (their body lengths and per-field counts), which are re-scored
here with ``fts.score_terms`` — the function the SQLite ranker scores with — so scores are those
the SQLite store gives for the same content, and exact ties are cut in the one tie order
(retrieve/ties.py: ascending chunk id), as on SQLite. The whole ranking reads one snapshot
(``store.as_caller``: the caller's groups set for a secured store's row-level security).
``dense_rank`` asks the store for the permitted rows nearest the query (exact or HNSW, the filter
inside the query, every row tied with the n-th included) and re-scores those candidates with
``dense.exact_scores`` the same way.
"""
from __future__ import annotations

from chunkwise.access import caller_groups
from chunkwise.lexical import FIELDS, FieldWeights
from chunkwise.retrieve.bm25 import at_floor, combine_fields, query_terms
from chunkwise.retrieve.fts import score_terms
from chunkwise.retrieve.ties import best_first


class ServerBM25:
    """BM25F over the permitted rows, scored by the store (``lexical_stats``, ``lexical_df``, ``lexical_top``)."""

    def __init__(self, store, weights: FieldWeights | None = None) -> None:
        self.store = store
        self.weights = weights or FieldWeights()

    def rank(self, query: str, groups, n: int, weights: FieldWeights | None = None) -> list[tuple[int, float]]:
        """Top ``n`` (key, score), best first, exact ties by ascending chunk id. Three round trips for
        most queries: the caller's statistics, every term's document frequency, the scored
        candidates (a fourth when the informative terms match fewer than ``n`` rows and every term is
        scored, as in FTSRanker; one more for the chunk ids of a tie that decides the top ``n``)."""
        import numpy as np

        from chunkwise.lexical import B, K1, idf

        weights = weights or self.weights
        fields = weights.active()
        tags = caller_groups(groups).tags
        terms = query_terms(query)
        if not terms or n < 1 or not tags:
            return []
        with self.store.as_caller(tags):  # one snapshot, the groups set for row-level security
            rows, avgdl = self.store.lexical_stats(tags)
            if not rows:
                return []
            df = self.store.lexical_df(terms, tags, fields)
            terms = [t for t in terms if df[t]]
            informative = [t for t in terms if not at_floor(rows, df[t])]
            for chosen in ([informative, terms] if informative else [terms]):
                if not chosen:
                    return []
                matched, found = self.store.lexical_top(chosen, [float(idf(rows, df[t])) for t in chosen], tags, avgdl,
                                                        n, K1, B, fields, weights.vector())
                if matched >= n:
                    break
            fetched = {}
            for t in chosen:
                keys = [k for k, (_, tf) in found.items() if t in tf]
                counts = np.asarray([found[k][1][t] for k in keys], dtype=np.float64).reshape(len(keys), len(FIELDS))
                fetched[t] = (np.asarray(keys, dtype=np.int64), np.asarray([found[k][0] for k in keys], dtype=np.float64),
                              combine_fields(counts, weights))
            # the tie order read as the caller, from the same snapshot
            return best_first(*score_terms(chosen, fetched, rows, avgdl, df), n, self.store.chunk_ids)


def dense_rank(store, query_vector, groups, n: int) -> list[tuple[int, float]]:
    """Top ``n`` (key, cosine) among the rows ``groups`` may see, best first, exact ties by ascending
    chunk id."""
    from chunkwise.retrieve.dense import exact_scores, normalise

    if n < 1:
        return []
    tags = caller_groups(groups).tags
    with store.as_caller(tags):  # candidates and the tie order from one snapshot, as the caller
        keys, matrix = store.dense_candidates(query_vector, tags, n)
        if not len(keys):
            return []
        q = normalise(query_vector)[0]
        if q.shape[0] != matrix.shape[1]:
            raise ValueError(f"query vector has {q.shape[0]} dimensions, the store's vectors {matrix.shape[1]}")
        return best_first(keys, exact_scores(normalise(matrix), q), n, store.chunk_ids)
