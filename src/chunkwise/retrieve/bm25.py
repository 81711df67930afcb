"""BM25 two ways: SQLite FTS5 (good to ~100k chunks) and an in-memory sparse scorer (bm25s-style
per-term postings, mask before top-k), which stays near 10 ms at a million chunks.

No side channel: the statistics a score uses (row count, document frequency, mean length) are those
of the rows *the caller may see*, never the whole table, so a permitted chunk scores the same
whatever forbidden documents hold. Both engines see the terms of one analyzer
(``chunkwise.lexical``: folded, stemmed) in three fields (body, title, heading path) and score with
``lexical.term_weights`` (k1=1.2, b=0.75, the Robertson–Spärck Jones idf that FTS5 uses) over a term
count weighted by field (``FieldWeights``) and the body's length: the same scores from either engine.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Sequence

from chunkwise.lexical import FIELDS, FieldWeights, LexicalFields, analyze, query_terms, term_weights

__all__ = ["SparseBM25", "Stats", "analyze", "at_floor", "combine_fields", "keep_informative", "query_terms",
           "term_weights", "tokenize"]


def tokenize(text: str) -> list[str]:
    """The analysed terms of ``text`` (``chunkwise.lexical.analyze``)."""
    return analyze(text)


def at_floor(n_docs: int, df: int) -> bool:
    """A term in half the rows or more gets the floor idf: it shifts every score by ~1e-6 and
    changes no ranking that matters, but reading its postings is most of a query's cost (at a
    million chunks, ~30x for FTS5). Both engines leave such terms out of a query that has others."""
    return n_docs > 0 and 2 * df >= n_docs


def keep_informative(terms: list[str], df: dict[str, int], n_docs: int) -> list[str]:
    """Terms that occur and are not at the floor; all of them when no such term exists."""
    kept = [t for t in terms if df.get(t, 0) and not at_floor(n_docs, df[t])]
    return kept or terms


def combine_fields(tf, weights: FieldWeights):
    """A term's count per row from its per-field counts (n, 3): body + title x w + heading x w."""
    import numpy as np

    return np.asarray(tf, dtype=np.float64) @ np.asarray(weights.vector(), dtype=np.float64)


@dataclass(frozen=True)
class Stats:
    """Collection statistics of what one caller may see."""

    rows: int
    avgdl: float


