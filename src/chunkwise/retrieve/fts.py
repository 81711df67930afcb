"""BM25 over SQLite FTS5 with the statistics of what the caller may see.

FTS5's own ``bm25()`` counts every row of the table: a permitted chunk's score would reveal how
many forbidden rows use a word. Here FTS5 finds, per query term and *inside* ``MATCH`` with the
caller's access tokens, the permitted rows holding the term, and reports its whole-table score;
that score is inverted to the term count (``bm25.fts5_term_frequency``) and the row is re-scored by
``bm25.term_weights`` with the permitted rows' row count, document frequency and mean length —
the formula the in-memory engine uses, so both engines return the same scores.

Per Retriever, once: every row's token counts (FTS5's docsize records) and the servable rows' tags,
to get a caller's row count and mean length; whole-table document frequencies per term are cached.
"""
from __future__ import annotations

import math
from typing import Sequence

from chunkwise.access import caller_groups
from chunkwise.errors import StoreBusy
from chunkwise.retrieve.bm25 import at_floor, fts5_term_frequency, query_terms, term_weights
from chunkwise.retrieve.layout import AccessLayout

_CACHE = 32
_RETRIES = 8  # a concurrent ingest commits one document per transaction


class _Stale(Exception):
    """A matched row is newer than the cached row sizes."""


def fts5_idf(n_rows: int, df: int) -> float:
    """FTS5's idf exactly as it computes it (a non-positive value becomes 1e-6)."""
    value = math.log((n_rows - df + 0.5) / (df + 0.5))
    return value if value > 0 else 1e-6


class FTSRanker:
    """Ranks with FTS5 for one store; call ``rank`` as often as you like (state is cached)."""

    def __init__(self, store) -> None:
        self.store = store
        self._loaded = False
        self._df: dict[str, int] = {}
        self._stats: dict[tuple[str, ...], tuple[int, float]] = {}

    def _load(self) -> None:
        import numpy as np

        sizes = list(self.store.lexical_row_sizes())
        self.n_all = len(sizes)
        self.avgdl_all = (sum(a for _, _, a in sizes) / self.n_all) if self.n_all else 1.0
        self.len_text = {r: t for r, t, _ in sizes}
        self.len_all = {r: a for r, _, a in sizes}
        rows = self.store.servable_rows()
        self.rowids = np.asarray(rows.keys, dtype=np.int64)
        self.layout = AccessLayout.build(rows.tags, self.rowids)
        self.lengths = np.asarray([self.len_text.get(int(r), 0) for r in self.rowids], dtype=np.float64)[self.layout.order]
        self._loaded = True

    def stats(self, groups) -> tuple[int, float]:
        """(rows, mean length) of the rows ``groups`` may see."""
        if not self._loaded:
            self._load()
        key = caller_groups(groups).tags
        got = self._stats.get(key)
        if got is None:
            mask = self.layout.mask(key)
            n = int(mask.sum())
            got = (n, float(self.lengths[mask].sum() / n) if n else 1.0)
            if len(self._stats) >= _CACHE:
                self._stats.pop(next(iter(self._stats)))
            self._stats[key] = got
        return got

    def _global_df(self, term: str) -> int:
        if term not in self._df:
            self._df[term] = self.store.term_count(term)
        return self._df[term]

    def _permitted_df(self, term: str, groups) -> int:
        return self.store.term_count(term, groups)

    def _postings(self, term: str, groups):
        """(rowids, term counts, text lengths) of the permitted rows holding ``term``."""
        import numpy as np

        rows = self.store.term_matches(term, groups)
        if not rows:
            return np.zeros(0, np.int64), np.zeros(0), np.zeros(0)
        if any(r not in self.len_all for r, _ in rows):
            raise _Stale  # written since the sizes were read
        ids = np.fromiter((r for r, _ in rows), dtype=np.int64, count=len(rows))
        score = np.fromiter((s for _, s in rows), dtype=np.float64, count=len(rows))
        length_all = np.fromiter((self.len_all[int(r)] for r in ids), dtype=np.float64, count=len(ids))
        tf = fts5_term_frequency(score, fts5_idf(self.n_all, self._global_df(term)), length_all, self.avgdl_all)
        return ids, tf, self._lengths(ids)

    def rank(self, query: str, groups, n: int) -> list[tuple[int, float]]:
        """Top ``n`` (rowid, score), best first, ties by rowid; the same terms left out as the
        in-memory engine (those at the idf floor among the permitted rows, when others remain).
        Rows written since the sizes were read make it re-read them; an ingest writing while the
        query runs can make that happen again, so it retries a few times before giving up."""
        for _ in range(_RETRIES - 1):
            try:
                return self._rank(query, groups, n)
            except _Stale:
                self._loaded, self._df, self._stats = False, {}, {}
        try:
            return self._rank(query, groups, n)
        except _Stale:
            raise StoreBusy("the store changed during every attempt to rank this query; retry") from None

    def _rank(self, query: str, groups, n: int) -> list[tuple[int, float]]:
        import numpy as np

        terms = [t for t in query_terms(query) if self._global_df(t)]
        if not terms or n < 1:
            return []
        rows, avgdl = self.stats(groups)
        if not rows:
            return []
        groups = caller_groups(groups).tags
        fetched: dict[str, tuple] = {}
        floor: list[str] = []
        for t in terms:
            # The whole-table df bounds the permitted one: only a term that could be at the floor
            # is counted before its postings are read (reading them is the cost for common terms).
            if at_floor(rows, self._global_df(t)) and at_floor(rows, self._permitted_df(t, groups)):
                floor.append(t)
            else:
                fetched[t] = self._postings(t, groups)
        informative = [t for t in terms if t in fetched and fetched[t][0].size]
        for chosen in ([informative, terms] if informative else [terms]):
            for t in chosen:
                if t not in fetched:
                    fetched[t] = self._postings(t, groups)
            present = [t for t in chosen if fetched[t][0].size]
            ranked = self._score(present, fetched, rows, avgdl)
            if len(ranked[0]) >= n:
                break
        ids, vals = ranked
        order = np.lexsort((ids, -vals))[:n]
        return [(int(ids[i]), float(vals[i])) for i in order]

    def _score(self, terms: Sequence[str], fetched: dict, rows: int, avgdl: float):
        import numpy as np

        if not terms:
            return np.zeros(0, np.int64), np.zeros(0, np.float32)
        ids = np.concatenate([fetched[t][0] for t in terms])
        w = np.concatenate([term_weights(fetched[t][1], fetched[t][2], fetched[t][0].size, rows, avgdl)
                            for t in terms])
        if len(terms) == 1:
            return ids, w.astype(np.float32)
        uniq, inverse = np.unique(ids, return_inverse=True)
        total = np.bincount(inverse, weights=w, minlength=len(uniq))
        return uniq, total.astype(np.float32)

    def _lengths(self, ids):
        import numpy as np

        return np.fromiter((self.len_text[int(r)] for r in ids), dtype=np.float64, count=len(ids))
