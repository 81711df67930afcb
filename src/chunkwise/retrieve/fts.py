"""BM25 over SQLite FTS5 with the statistics of what the caller may see.

FTS5's own ``bm25()`` counts every row of the table: a permitted chunk's score would reveal how
many forbidden rows use a word. Here the store finds, per query term and *inside* ``MATCH`` with
the caller's access tokens, the permitted rows holding the term with its count in each lexical
field (``Store.term_matches``); each row is scored by ``lexical.term_weights`` with the permitted
rows' row count, document frequency and mean body length and the field weights asked for — the
formula the in-memory engine uses, so both engines return the same scores.

Per Retriever, once: every row's body length (FTS5's docsize records) and the servable rows' tags,
to get a caller's row count and mean length; whole-table document frequencies per term are cached.

A caller with more than ``MATCH_GROUPS`` groups (a directory user in hundreds): FTS5 merges an OR
of N tokens by visiting all N for every row, so a thousand groups made each term's lookup a second
long. Only the caller's groups that tag some servable row (the access layout's tags) go into
``MATCH``; groups that tag nothing match nothing. When more than ``MATCH_GROUPS`` of them remain, the
term's rows are read by the FTS index and those the caller may not see are dropped by the caller's
row bitmap (the access layout that counts the caller's rows) before anything is scored: the scores
and statistics are the ones the filtered ``MATCH`` gives. Both read the layout loaded with the row
sizes, reloaded when a matched row is newer: a group first used after that is matched once a newer
row reloads it (never the reverse: a row's own tags are re-checked before it is served).
"""
from __future__ import annotations

from typing import Sequence

from chunkwise.access import caller_groups
from chunkwise.errors import StoreBusy
from chunkwise.lexical import FieldWeights
from chunkwise.retrieve.bm25 import at_floor, combine_fields, query_terms, term_weights
from chunkwise.retrieve.layout import AccessLayout
from chunkwise.retrieve.ties import best_first

_CACHE = 32
MATCH_GROUPS = 64  # more groups than this: filtered by the access layout, not by an OR inside MATCH
_RETRIES = 8  # a concurrent ingest commits one document per transaction


class _Stale(Exception):
    """A matched row is newer than the cached row sizes."""


def _all_in(keys, known) -> bool:
    """Every key is in the sorted array ``known`` (numpy, not a Python loop over thousands of rows:
    under ``chunkwise serve`` every line of per-row Python waits for the GIL beside another search)."""
    import numpy as np

    if not known.size:
        return False
    at = np.minimum(np.searchsorted(known, keys), known.size - 1)
    return bool(np.array_equal(known[at], keys))


