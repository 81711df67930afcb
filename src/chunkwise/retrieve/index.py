"""SearchIndex: BM25, dense and hybrid search with the permission filter applied before ranking.

The index holds only servable rows (see layout.py). It ranks positions; turning positions into
hits (texts, citations) is the caller's business — an in-memory list for evaluation, a SQLite
lookup of k rows for a store — so a million-chunk index need not hold a million Python objects.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Sequence

from chunkwise.access import READY, caller_groups
from chunkwise.errors import ConfigError
from chunkwise.lexical import FieldWeights, LexicalFields
from chunkwise.retrieve.bm25 import SparseBM25, query_terms
from chunkwise.retrieve.dense import DenseMatrix, near_top, normalise
from chunkwise.retrieve.fusion import Fusion
from chunkwise.retrieve.layout import AccessLayout, _cached
from chunkwise.retrieve.ties import ranks, top_k
from chunkwise.retrieve.types import MODES, Hit

HYBRID_DEPTH = 50  # each ranker's list length fed to RRF (at least k)


def check_mode(mode: str) -> str:
    if mode not in MODES:
        raise ConfigError(f"unknown retrieval mode {mode!r}; use one of: {', '.join(MODES)}")
    return mode


def check_groups(groups) -> tuple[str, ...]:
    g = caller_groups(groups).tags
    if not g:
        raise ConfigError("no access groups given: pass the caller's groups (e.g. --groups staff,sre); "
                          "chunks are only served to callers sharing one of their tags")
    return g


class SearchIndex:
    def __init__(self, keys: Sequence, tags: Sequence[tuple[str, ...]], tiebreak: Sequence[int], *,
                 texts: Iterable[str | LexicalFields] | None = None, vectors=None,
                 field_weights: FieldWeights | None = None, fusion: Fusion | None = None) -> None:
        """``keys[i]``, ``tags[i]``, ``tiebreak[i]``, ``texts``/``vectors`` row i: one servable row each.
        ``texts``: analysed fields (``LexicalFields``) or plain texts (analysed as a body).
        ``tiebreak``: row i's place in the tie order of retrieve/ties.py (``ties.ranks`` of the chunk
        ids); every mode, hybrid fusion included, breaks exact ties by it.
        ``field_weights`` and ``fusion``: the defaults of ``rank`` (BM25 fields, hybrid RRF)."""
        import numpy as np

        self.layout = AccessLayout.build(tags, tiebreak)
        order = self.layout.order
        self.keys = [keys[i] for i in order]
        self.tiebreak = np.asarray(tiebreak, dtype=np.int64)[order] if len(order) else np.zeros(0, np.int64)
        self.bm25: SparseBM25 | None = None
        if texts is not None:
            texts = list(texts)
            self.bm25 = SparseBM25.build((texts[i] for i in order), len(order))
        self._stats: dict = {}
        self._by_key = None  # (sorted integer keys, their tie ranks), built by the first tie_ranks call
        self.field_weights = field_weights or FieldWeights()
        self.fusion = fusion or Fusion()
        self.dense: DenseMatrix | None = None
        if vectors is not None:
            rows = normalise(vectors)
            if rows.shape[0] != len(order):
                raise ValueError(f"{rows.shape[0]} vectors for {len(order)} rows")
            self.dense = DenseMatrix(np.ascontiguousarray(rows[order]))

    def __len__(self) -> int:
        return self.layout.size

    def rank_bm25(self, query: str, groups, k: int, weights: FieldWeights | None = None) -> list[tuple[object, float]]:
        return self._keyed(*self._bm25(query, groups, k, weights))

    def rank_dense(self, query_vector, groups, k: int) -> list[tuple[object, float]]:
        return self._keyed(*self._dense(query_vector, groups, k))

    def _bm25(self, query: str, groups, k: int, weights: FieldWeights | None = None):
        """(positions, scores) of the top ``k``, best first."""
        if self.bm25 is None:
            raise ConfigError("this index was built without texts; BM25 needs them (build with texts=...)")
        terms = query_terms(query)
        mask = self.layout.mask(groups)  # the mask, before scoring: forbidden rows are not counted
        stats = _cached(self._stats, caller_groups(groups).tags, lambda key: self.bm25.stats(mask))  # threads share it
        for informative in (True, False):
            pos, vals = self.bm25.scores(terms, mask, stats, informative, weights or self.field_weights,
                                         self.layout.visible(groups))
            if pos.size >= k:
                break  # else: rows matching only the skipped common terms are needed to reach k
        return self._top(pos, vals, k)

    def _dense(self, query_vector, groups, k: int):
        if self.dense is None:
            raise ConfigError("this index has no vectors; ingest with an embedder (e.g. --embedder minilm) "
                              "or use --mode bm25")
        pos, vals = self.dense.scores(query_vector, self.layout.slices(groups))
        pos = pos[near_top(vals, k)]  # the fast product picks the candidates, the exact score ranks them
        return self._top(pos, self.dense.exact(pos, query_vector), k)

    def _top(self, pos, vals, k):
        if not pos.size:
            return pos, vals
        chosen = top_k(vals, k, self.tiebreak, at=pos)
        return pos[chosen], vals[chosen]

    def tie_ranks(self, keys: Sequence[int]) -> dict[int, int]:
        """key -> tie rank of the (integer) ``keys`` this index holds: what a caller fusing lists of
        these keys breaks ties by without asking the store (ranks compare like the chunk ids)."""
        import numpy as np

        if self._by_key is None:
            held = np.asarray(self.keys, dtype=np.int64)
            order = np.argsort(held, kind="stable")
            self._by_key = (held[order], self.tiebreak[order])
        held, rank = self._by_key
        wanted = np.asarray(keys, dtype=np.int64)
        at = np.minimum(np.searchsorted(held, wanted), max(len(held) - 1, 0))
        return {int(k): int(rank[i]) for k, i in zip(wanted, at) if len(held) and held[i] == k}

    def _keyed(self, pos, vals) -> list[tuple[object, float]]:
        return [(self.keys[int(p)], float(v)) for p, v in zip(pos, vals)]

    def rank(self, query: str, groups, k: int, mode: str = "hybrid", query_vector=None,
             depth: int = HYBRID_DEPTH) -> list[tuple[object, float]]:
        """Top ``k`` (key, score) the caller may see, best first (hybrid: ``self.fusion`` over the
        BM25 and dense lists, its ties in the same tie order)."""
        check_mode(mode)
        groups = check_groups(groups)
        if k < 1:
            raise ConfigError(f"k must be at least 1, got {k}")
        if mode == "bm25":
            return self.rank_bm25(query, groups, k)
        if query_vector is None:
            raise ConfigError(f"mode {mode!r} needs a query vector (give an embedder)")
        if mode == "dense":
            return self.rank_dense(query_vector, groups, k)
        n = max(k, depth)
        fused = self.fusion.fuse(self._bm25(query, groups, n)[0].tolist(), self._dense(query_vector, groups, n)[0].tolist(),
                                 lambda pos: {p: int(self.tiebreak[p]) for p in pos}, k)
        return [(self.keys[p], score) for p, score in fused]

    @property
    def nbytes(self) -> int:
        return (self.bm25.nbytes if self.bm25 else 0) + (self.dense.nbytes if self.dense else 0)


@dataclass(frozen=True)
class Item:
    """One chunk for an in-memory index (evaluation, experiments, tests)."""

    chunk_id: str
    doc_id: str
    chunk_index: int
    start_char: int
    end_char: int
    text: str
    embed_text: str = ""
    acl: tuple[str, ...] = ("all",)
    quality: str = READY
    source_uri: str = ""
    heading_path: tuple[str, ...] = ()
    page: int | None = None
    section_id: str = ""
    source_version: str = ""
    version: str = ""  # the document's front matter version
    updated_at: str = ""
    title: str = ""  # the document's (a weighted BM25 field)
    boxes: tuple[tuple, ...] = ()  # where the chunk is on its pages (``ChunkRecord.boxes``)

    def lexical(self) -> LexicalFields:
        return LexicalFields.of(self.embed_text or self.text, self.title, self.heading_path)

    def hit(self, score: float, rank: int) -> Hit:
        return Hit(self.chunk_id, self.doc_id, self.chunk_index, self.start_char, self.end_char, score, rank,
                   self.text, self.source_uri or self.doc_id, self.heading_path, self.page, self.acl,
                   self.section_id, self.source_version, self.version, self.updated_at, boxes=self.boxes)


class MemoryIndex:
    """A SearchIndex over a list of Items, answering with Hits. Unservable items are left out."""

    def __init__(self, items: Sequence[Item], vectors=None, *, embedder=None, bm25: bool = True,
                 field_weights: FieldWeights | None = None, fusion: Fusion | None = None) -> None:
        import numpy as np

        keep = [i for i, it in enumerate(items) if it.quality == READY and it.acl]
        self.items = [items[i] for i in keep]
        self.by_id = {it.chunk_id: it for it in items}
        if vectors is None and embedder is not None:
            vectors = embedder.embed([it.embed_text or it.text for it in self.items]) if self.items else []
        elif vectors is not None:
            vectors = np.asarray(vectors, dtype=np.float32)[keep] if len(keep) else None
        ids = [it.chunk_id for it in self.items]
        self.embedder = embedder
        self.index = SearchIndex(
            ids, [it.acl for it in self.items], ranks(ids),
            texts=[it.lexical() for it in self.items] if bm25 else None,
            vectors=vectors if vectors is not None and len(self.items) else None,
            field_weights=field_weights, fusion=fusion,
        )

    def search(self, query: str, groups, k: int = 5, mode: str = "hybrid", query_vector=None) -> list[Hit]:
        if mode != "bm25" and query_vector is None and self.embedder is not None:
            query_vector = self.embedder.embed([query])[0]
        if not len(self.index):
            check_mode(mode)
            check_groups(groups)
            return []
        ranked = self.index.rank(query, groups, k, mode, query_vector)
        return [self.by_id[c].hit(score, r) for r, (c, score) in enumerate(ranked, start=1)]
