"""Search over a chunkwise store: rank, resolve, merge, expand, assemble.

A server store (PostgreSQL, ``Capabilities.native_search``) ranks with its own primitives (retrieve/server.py:
BM25 from permitted postings, dense through its vector index, the filter inside each query); what
follows describes the SQLite store.

BM25 runs in SQLite FTS5 by default, the access filter inside ``MATCH`` (retrieve/fts.py: only row
sizes and tags are loaded; good to about 100k chunks), or in memory with the sparse scorer
(``bm25="sparse"``: built once per Retriever, ~10 ms at a million chunks). Either way a score is
computed from the rows the caller may see (no side channel through BM25 statistics). Dense search
loads the permitted-servable vectors once into an access-ordered matrix. Only the top rows are read
back from the store to build hits.
"""
from __future__ import annotations

import importlib.util
import os
from typing import Callable, Sequence

from chunkwise.retrieve.positions import withheld
from chunkwise.access import permitted
from chunkwise.errors import ConfigError
from chunkwise.lexical import FieldWeights
from chunkwise.retrieve.assembly import assemble_hits, assemble_ranked
from chunkwise.retrieve.filters import Filters
from chunkwise.retrieve.fts import FTSRanker
from chunkwise.retrieve.fusion import Fusion
from chunkwise.retrieve.server import ServerBM25, dense_rank
from chunkwise.retrieve.index import HYBRID_DEPTH, Item, SearchIndex, check_groups, check_mode
from chunkwise.retrieve.passages import DEFAULT_PASSAGE_BUDGET, check_passage_budget
from chunkwise.retrieve.per_document import PER, assemble_documents
from chunkwise.retrieve.types import EXPANSIONS, GRANULARITIES, VERSIONS, Hit, SearchResult
from chunkwise.retrieve.version_intent import VersionIntent, families, parse as parse_intent, select as select_versions
from chunkwise.retrieve.rerank import DEFAULT_DEPTH as DEFAULT_RERANK_DEPTH, Reranker, check_depth, make_reranker, rerank
from chunkwise.retrieve.versions import resolve_versions

# Rows from which a hybrid search over the in-memory index ranks its dense list in a thread beside
# BM25 (below: a thread costs more than it saves; 100k generated rows: dense ~3 ms, BM25 ~3 ms).
PARALLEL_ROWS = 50_000

BM25_BACKENDS = ("fts5", "sparse")


def generator_sizer(name: str | None = None):
    """The tokenizer the context budget is counted in: the generator's. cl100k_base when tiktoken
    is installed, else MiniLM's, unless named (a tiktoken encoding, 'minilm' or a tokenizer.json)."""
    from chunkwise.chunking.sizing import make_sizer

    if name is None:
        name = "cl100k_base" if importlib.util.find_spec("tiktoken") else "minilm"
    return name, make_sizer("tokens", name)


def _item(chunk) -> Item:
    """A stored chunk (store.base.StoredChunk) as the retriever's Item."""
    rec = chunk.record
    return Item(rec["chunk_id"], rec["doc_id"], rec["chunk_index"], rec["start_char"], rec["end_char"], rec["text"],
                rec["embed_text"], chunk.acl, chunk.quality, rec.get("source_uri") or chunk.source_uri,
                tuple(rec.get("heading_path") or ()), rec.get("page"), rec.get("section_id", ""),
                rec.get("source_version", ""), rec.get("doc_version", ""), rec.get("doc_updated_at", ""),
                rec.get("title") or "", tuple(tuple(b) for b in rec.get("boxes") or ()))