class FTSRanker:
    """Ranks with FTS5 for one store; call ``rank`` as often as you like (state is cached)."""

    def __init__(self, store, weights: FieldWeights | None = None) -> None:
        self.store = store
        self.weights = weights or FieldWeights()
        self._loaded = False
        self._df: dict[tuple, int] = {}
        self._stats: dict[tuple[str, ...], tuple[int, float]] = {}
        self._bitmaps: dict[tuple[str, ...], object] = {}
        self._found: dict[tuple, object] = {}  # one rank call's postings by (term, fields)

    def _load(self) -> None:
        import numpy as np

        self.len_body = dict(self.store.lexical_row_sizes())
        self._sized = np.sort(np.fromiter(self.len_body, dtype=np.int64, count=len(self.len_body)))
        rows = self.store.servable_rows()
        self.rowids = np.asarray(rows.keys, dtype=np.int64)
        self.layout = AccessLayout.build(rows.tags, self.rowids)
        self.lengths = np.asarray([self.len_body.get(int(r), 0) for r in self.rowids], dtype=np.float64)[self.layout.order]
        self._loaded = True

    def warm(self) -> None:
        """Read every row's size and the access layout now (one read snapshot) instead of in the
        first query: at 100k chunks that read costs ~0.5 s of CPU, paid once per connection."""
        if not self._loaded:
            with self.store.as_caller(()):
                self._load()

    def stats(self, groups) -> tuple[int, float]:
        """(rows, mean body length) of the rows ``groups`` may see."""
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

    def _global_df(self, term: str, fields: tuple[str, ...]) -> int:
        if (term, fields) not in self._df:
            self._df[term, fields] = self.store.term_count(term, None, fields)
        return self._df[term, fields]

    def _match_groups(self, groups):
        """(groups for ``MATCH``, or None: filter by the bitmap) — see the module doc."""
        tags = caller_groups(groups).tags
        if len(tags) <= MATCH_GROUPS:
            return tags
        used = tuple(t for t in tags if t in self.layout.by_tag)
        return used if len(used) <= MATCH_GROUPS else None

    def _permitted_df(self, term: str, groups, fields: tuple[str, ...]) -> int:
        chosen = self._match_groups(groups)
        if chosen is None:
            rows = self.store.term_rows(term, fields)
            rows = rows[rows < self._bitmap(groups).size]  # newer rows: counted after the reload _matches makes
            return int(self._bitmap(groups)[rows].sum())
        return self.store.term_count(term, chosen, fields) if chosen else 0

    def _postings(self, term: str, groups, weights: FieldWeights):
        """(rowids, lengths, weighted term counts) of the permitted rows holding ``term``."""
        found = self._matches(term, groups, weights.active())
        return found.keys, found.lengths, combine_fields(found.tf, weights)

    def _matches(self, term: str, groups, fields: tuple[str, ...]):
        """The permitted rows holding ``term`` (``Postings``): filtered inside ``MATCH``, or for a
        caller of many groups from every row holding it through the caller's row bitmap."""
        key = (term, fields)
        if key in self._found:
            return self._found[key]
        chosen = self._match_groups(groups)
        if chosen == ():
            from chunkwise.store.base import Postings

            return Postings.empty()
        found = self.store.term_matches(term, chosen, fields)
        if len(found) and not _all_in(found.keys, self._sized):
            raise _Stale  # written since the sizes were read
        if chosen is None and len(found):
            keep = self._bitmap(groups)[found.keys]
            found = type(found)(found.keys[keep], found.lengths[keep], found.tf[keep])
        self._found[key] = found
        return found

    def _bitmap(self, groups):
        """rowid -> may the caller see it (servable and sharing a tag), from the access layout."""
        import numpy as np

        key = caller_groups(groups).tags
        bits = self._bitmaps.get(key)
        if bits is None:
            bits = np.zeros(max(self.len_body, default=0) + 1, dtype=bool)
            bits[self.rowids[self.layout.order][self.layout.mask(key)]] = True
            if len(self._bitmaps) >= 8:
                self._bitmaps.pop(next(iter(self._bitmaps)))
            self._bitmaps[key] = bits
        return bits

    def rank(self, query: str, groups, n: int, weights: FieldWeights | None = None) -> list[tuple[int, float]]:
        """Top ``n`` (rowid, score), best first, exact ties by ascending chunk id (retrieve/ties.py,
        asked of the store only for a tie that decides); the same terms left out as the
        in-memory engine (those at the idf floor among the permitted rows, when others remain).
        Rows written since the cached sizes were read make it re-read them, inside the same read
        snapshot as the postings (``Store.as_caller``), so the second attempt cannot be stale; the
        retries and ``StoreBusy`` remain for a store whose snapshot is not one transaction."""
        weights = weights or self.weights
        with self.store.as_caller(groups):  # one snapshot: sizes re-read inside it match its postings
            for _ in range(_RETRIES - 1):
                try:
                    return self._rank(query, groups, n, weights)
                except _Stale:
                    self._loaded, self._df, self._stats, self._bitmaps = False, {}, {}, {}
            try:
                return self._rank(query, groups, n, weights)
            except _Stale:
                raise StoreBusy("the store changed during every attempt to rank this query; retry") from None

    def _rank(self, query: str, groups, n: int, weights: FieldWeights) -> list[tuple[int, float]]:
        self._found = {}
        try:
            return self._rank_terms(query, groups, n, weights)
        finally:
            self._found = {}

    def _rank_terms(self, query: str, groups, n: int, weights: FieldWeights) -> list[tuple[int, float]]:
        fields = weights.active()
        terms = [t for t in query_terms(query) if self._global_df(t, fields)]
        if not terms or n < 1:
            return []
        rows, avgdl = self.stats(groups)
        if not rows:
            return []
        groups = caller_groups(groups).tags
        fetched: dict[str, tuple] = {}
        for t in terms:
            # The whole-table df bounds the permitted one: only a term that could be at the floor
            # is counted before its postings are read (reading them is the cost for common terms).
            if not (at_floor(rows, self._global_df(t, fields)) and at_floor(rows, self._permitted_df(t, groups, fields))):
                fetched[t] = self._postings(t, groups, weights)
        informative = [t for t in terms if t in fetched and fetched[t][0].size]
        for chosen in ([informative, terms] if informative else [terms]):
            for t in chosen:
                if t not in fetched:
                    fetched[t] = self._postings(t, groups, weights)
            present = [t for t in chosen if fetched[t][0].size]
            ranked = self._score(present, fetched, rows, avgdl)
            if len(ranked[0]) >= n:
                break
        return best_first(*ranked, n, self.store.chunk_ids)

    def _score(self, terms: Sequence[str], fetched: dict, rows: int, avgdl: float):
        return score_terms(terms, fetched, rows, avgdl)


def score_terms(terms: Sequence[str], fetched: dict, rows: int, avgdl: float, df: dict | None = None):
    """(keys, float32 BM25 sums) of the rows in ``fetched`` (term -> (keys, body lengths, weighted
    term counts)), each term's document frequency the number of its postings unless ``df`` gives it
    (a server store returns only the candidates' postings). Contributions add up in query-term
    order, so a row's score is the same bits however many other rows were fetched."""
    import numpy as np

    if not terms:
        return np.zeros(0, np.int64), np.zeros(0, np.float32)
    ids = np.concatenate([fetched[t][0] for t in terms])
    w = np.concatenate([term_weights(fetched[t][2], fetched[t][1], df[t] if df else fetched[t][0].size, rows, avgdl)
                        for t in terms])
    if len(terms) == 1:
        return ids, w.astype(np.float32)
    uniq, inverse = np.unique(ids, return_inverse=True)
    total = np.bincount(inverse, weights=w, minlength=len(uniq))
    return uniq, total.astype(np.float32)