@dataclass
class SparseBM25:
    """Per-field postings with raw term counts; weights are computed per query from the caller's
    statistics and the field weights asked for."""

    vocab: dict[str, int]
    indptr: tuple  # per field: term t's postings are positions[f][indptr[f][t]:indptr[f][t+1]]
    positions: tuple
    tf: tuple  # per field: term count in that row (float32)
    lengths: "object"  # body terms per row (float64), by position
    n_rows: int

    @classmethod
    def build(cls, docs: Iterable[LexicalFields | str], n_rows: int) -> "SparseBM25":
        """Index ``docs`` (in index-position order): analysed fields, or plain texts (analysed here
        as a body). One pass to map terms to ids, then numpy."""
        import numpy as np

        vocab: dict[str, int] = {}
        ids: list[list] = [[] for _ in FIELDS]
        rows: list[list] = [[] for _ in FIELDS]
        lengths = np.zeros(n_rows, dtype=np.float64)
        for pos, doc in enumerate(docs):
            fields = doc if isinstance(doc, LexicalFields) else LexicalFields.of(doc)
            for f, terms in enumerate(fields.terms()):
                if f == 0:
                    lengths[pos] = len(terms)
                if terms:
                    ids[f].append(np.asarray([vocab.setdefault(t, len(vocab)) for t in terms], dtype=np.int64))
                    rows[f].append(np.full(len(terms), pos, dtype=np.int64))
        indptr, positions, tfs = [], [], []
        for f in range(len(FIELDS)):
            if not ids[f]:
                indptr.append(np.zeros(len(vocab) + 1, np.int64))
                positions.append(np.zeros(0, np.int64))
                tfs.append(np.zeros(0, np.float32))
                continue
            term, row = np.concatenate(ids[f]), np.concatenate(rows[f])
            key, tf = np.unique(term * max(n_rows, 1) + row, return_counts=True)  # sorted by term, then row
            term, row = key // max(n_rows, 1), key % max(n_rows, 1)
            df = np.bincount(term, minlength=len(vocab))
            indptr.append(np.concatenate([[0], np.cumsum(df)]).astype(np.int64))
            positions.append(row.astype(np.int32 if n_rows < 2**31 else np.int64))
            tfs.append(tf.astype(np.float32))
        return cls(vocab, tuple(indptr), tuple(positions), tuple(tfs), lengths, n_rows)

    def stats(self, mask) -> Stats:
        n = int(mask.sum())
        return Stats(n, float(self.lengths[mask].sum() / n) if n else 1.0)

    def postings(self, term: str, mask, weights: FieldWeights):
        """(positions the mask admits holding ``term`` in a weighted field, their weighted counts)."""
        import numpy as np

        i = self.vocab.get(term)
        if i is None:
            return None
        parts = []
        for f, w in enumerate(weights.vector()):
            if w <= 0:
                continue
            ptr = self.indptr[f]
            pos = self.positions[f][ptr[i]:ptr[i + 1]]
            keep = mask[pos]
            if keep.any():
                parts.append((pos[keep].astype(np.int64), w * self.tf[f][ptr[i]:ptr[i + 1]][keep].astype(np.float64)))
        if not parts:
            return None
        if len(parts) == 1:
            return parts[0]
        pos = np.concatenate([p for p, _ in parts])
        uniq, inverse = np.unique(pos, return_inverse=True)
        return uniq, np.bincount(inverse, weights=np.concatenate([t for _, t in parts]), minlength=len(uniq))

    def scores(self, terms: Sequence[str], mask, stats: Stats, informative: bool = True,
               weights: FieldWeights | None = None, visible=None):
        """(positions with a non-zero score, their scores) among the positions ``mask`` admits, for
        the given query terms, scored with the statistics of those positions alone. With
        ``informative``, terms at the idf floor *among them* are skipped when others remain.
        ``visible``: the same positions as ``layout.Visible`` (what the index passes): the same
        result, read without a pass through the mask (``_visible_postings``)."""
        import numpy as np

        weights = weights or FieldWeights()
        if visible is None:
            postings = [p for p in (self.postings(t, mask, weights) for t in terms) if p is not None]
            if informative:
                postings = [p for p in postings if not at_floor(stats.rows, len(p[0]))] or postings
        else:
            postings = self._visible_postings(terms, visible, stats, informative, weights)
        if not postings:
            return np.zeros(0, np.int64), np.zeros(0, np.float32)
        pos = np.concatenate([p[0] for p in postings]).astype(np.int64)
        w = np.concatenate([term_weights(p[1], self.lengths[p[0]], len(p[0]), stats.rows, stats.avgdl)
                            for p in postings])
        if len(postings) == 1:
            return pos, w.astype(np.float32)
        if visible is None:
            total = np.bincount(pos, weights=w, minlength=self.n_rows)
            hit = np.flatnonzero(total)
            return hit, total[hit].astype(np.float32)
        # Summed in the caller's numbering (same order of additions: the same sums), then mapped back.
        total = np.bincount(np.concatenate([p[2] for p in postings]), weights=w, minlength=visible.size)
        hit = np.flatnonzero(total)
        return visible.where[hit], total[hit].astype(np.float32)

    def _visible_postings(self, terms: Sequence[str], visible, stats: Stats, informative: bool,
                          weights: FieldWeights) -> list:
        """``postings`` of each term for the rows ``visible`` admits, as (positions, weighted
        counts, the caller's numbers of those rows), with ``scores``' informative rule. A term's
        postings are sorted by position: the caller's part of them is a binary search per range.
        A term whose count in one field alone puts it at the floor is known to be skipped before
        anything is copied (at a million rows the few terms in half of them hold most postings)."""
        cuts, floor = [], []
        for term in terms:
            i = self.vocab.get(term)
            cut = None if i is None else self._cut(i, visible, weights)
            if cut is None:
                continue
            if informative and at_floor(stats.rows, max(int((hi - lo).sum()) for _, _, lo, hi in cut)):
                floor.append(len(cuts))
                cuts.append(cut)
                continue
            cuts.append(self._take(cut, visible))
            if informative and at_floor(stats.rows, len(cuts[-1][0])):
                floor.append(len(cuts) - 1)
        if len(floor) == len(cuts):  # nothing informative: every term counts
            return [c if isinstance(c, tuple) else self._take(c, visible) for c in cuts]
        skipped = set(floor)
        return [c for j, c in enumerate(cuts) if j not in skipped]

    def _cut(self, i: int, visible, weights: FieldWeights) -> list | None:
        """Per weighted field holding term ``i`` where ``visible`` admits it: (field, weight, first
        and past-last posting per range); None when there is none."""
        import numpy as np

        out = []
        for f, w in enumerate(weights.vector()):
            if w <= 0:
                continue
            a, b = self.indptr[f][i], self.indptr[f][i + 1]
            if a == b:
                continue
            pos = self.positions[f][a:b]  # bounds in its own dtype: a mixed search would copy the postings
            lo = np.searchsorted(pos, visible.starts.astype(pos.dtype)) + a
            hi = np.searchsorted(pos, visible.ends.astype(pos.dtype)) + a
            if (hi > lo).any():
                out.append((f, w, lo, hi))
        return out or None

    def _take(self, cut: list, visible) -> tuple:
        """A ``_cut``'s postings: (positions, weighted counts, caller's numbers), fields merged."""
        import numpy as np

        parts = []
        for f, w, lo, hi in cut:
            runs = np.flatnonzero(hi > lo)
            pos = np.concatenate([self.positions[f][lo[r]:hi[r]] for r in runs]).astype(np.int64)
            tf = w * np.concatenate([self.tf[f][lo[r]:hi[r]] for r in runs]).astype(np.float64)
            parts.append((pos, tf, pos - np.repeat(visible.shift[runs], (hi - lo)[runs])))
        if len(parts) == 1:
            return parts[0]
        number = np.concatenate([n for _, _, n in parts])
        uniq, inverse = np.unique(number, return_inverse=True)  # the caller's numbers sort as positions do
        tf = np.bincount(inverse, weights=np.concatenate([t for _, t, _ in parts]), minlength=len(uniq))
        return visible.where[uniq], tf, uniq

    @property
    def nbytes(self) -> int:
        return int(sum(a.nbytes for a in (*self.indptr, *self.positions, *self.tf)) + self.lengths.nbytes)