class IndexCache:
    """The in-memory index (vectors, and texts for the sparse BM25) of a store at some generation,
    shared by every Retriever of one process that is given it (a server's workers: one copy of the
    vectors, built once per change). Rebuilt when a reader sees a newer generation than it was built
    at; a reader whose snapshot is older uses the newer index (a row it cannot read is skipped,
    every hit is re-checked on its row), so two readers never rebuild back and forth."""

    def __init__(self) -> None:
        import threading

        self._lock = threading.Lock()
        self.index: SearchIndex | None = None
        self.generation: int | None = None

    def get(self, generation: int | None, build: Callable[[], SearchIndex]) -> SearchIndex:
        with self._lock:
            stale = (self.index is not None and generation is not None
                     and (self.generation is None or generation > self.generation))
            if self.index is None or stale:
                self.index, self.generation = build(), generation
            return self.index

    def state(self, generation: int | None) -> str:
        """``not loaded``, ``current`` or ``stale`` (rebuilt by the next search that needs it)."""
        if self.index is None:
            return "not loaded"
        if generation is not None and (self.generation is None or generation > self.generation):
            return "stale"
        return "current"


class Retriever:
    """A long-lived searcher over one store (open once, search many times). After an ingest commits,
    the next search sees it in every mode: BM25 reads the store, and the in-memory dense index is
    rebuilt when the store's generation has moved (``IndexCache``)."""

    def __init__(self, db, *, embedder="auto", bm25: str = "fts5", generator_tokenizer: str | None = None,
                 field_weights: FieldWeights | dict | str | None = None, fusion: Fusion | dict | str | None = None,
                 reranker: Reranker | str | None = None, rerank_depth: int = DEFAULT_RERANK_DEPTH,
                 index_cache: IndexCache | None = None) -> None:
        """``db``: a store path or URL (opened read-only: search works on a read-only file), or an
        open ``store.base.Store``. ``field_weights``: BM25 weights of the title and heading fields
        (``lexical.FieldWeights``, e.g. ``"title=2,heading=1.5"``); ``fusion``: hybrid's weighted RRF
        (``fusion.Fusion``, e.g. ``"bm25=1,dense=0.5"``); ``reranker``: a second stage over the
        permitted candidates (``retrieve.rerank``: ``"tei:URL"``, ``"cohere:URL#MODEL"`` or an object),
        applied to the first ``rerank_depth`` hits. ``index_cache``: an in-memory index shared with
        other retrievers of the same store (one per server worker); by default its own."""
        from chunkwise.store import open_store

        self.reranker = make_reranker(reranker) if isinstance(reranker, str) else reranker
        self.rerank_depth = check_depth(rerank_depth)

        if bm25 not in BM25_BACKENDS:
            raise ConfigError(f"unknown BM25 backend {bm25!r}; use one of: {', '.join(BM25_BACKENDS)}")
        self.store = open_store(db, readonly=True) if isinstance(db, (str, os.PathLike)) else db
        if bm25 == "sparse" and self.store.capabilities.filtered_reads:
            self.store.close()
            raise ConfigError("--bm25 sparse loads every servable row into this process, and this role reads the "
                              "store through row-level security (it sees only each caller's rows): use --bm25 fts5, "
                              "which ranks inside the server")
        self.bm25_backend = bm25
        self.field_weights = FieldWeights.parse(field_weights)
        self.fusion = Fusion.parse(fusion)
        settings = self.store.settings()
        self.model = settings.get("embedder", "none")
        # No run has finished on this store (ingest records its model at the end): a first run that
        # stopped part-way (a PostgreSQL restart, a kill) left whole documents, vectors maybe among them.
        self.unrecorded = "embedder" not in settings
        # Late-chunked vectors live in their base model's space: queries are embedded by the base model.
        query_model = self.model.split("+", 1)[0]
        if embedder == "auto":
            from chunkwise.embed import make_embedder

            embedder = make_embedder(query_model) if self.model != "none" else None
        elif isinstance(embedder, str):
            from chunkwise.embed import make_embedder

            embedder = make_embedder(embedder)
        if embedder is not None and embedder.name != query_model:
            raise ConfigError(f"the store's vectors were made by {self.model}; a {embedder.name} query vector cannot "
                              f"be compared with them (use --embedder {self.model} or re-ingest)")
        self.embedder = embedder
        self.tokenizer_name, self.sizer = generator_sizer(generator_tokenizer)
        self.cache = index_cache if index_cache is not None else IndexCache()
        # A server store ranks with its own primitives (retrieve/server.py): nothing is loaded per process.
        self.native = self.store.capabilities.native_search
        self.ranker = self.store.ranker  # ServerRanker when native, else LocalRanker (store/base.py)
        self.fts = (ServerBM25 if self.native else FTSRanker)(self.ranker, self.field_weights)
        # May a hybrid search rank its dense list on a thread of its own right now? A second thread
        # wins wall time only on an idle core; a server whose search workers already fill the cores
        # would pay its start and the GIL hand-overs for nothing (serve/engine.py sets this).
        self.spare_core: Callable[[], bool] | None = None

    def close(self) -> None:
        self.store.close()

    def __enter__(self) -> "Retriever":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def as_caller(self, groups):
        """The store's reads inside are ``groups``' (``Store.as_caller``): a secured PostgreSQL store
        shows only their rows, so every read of a search runs in one (rows, versions, expansion)."""
        return self.store.as_caller(groups)

    # -- ChunkSource (expansion) ---------------------------------------------------------------
    def document_version(self, doc_id: str) -> str | None:
        found = self.store.documents([doc_id])
        return found[0].source_version if found else None

    def doc_chunks(self, doc_id: str) -> list[Item]:
        return [_item(c) for c in self.store.chunks(doc_id=doc_id)]

    def permitted_counts(self, doc_ids, groups) -> dict[str, tuple[int, int]]:
        """doc_id -> (chunks ``groups`` may read, chunks the document holds) for ``withheld``. The
        document row is read only for a document the caller may see a chunk of (as
        ``visible_document`` does), so a hidden id costs what an absent one costs: (0, 0) both."""
        seen = {d: self.store.count(d, groups) for d in sorted(set(doc_ids))}
        shown = [d for d, n in seen.items() if n]
        totals = {d.doc_id: d.chunk_count for d in self.store.documents(shown)} if shown else {}
        return {d: (n, totals.get(d, 0) if n else 0) for d, n in seen.items()}

    # -- ranking -------------------------------------------------------------------------------
    def has_vectors(self) -> bool:
        return self.embedder is not None and self.ranker.has_vectors()

    def generation(self) -> int | None:
        """The store's generation as this reader sees it now (None: the store keeps none)."""
        return self.store.generation()

    def index(self) -> SearchIndex:
        """The in-memory index of servable rows (vectors, and texts for the sparse BM25), built on
        first use and again whenever the store's generation has moved since. The generation is read
        before the rows, so an index is never marked newer than what it holds."""
        return self.cache.get(self.generation(), self._build_index)

    def _build_index(self) -> SearchIndex:
        want_vectors = self.embedder is not None
        sparse = self.bm25_backend == "sparse"
        rows = self.ranker.servable_rows(lexical=sparse, vectors=want_vectors, ranks=True)
        return SearchIndex(rows.keys, rows.tags, rows.ranks, texts=rows.lexical, vectors=rows.vectors,
                           field_weights=self.field_weights, fusion=self.fusion)

    def index_state(self) -> dict[str, str]:
        """Each index's state for /health: BM25 is read from the store (always current); the dense
        (and sparse BM25) index is in memory: not loaded, current or stale against the store."""
        generation = self.generation()
        memory = "in the store (always current)" if self.native else self.cache.state(generation)
        out = {"bm25": "in the store (always current)" if self.bm25_backend == "fts5" or self.native else memory}
        if self.embedder is not None:
            out["dense"] = memory
        return out

    def warm(self) -> None:
        """Build now what the first query would wait for: the in-memory vector index of a SQLite
        store and this reader's FTS5 row sizes (a server store keeps its indexes itself: nothing to
        load). Cheap once built: a server calls it before every job."""
        if self.native:
            return
        if self.has_vectors():
            self.index()
        if self.bm25_backend == "fts5":
            self.fts.warm()

    def _query_vector(self, query: str):
        if self.embedder is None and self.unrecorded:
            raise ConfigError("no ingest has finished on this store yet (a first run stopped part-way, or none "
                              "ran), so the model of its vectors is not recorded: run chunkwise ingest on it to "
                              "finish, or use --mode bm25")
        if self.embedder is None:
            raise ConfigError("this store has no vectors (ingested with --embedder none): use --mode bm25, "
                              "or re-ingest with --embedder hashing|minilm")
        return self.embedder.embed([query])[0]

    def _why_no_vectors(self) -> str:
        """What is really wrong when dense ranking has no row to rank."""
        if self.store.capabilities.filtered_reads:  # a reader under row-level security cannot count the store
            return ("no chunk this store can serve has a vector: its owner's chunkwise check --db says why; use "
                    "--mode bm25 meanwhile")
        c = self.store.counts()
        if not c.chunks:
            return "this store holds no chunks yet; ingest documents into it first"
        if not c.servable:
            why = ", ".join(f"{k} {v}" for k, v in sorted(c.review_reasons.items())) or "no access tags"
            return (f"nothing in this store can be served: all {c.chunks} chunks are in review or untagged ({why}); "
                    f"re-ingest with access tags (--acl TAG or --acl-map FILE)")
        return (f"none of the store's {c.servable} servable chunks has a vector ({c.missing_vectors} chunks lack "
                f"one); run chunkwise check, then re-ingest, or use --mode bm25")

    def rank(self, query: str, groups, n: int, mode: str) -> list[tuple[int, float]]:
        """Top ``n`` (row key, score) the caller may see, best first, exact ties by ascending chunk id
        in every mode (retrieve/ties.py); the filter is inside every query."""
        with self.as_caller(groups):
            return self._rank(query, groups, n, mode)

    def _rank(self, query: str, groups, n: int, mode: str) -> list[tuple[int, float]]:
        if mode == "bm25":
            if self.bm25_backend == "fts5":
                return self.fts.rank(query, groups, n)
            return self.index().rank_bm25(query, groups, n)
        if mode == "dense":
            return self._rank_dense(self._query_vector(query), groups, n)
        depth = max(n, HYBRID_DEPTH)
        bm25, dense = self._hybrid_lists(query, groups, lambda: self._query_vector(query), depth)
        return self.fusion.fuse(bm25, dense, self._tie_order, n)

    def _hybrid_lists(self, query: str, groups, query_vector: Callable[[], object], depth: int) -> tuple[list, list]:
        """(BM25 keys, dense keys), each the top ``depth``; ``query_vector()`` embeds the query. With
        a large in-memory index the query is embedded and the dense product runs in a thread of its
        own while BM25 ranks in this one: the model (ONNX Runtime) and the product (numpy over the
        caller's slices) run with the GIL released, so on a machine with a core to spare a hybrid
        search costs about the slower list, not the sum of both (at 1M chunks ~30 ms dense and ~15
        ms BM25; at 100k, BM25 ~45 ms against ~3-6 ms to embed the query on one thread and ~3 ms of
        product). A thread per search, never a shared worker: concurrent searches (serve) do not
        queue behind each other. The thread touches no connection, only the model and the index."""
        index = None if self.native else self.index()
        if index is None or index.dense is None or len(index) < PARALLEL_ROWS or \
                (self.spare_core is not None and not self.spare_core()):
            dense = self._rank_dense(query_vector(), groups, depth)
            return [r for r, _ in self._rank(query, groups, depth, "bm25")], [r for r, _ in dense]
        import threading

        box: dict = {}

        def rank_dense() -> None:
            try:
                box["dense"] = index.rank_dense(query_vector(), groups, depth)
            except BaseException as exc:  # noqa: BLE001 — re-raised in the caller's thread below
                box["error"] = exc

        worker = threading.Thread(target=rank_dense, name="chunkwise-dense", daemon=True)
        worker.start()
        try:
            bm25 = [r for r, _ in self._rank(query, groups, depth, "bm25")]
        finally:
            worker.join()
        if "error" in box:
            raise box["error"]
        return bm25, [r for r, _ in box["dense"]]

    def _tie_order(self, keys: list) -> dict:
        """Sort keys in chunk id order for fused ties: the in-memory index's ranks when it holds every
        key (no query), else the store's chunk ids (a server store; a row written since the index)."""
        if self.cache.index is not None:
            ranks = self.cache.index.tie_ranks(keys)
            if len(ranks) == len(set(keys)):
                return ranks
        return self.ranker.chunk_ids(keys)

    def _rank_dense(self, vector, groups, n: int) -> list[tuple[int, float]]:
        if self.native:
            if not self.ranker.has_vectors():
                raise ConfigError(self._why_no_vectors())
            return dense_rank(self.ranker, vector, groups, n)
        if self.index().dense is None:
            raise ConfigError(self._why_no_vectors())
        return self.index().rank_dense(vector, groups, n)

    def hits(self, ranked: Sequence[tuple[int, float]], groups) -> list[Hit]:
        if not ranked:
            return []
        with self.as_caller(groups):
            rows = {c.key: c for c in self.store.chunks(keys=[r for r, _ in ranked])}
        out = []
        for rowid, score in ranked:
            row = rows.get(rowid)
            if row is None:
                continue  # deleted since the index was built
            item = _item(row)
            if not permitted(item.acl, item.quality, groups):
                continue  # re-checked on the row itself: a tag changed since the index was built
            out.append(item.hit(score, len(out) + 1))
        return out

    def resolve_versions(self, hits: Sequence[Hit], groups, *, latest_only: bool = True) -> list[Hit]:
        """Identical passages collapsed, superseded versions dropped (``latest_only``), for ``groups``."""
        with self.as_caller(groups):
            return resolve_versions(hits, lambda docs: self.store.version_links(docs, groups), latest_only=latest_only)

    # -- the whole pipeline --------------------------------------------------------------------
    def search(self, query: str, groups, *, k: int = 5, mode: str = "auto", expand: str = "none",
               budget: int | None = None, overfetch: int = 3,
               passage_budget: int | None = DEFAULT_PASSAGE_BUDGET, versions: str = "auto",
               granularity: str = "passage", filters: Filters | None = None, per: str = "passage") -> SearchResult:
        """Rank ``k x overfetch`` hits (more when they make fewer than ``k`` passages), then
        assemble them (retrieve/assembly.py). ``versions``: "auto" (default) serves the latest
        version of a document the caller may see unless the query names a version, a year or an
        earlier version (retrieve/version_intent.py), "latest" always the latest, "all" every version
        (each saying which newer ones exist); identical passages of several documents come back
        once, listing the others (retrieve/versions.py), before assembly. ``granularity="page"``
        makes each result a page of a paged document (with ``expand="neighbours"``: with the pages
        either side), cut around its best chunk when over the budget. ``filters`` (retrieve/filters.py)
        narrow the permitted hits before assembly; they never widen what ``groups`` may see.
        ``per="document"``: ``k`` counts distinct documents, results grouped by document, each
        document's best passage first (retrieve/per_document.py)."""
        groups = check_groups(groups)
        if not query.strip():  # dense would still rank something: passages that answer nothing
            raise ConfigError("the query is empty: give the words to search for")
        if per not in PER:
            raise ConfigError(f"unknown per choice {per!r}; use one of: {', '.join(PER)}")
        if versions not in VERSIONS:
            raise ConfigError(f"unknown versions choice {versions!r}; use one of: {', '.join(VERSIONS)}")
        if mode == "auto":
            mode = "hybrid" if self.has_vectors() else "bm25"
        check_mode(mode)
        expand = page_expansion(granularity, expand)
        if expand not in EXPANSIONS:
            raise ConfigError(f"unknown expansion {expand!r}; use one of: {', '.join(EXPANSIONS)}")
        if k < 1 or overfetch < 1:
            raise ConfigError(f"k and overfetch must be at least 1 (got k={k}, overfetch={overfetch})")
        if budget is not None and budget < 1:
            raise ConfigError(f"--budget must be a positive number of tokens, got {budget}")
        check_passage_budget(passage_budget)
        intent = parse_intent(query) if versions == "auto" else VersionIntent()
        history = intent.asks_history

        def fetch(n: int):
            ranked = self.rank(query, groups, n, mode)
            hits = self.hits(ranked, groups)
            if filters is not None and not filters.empty:
                hits = [h for h in hits if filters.accepts(h)]
            hits = self.resolve_versions(hits, groups,
                                         latest_only=versions == "latest" or (versions == "auto" and not history))
            if history:
                docs = {d for h in hits for d in (h.doc_id, *(r.doc_id for r in h.also_in))}
                family, newer = families(lambda ds: self.store.version_links(ds, groups), docs)
                hits = select_versions(hits, intent, family, newer)
            if self.reranker is not None:
                hits = rerank(hits, query, self.reranker, self.rerank_depth)
            return hits, len(ranked) < n

        with self.as_caller(groups):  # one snapshot for the whole search, rows filtered by a secured store too
            assemble = assemble_documents if per == "document" else assemble_ranked
            ctx = assemble(fetch, k=k, overfetch=overfetch, measure=self.sizer.count, budget=budget,
                           passage_budget=passage_budget, expand=expand, source=self, groups=groups)
            hidden = withheld(self, _documents(ctx.passages), groups)
        return SearchResult(query, mode, ctx.passages, ctx.text, ctx.tokens, ctx.omitted, per=per, withheld=hidden)


