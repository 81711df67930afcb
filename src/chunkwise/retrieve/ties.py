"""The one tie order of every ranker: exact score ties rank by ascending ``chunk_id``.

A ranking must follow from the store's content alone, so that two stores holding the same chunks
rank them alike however they were written: in another order, by parallel Ray write actors, on
SQLite or on PostgreSQL. Row keys (SQLite's rowid, PostgreSQL's identity key) are insertion order
and cannot decide. ``chunk_id`` (``ids.chunk_id``: a digest of the document id, the normalised
text and its occurrence in the document) is content-only and unique per row (a UNIQUE column on
both backends). Ids compare as Python strings (code points: the same order as SQLite's BINARY and
PostgreSQL's ``COLLATE "C"``; the ids are 32 lowercase hex digits anyway).

The rule has two forms, one per kind of ranker:

- in-memory indexes hold ``ranks`` (each row's position in chunk id order, int64: no strings)
  and cut with ``top_k``;
- rankers that hold row keys (FTS5, PostgreSQL's BM25 and dense candidates, fusion over a store's
  keys) cut with ``best_first`` / ``settle``, which ask the store for chunk ids only for the rows of
  a tie inside the top n or straddling its cut — usually none, so usually no lookup.

Either way every row tied with the n-th is looked at, so a tie straddling the cut keeps the rows
with the smaller ids whatever order the candidates came in.
"""
from __future__ import annotations

from typing import Callable, Hashable, Mapping, Sequence

ChunkIds = Callable[[list], Mapping]  # items -> {item: chunk_id} (items it cannot name are left out)


def ranks(chunk_ids: Sequence[str]):
    """Each (unique) id's position in ascending order: the in-memory indexes' tie-break."""
    import numpy as np

    order = sorted(range(len(chunk_ids)), key=chunk_ids.__getitem__)
    out = np.empty(len(chunk_ids), dtype=np.int64)
    out[order] = np.arange(len(chunk_ids), dtype=np.int64)
    return out


def top_k(scores, k: int, tiebreak, candidates=None, at=None):
    """Indices of the ``k`` largest ``scores`` (numpy), ties broken by ascending ``tiebreak``
    (``ranks``, aligned with ``scores``; with ``at``, score i's is ``tiebreak[at[i]]``: only the
    few rows that reach the cut are looked up). Only positions in ``candidates`` (if given) are considered.

    Uses argpartition, then keeps every element tied with the k-th so that the tie-break, not
    the partition's internal order, decides who is in."""
    import numpy as np

    idx = np.arange(len(scores)) if candidates is None else np.asarray(candidates)
    if k <= 0 or idx.size == 0:
        return idx[:0]
    vals = scores[idx] if candidates is not None else scores
    if idx.size > k:
        kth = np.partition(vals, idx.size - k)[idx.size - k]
        keep = vals >= kth
        idx, vals = idx[keep], vals[keep]
    order = np.lexsort((tiebreak[idx if at is None else at[idx]], -vals))
    return idx[order[:k]]


def settle(items: Sequence[Hashable], primary: Sequence, n: int | None, chunk_ids: ChunkIds | None = None) -> list:
    """The first ``n`` (None: all) of ``items``, which are sorted best first by ``primary`` (their
    sort keys), with every run of equal primary keys that reaches into the first ``n`` ordered by
    ascending chunk id. ``chunk_ids(items)`` names the items of those runs only (None: the items
    are chunk ids); an item it cannot name (a row deleted meanwhile) goes last in its run."""
    end = len(items) if n is None else max(0, min(n, len(items)))
    i = 0
    runs: list[tuple[int, int]] = []
    while i < end:
        j = i + 1
        while j < len(items) and primary[j] == primary[i]:
            j += 1
        if j - i > 1:
            runs.append((i, j))
        i = j
    if not runs:
        return list(items[:end])
    tied = [x for a, b in runs for x in items[a:b]]
    names = {x: x for x in tied} if chunk_ids is None else chunk_ids(tied)
    out = list(items[:max(end, runs[-1][1])])
    for a, b in runs:
        out[a:b] = sorted(items[a:b], key=lambda x: (x not in names, names.get(x, "")))
    return out[:end]


def best_first(keys, scores, n: int, chunk_ids: ChunkIds) -> list[tuple[int, float]]:
    """The top ``n`` (key, score) of row ``keys`` (int) by ``scores`` (numpy), exact ties by
    ascending chunk id (``chunk_ids``: the store's lookup, asked only when a tie decides)."""
    import numpy as np

    keys, scores = np.asarray(keys, dtype=np.int64), np.asarray(scores)
    if n < 1 or not scores.size:
        return []
    if scores.size > n:
        kth = np.partition(scores, scores.size - n)[scores.size - n]
        cand = np.flatnonzero(scores >= kth)  # every row tied with the n-th is in
    else:
        cand = np.arange(scores.size)
    cand = cand[np.argsort(-scores[cand], kind="stable")]
    vals = scores[cand]
    if not np.any(vals[1:] == vals[:-1]):
        return [(int(keys[i]), float(scores[i])) for i in cand[:n]]

    def names(positions: list) -> dict:
        found = chunk_ids([int(keys[p]) for p in positions])
        return {p: found[int(keys[p])] for p in positions if int(keys[p]) in found}

    cand = settle(cand.tolist(), vals.tolist(), n, names)
    return [(int(keys[i]), float(scores[i])) for i in cand]