def page_expansion(granularity: str, expand: str) -> str:
    """The expansion that makes results pages: ``page`` (or ``pages`` with neighbours)."""
    if granularity not in GRANULARITIES:
        raise ConfigError(f"unknown granularity {granularity!r}; use one of: {', '.join(GRANULARITIES)}")
    if granularity == "passage":
        return expand
    if expand not in ("none", "neighbours", "page", "pages"):
        raise ConfigError(f"--granularity page takes --expand none (the page) or neighbours (with the pages "
                          f"either side), not {expand!r}")
    return "pages" if expand in ("neighbours", "pages") else "page"


def finish(query: str, mode: str, hits: Sequence[Hit], source, groups, expand: str, budget: int | None,
           measure: Callable[[str], int], *, k: int, passage_budget: int | None = DEFAULT_PASSAGE_BUDGET) -> SearchResult:
    """Assembly of an ordered, permitted hit list into a SearchResult: shared by the store retriever's
    callers that rank in memory (evaluation, benchmarks)."""
    ctx = assemble_hits(hits, k=k, measure=measure, budget=budget, passage_budget=passage_budget, expand=expand,
                        source=source, groups=groups)
    return SearchResult(query, mode, ctx.passages, ctx.text, ctx.tokens, ctx.omitted,
                        withheld=withheld(source, _documents(ctx.passages), groups))


def _documents(passages) -> set[str]:
    """Every document a result names: its own and those of its version references."""
    return {d for p in passages for d in (p.doc_id, *(v.doc_id for v in (*p.versions, *p.also_in)))}


def search(db, query: str, groups, **options) -> SearchResult:
    """One-shot search (opens the store, searches, closes). Options: k, mode, expand, budget,
    passage_budget, overfetch, versions, embedder, bm25, generator_tokenizer, field_weights, fusion,
    reranker, rerank_depth."""
    init = {key: options.pop(key) for key in ("embedder", "bm25", "generator_tokenizer", "field_weights", "fusion",
                                              "reranker", "rerank_depth") if key in options}
    with Retriever(db, **init) as r:
        return r.search(query, groups, **options)
