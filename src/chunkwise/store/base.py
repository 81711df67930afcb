"""The storage interface: everything ingest, the retriever, the gate and the evaluator ask of a store.

A backend (SQLite, PostgreSQL) implements ``Store``; nothing outside ``store/`` writes SQL
or sees a driver type. The surface is deliberately small and speaks only plain values: chunk
records are ``dict``s (``ChunkRecord.to_dict()``), vectors are float32 ``numpy`` rows or lists of
floats, access tags are tuples of strings, and the permission filter is passed as the caller's
groups so each backend can put it *inside* its query (FTS5 ``MATCH``, a GIN-indexed array, ...).

Writes are per document and atomic: ``write_document`` takes the document's lock, reads what the
store holds for it, lets the caller's pure ``decide`` function take the set difference against
that fresh state, and applies the result in the same transaction. A second writer waits (up to the
store's timeout) and then gets ``StoreBusy``; readers never block. That protocol is written once,
for every backend, in ``store.writing``.

Three protocols, so each caller sees only what it needs: ``Store`` (22 methods: documents, writes,
vectors, runs, reads) with typed ``Capabilities`` instead of probing for methods, and the
backend's ranker — ``LocalRanker`` (SQLite: term lookups and rows for in-memory indexes) or
``ServerRanker`` (PostgreSQL: BM25F and nearest neighbours inside the server) — as ``store.ranker``.
Every method the library calls on a store is declared here, and each backend's class has these
members with these signatures (tests/store/test_protocol.py checks both, and scans the callers).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, ContextManager, Iterable, Iterator, Mapping, Protocol, Sequence

from chunkwise.errors import StoreBusy
from chunkwise.lexical import FIELDS


@dataclass(frozen=True)
class DocumentState:
    """What decides whether a document must be re-prepared: its bytes and every other input."""

    doc_id: str
    source_version: str  # sha256 of the source bytes
    inputs: str  # fingerprint of config, embedder and access rules that produced its records
    chunk_count: int
    path: str = ""  # relative to its root


@dataclass(frozen=True)
class DocumentRow:
    """One document as stored (the ``documents`` catalogue)."""

    doc_id: str
    root: str  # absolute path of the folder the document's ``path`` is relative to
    path: str  # POSIX path relative to ``root``; (root, path) is the document's identity
    source_uri: str
    source_version: str
    inputs: str
    title: str
    author: str
    updated_at: str
    ingested_at: str
    chunk_count: int
    # What version links are derived from (JSON written by enrich/versions.py: the front matter
    # ``version`` and ``supersedes``, a MinHash of the servable text, its access tags); "" unknown.
    versioning: str = ""


@dataclass(frozen=True)
class VersionLink:
    """``newer`` supersedes ``older`` (document ids): ``declared`` in front matter (``supersedes``)
    or ``detected`` (near-duplicate texts, ordered by ``version``/``updated_at``). ``similarity``:
    the estimated Jaccard similarity of the two texts' word shingles (1.0 when declared)."""

    newer: str
    older: str
    how: str
    similarity: float = 1.0


def kept_links(links: Iterable[VersionLink], known: set[str]) -> list[VersionLink]:
    """What ``relink_versions`` stores of ``derive``'s links: between two known documents, never a
    document to itself, one per (newer, older) (the last wins), ordered by (newer, older)."""
    unique = {(link.newer, link.older): link for link in links
              if link.newer in known and link.older in known and link.newer != link.older}
    return [unique[k] for k in sorted(unique)]


@dataclass(frozen=True)
class DocumentDiff:
    """What one document's write changes: records to add, records to refresh in place, chunk ids to
    delete, and vectors (embed_key -> floats) the added/changed records need."""

    added: Sequence[dict] = ()
    updated: Sequence[dict] = ()
    removed: Sequence[str] = ()
    vectors: Mapping[str, Sequence[float]] = field(default_factory=dict)
    vector_model: str = ""
    # chunk_id -> (body, title, heading) lexical fields already analysed (by a worker); a store
    # analyses the records missing here itself. Never trusted over the record: same text, same terms.
    lexical: Mapping[str, tuple[str, str, str]] = field(default_factory=dict)
    # New chunks already encoded as this store's rows (``Capabilities.row_codec``; by a worker), to
    # insert as they are. Only a store with a ``row_codec`` is given any.
    rows: Sequence[tuple] = ()


@dataclass(frozen=True)
class StoredChunk:
    """A chunk read back for retrieval: its row key (the backend's integer id), record and document.
    ``acl`` and ``quality`` are the stored columns the permission filter reads (authoritative)."""

    key: int
    record: dict  # the ChunkRecord fields (text and embed_text included)
    acl: tuple[str, ...]
    quality: str
    source_uri: str  # the document's
    doc_version: str  # the document's current source_version (stale-link checks)


@dataclass(frozen=True)
class ServableRows:
    """The rows a reader may ever be served (``ready``, at least one tag), for in-memory indexes.

    ``texts`` (the embedded text), ``vectors`` (float32 matrix, one row per key), ``lexical``
    (each row's stored ``chunkwise.lexical.LexicalFields``, for the in-memory BM25) and ``ranks``
    (each row's place in ascending chunk id order: the tie order of retrieve/ties.py, as int64, so
    no index holds the id strings) are present only when asked for; with vectors, rows without one
    are left out."""

    keys: list[int]
    tags: list[tuple[str, ...]]
    texts: list[str] | None = None
    vectors: object | None = None  # numpy.ndarray (n, dim) float32
    lexical: list | None = None  # list[LexicalFields]
    ranks: object | None = None  # numpy.ndarray (n,) int64


def servable_columns(rows: Iterable[tuple], decode: Callable, *, vectors: bool, lexical: bool) -> tuple[list, ...]:
    """(keys, tags, texts, lexical fields, vector values) of ``rows`` as a backend reads them:
    (key, acl column, embed_text, lex_body, lex_title, lex_heading[, vector]); ``decode`` turns an
    acl column into tags; with ``vectors``, a row without one is left out (nothing to rank it by)."""
    from chunkwise.lexical import LexicalFields

    keys, tags, texts, fields, values = [], [], [], [], []
    for row in rows:
        if vectors and row[6] is None:
            continue
        keys.append(row[0])
        tags.append(decode(row[1]))
        texts.append(row[2])
        if lexical:
            fields.append(LexicalFields(row[3], row[4], row[5]))
        if vectors:
            values.append(row[6])
    return keys, tags, texts, fields, values


def tie_ranks(keys: Sequence[int], by_chunk_id: Sequence[int]):
    """Each of ``keys``' place in ``by_chunk_id`` (every row key, in ascending chunk id order; read in
    the same snapshot as ``keys``): ``ServableRows.ranks``."""
    import numpy as np

    order = np.asarray(by_chunk_id, dtype=np.int64)
    inverse = np.argsort(order, kind="stable")
    at = np.searchsorted(order[inverse], np.asarray(keys, dtype=np.int64))
    return inverse[at].astype(np.int64)


@dataclass(frozen=True)
class Postings:
    """The permitted rows holding one analysed term: row keys (int64), each row's body length in
    terms (float64) and the term's count in each lexical field (float64, shape (n, 3), columns in
    ``chunkwise.lexical.FIELDS`` order: body, title, heading; 0 where absent)."""

    keys: object
    lengths: object
    tf: object

    @classmethod
    def empty(cls) -> "Postings":
        import numpy as np

        return cls(np.zeros(0, np.int64), np.zeros(0), np.zeros((0, 3)))

    def __len__(self) -> int:
        return len(self.keys)


@dataclass(frozen=True)
class Capabilities:
    """What a store can do, fixed when it is opened: callers branch on these typed fields, never on
    probing for methods (``getattr(store, ...)``), so a new backend states what it is in one place.

    ``native_search``: it ranks inside its own indexes (``ServerRanker``: PostgreSQL); otherwise
    the retriever builds in-memory indexes over ``LocalRanker`` (SQLite: FTS5 and numpy).
    ``parallel_writes``: writers in other processes (a Ray write actor per core) add throughput
    (a server takes their transactions in parallel; SQLite takes one writer at a time).
    ``filtered_reads``: the database itself filters this connection's reads (a PostgreSQL reader
    under row-level security): whole-store reads (the gate, the manifest, in-memory indexes)
    cannot work, and every read runs under ``as_caller``.
    ``batched_writes``: inside ``batch()`` documents share one transaction until its ``commit``
    (SQLite: a commit is most of the single writer's cost per small document); otherwise every
    document's write commits on its own and ``batch()`` changes nothing."""

    backend: str  # "sqlite" | "postgresql"
    native_search: bool
    parallel_writes: bool
    filtered_reads: bool = False
    # ``row_codec``: a class whose ``encode(record, lexical)`` is the chunks row this store inserts
    # from ``DocumentDiff.rows`` and ``decode(row)`` the record it reads back (SQLite:
    # ``store.sqlite.rows.SQLiteRows``), so ingest's workers encode the rows and the single writer
    # only executes statements; None: the store encodes the records it is given itself.
    row_codec: object = None
    batched_writes: bool = False


@dataclass(frozen=True)
class StoreCounts:
    """The quality gate's counts over the whole store."""

    chunks: int
    ready: int
    servable: int  # ready and tagged: what a reader can ever get
    duplicate_ids: int
    empty_text: int
    missing_acl: int
    review_reasons: dict
    embed_models: list
    missing_vectors: int
    orphan_vectors: int
    vectors: int
    stale_search_rows: int = 0  # PostgreSQL's ``dense`` rows that disagree with their chunks and vectors


class DocumentPlan(Protocol):
    """A document written a batch of records at a time (``Store.write_document``; ingest's is
    ``pipeline.write.DocumentPlan``; a whole-document ``decide`` is ``store.writing.write_decided``'s)."""

    def begin(self, state: DocumentState | None) -> bool:
        """Whether to write (False: unchanged); resets what a retried write counted."""
    def parts(self) -> Iterator:
        """The new records, a batch at a time (each chunk id once over all batches); a batch's
        ``ids`` are its chunk ids."""
    def diff(self, old: dict[str, dict], part) -> DocumentDiff:
        """A batch's difference against ``old``, the stored records of its ids that are kept."""
    def removal(self, removed: list[str]) -> DocumentDiff:
        """The stored chunk ids no batch held, to delete."""


class LocalRanker(Protocol):
    """What an in-process ranker reads (``Capabilities.native_search`` False: SQLite). BM25 runs on
    the backend's lexical index one term at a time (retrieve/fts.py), or on the servable rows loaded
    into memory, as does dense ranking (retrieve/index.py).

    Lexical search works on the analysed fields (``chunkwise.lexical.LexicalFields.of_record``) the
    store keeps per chunk: body, title, heading; ``term`` is one analysed term, matched as a whole
    token (never re-analysed by the backend); ``fields`` is a non-empty subset of FIELDS."""

    def as_caller(self, groups: Sequence[str]): ...
    def has_vectors(self) -> bool:
        """Some servable chunk has a vector."""
    def chunk_ids(self, keys: Sequence[int]) -> dict[int, str]:
        """key -> chunk_id of the rows among ``keys`` that exist: what a ranker holding row keys
        breaks an exact tie by (retrieve/ties.py)."""
    def lexical_row_sizes(self) -> Iterator[tuple[int, int]]:
        """``(key, terms in the body field)`` of every row (BM25 lengths)."""
    def term_count(self, term: str, groups: Sequence[str] | None = None, fields: Sequence[str] = FIELDS) -> int:
        """Rows holding ``term`` in one of ``fields``; with ``groups``, only those the groups may see
        (filter in the query)."""
    def term_matches(self, term: str, groups: Sequence[str], fields: Sequence[str] = FIELDS) -> Postings:
        """The rows the groups may see holding ``term`` in one of ``fields`` (filter in the query),
        with body lengths and per-field counts; retrieve/ scores them with the caller's statistics."""
    def term_rows(self, term: str, fields: Sequence[str] = FIELDS):
        """Keys (int64 array) of every row holding ``term`` in one of ``fields``, servable or not: for
        a caller that filters them itself before counting (``retrieve.fts``, many groups)."""
    def servable_rows(self, *, texts: bool = False, vectors: bool = False, lexical: bool = False,
                      ranks: bool = False) -> ServableRows: ...


class ServerRanker(Protocol):
    """What a ranker inside the database provides (``Capabilities.native_search``: PostgreSQL): the
    retriever never loads rows; BM25F and nearest neighbours are computed by the server under the
    permission filter and re-scored exactly by retrieve/server.py."""

    def as_caller(self, groups: Sequence[str]): ...
    def has_vectors(self) -> bool: ...
    def chunk_ids(self, keys: Sequence[int]) -> dict[int, str]: ...
    def snapshot(self):
        """Context manager: the reads inside see one consistent state (one ranking's statements)."""
    def lexical_stats(self, groups: Sequence[str]) -> tuple[int, float]:
        """(servable rows ``groups`` may see, their mean body length in analyzer terms)."""
    def lexical_df(self, terms: Sequence[str], groups: Sequence[str], fields: Sequence[str] = FIELDS) -> dict[str, int]:
        """Per term, the permitted rows holding it in one of ``fields`` (one round trip for a whole query)."""
    def lexical_postings(self, terms: Sequence[str], groups: Sequence[str],
                         fields: Sequence[str] = FIELDS) -> dict[str, Postings]:
        """Per term, the permitted rows holding it, with body lengths and per-field counts."""
    def lexical_top(self, terms: Sequence[str], idf: Sequence[float], groups: Sequence[str], avgdl: float, n: int,
                    k1: float, b: float, fields: Sequence[str] = FIELDS, weights: Sequence[float] = (1.0, 1.0, 1.0)
                    ) -> tuple[int, dict[int, tuple[int, dict[str, tuple[int, ...]]]]]:
        """BM25F (``k1``, ``b``, each term's ``idf``, per-field counts weighted by ``weights``, the
        permitted mean body length) summed by the backend over the permitted rows holding a term in
        one of ``fields``: (how many such rows, key -> (body length, term -> per-field counts) of
        every row scoring within a relative 1e-6 of the ``n``-th best), for the caller to re-score
        exactly (retrieve/server.py)."""
    def dense_candidates(self, vector, groups: Sequence[str], n: int):
        """(keys, float32 matrix) of permitted rows nearest ``vector``: at least the top ``n`` when
        that many exist (the retriever re-scores them with ``retrieve.dense.exact_scores``)."""


# What ``Store.run`` yields: ``finish(now, stats, settings)`` closes the run (records settings and
# stats, drops vectors no chunk uses) and returns how many vectors it dropped.
FinishRun = Callable[[str, dict, Mapping[str, str]], int]


class Store(Protocol):
    """One index: 22 methods, four typed attributes. Every method is its own short transaction unless
    stated otherwise. What differs between backends is stated, not probed: ``capabilities``; how a
    backend ranks is its ``ranker`` (``LocalRanker`` or ``ServerRanker``, by ``capabilities.native_search``)."""

    location: str  # path or URL, for messages (a URL's password redacted)
    opens_with: str  # what another process (a Ray actor) passes to open_store: absolute path or full URL
    capabilities: Capabilities
    ranker: LocalRanker | ServerRanker

    # -- lifecycle (also a context manager: ``with open_store(...) as store``) -------------------
    def close(self) -> None: ...

    # -- documents and writes ----------------------------------------------------------------------
    def roots(self) -> list[str]:
        """Absolute paths of the folders documents were ingested under (their ids are relative)."""
    def add_root(self, path: str) -> None:
        """Record a root; documents of roots inside it move under it, keeping their ids."""
    def document_states(self, root: str, prefix: str = "") -> dict[str, DocumentState]:
        """Path (relative to ``root``) -> state, for documents under ``prefix`` (a relative folder)."""
    def documents(self, doc_ids: Iterable[str] | None = None) -> list[DocumentRow]:
        """Every document (or those of ``doc_ids`` that exist), by doc_id: who holds an id, which
        version a document is at."""
    def doc_id_owner(self, doc_id: str) -> tuple[str, str] | None:
        """(root, path) of the document holding ``doc_id``, or None: whether an id is free (ingest
        asks once per walked file, so not the whole ``documents`` row)."""
    def records_of(self, doc_id: str, groups: Sequence[str] | None = None) -> dict[str, dict]:
        """chunk_id -> record of one document's stored chunks. With ``groups``: only those the groups
        may be served, the filter inside the lookup, so a document the caller may not see is read by
        the same path, at the same cost, as an absent one (the retriever's ``get``)."""
    def write_document(self, doc: DocumentRow, plan: DocumentPlan, *, dry_run: bool = False) -> bool:
        """The one write path: in one write transaction holding the document, ``plan.begin`` decides
        on its fresh state, each batch's diff is taken against the stored records of its kept ids,
        then the ids no batch held are given to ``plan.removal`` (a big document is never held
        whole). Returns whether anything was written (False: unchanged). ``dry_run``: the same reads
        and the same calls of ``plan`` (its counts are the real run's), nothing written, no lock
        taken. Written once for every backend (store/writing.py, with ``write_decided`` for a pure
        ``decide`` over the whole document)."""
    def remove_missing(self, root: str, prefix: str, seen: set[str], *, dry_run: bool = False) -> int:
        """Delete the documents under ``root``/``prefix`` whose path is not in ``seen`` (and their
        chunks and version links); returns the chunks removed (``dry_run``: would remove)."""
    def batch(self) -> ContextManager[Callable[[], None]]:
        """Context manager yielding ``commit``: the writes inside share transactions that end at each
        ``commit()`` and at the block's end (``capabilities.batched_writes``; else each write commits
        on its own and ``commit`` does nothing). Written once for a backend without (store/writing.py)."""
    def relink_versions(self, derive: Callable[[list[DocumentRow]], Sequence[VersionLink]]) -> list[VersionLink]:
        """In one write transaction: read every document, call ``derive`` (pure; may raise to abort)
        and replace all stored version links with what it returns (links to unknown ids are dropped).
        Deleting a document deletes its links at once."""
    def version_links(self, doc_ids: Iterable[str] | None, groups: Sequence[str] | None) -> list[VersionLink]:
        """Stored links with an end in ``doc_ids`` (None: all) whose two documents ``groups`` may
        both see — some ``ready`` chunk of each shares a tag with them — the filter inside the query,
        so a version the caller cannot see is never reported. ``groups`` None: unfiltered (the gate)."""

    # -- vectors -------------------------------------------------------------------------------
    def vectors(self, keys: Iterable[str], *, values: bool = True) -> dict[str, list[float] | None]:
        """Stored vectors by embed key (keys without one are absent). ``values`` False: which keys
        have one, each value None, no vector read (what embedding asks before it embeds)."""
    def put_vectors(self, model: str, items: Sequence[tuple[str, Sequence[float]]]) -> None:
        """Store vectors outside a document write (repairs a key a concurrent run collected)."""

    # -- settings and runs ---------------------------------------------------------------------
    def settings(self) -> dict[str, str]:
        """What the last ingest recorded: config (JSON), fingerprint, embedder, tool_version."""
    def run(self, now: str) -> ContextManager[FinishRun]:
        """Context manager: records a run started at ``now`` and yields its ``finish(now, stats,
        settings)``, which records settings and stats and drops vectors no chunk uses (returns how
        many). A run left without ``finish`` (an error) stays open, unfinished, as a crash leaves it."""

    # -- reads ---------------------------------------------------------------------------------
    def generation(self) -> int | None:
        """A number that grows with every committed change of chunks or vectors (None: unknown to
        this role): what a long-lived reader compares to know its in-memory index is stale."""
    def time_limit(self, seconds: float) -> ContextManager[None]:
        """Context manager: a statement still running ``seconds`` after it is entered is stopped and
        ``StoreTimeout`` raised (SQLite: a progress handler; PostgreSQL: ``statement_timeout``); on
        the way out no snapshot is left open. A server's worker bounds each search with it."""
    def as_caller(self, groups: Sequence[str]):
        """Context manager: the reads inside are those of a caller holding ``groups`` (PostgreSQL:
        one read-only snapshot with the groups set for row-level security; SQLite: nothing to do).
        The retriever runs each search in one; reads that take ``groups`` open one themselves."""
    def chunks(self, *, doc_id: str | None = None, keys: Sequence[int] | None = None) -> Iterator[StoredChunk]:
        """Stored chunks: with ``doc_id``, that document's in order (neighbours, parents); with
        ``keys``, the rows among them that exist (the retriever's hits; any order); with neither,
        every chunk by source_uri then chunk_index (evaluation and the gate read what was stored)."""
    def count(self, doc_id: str | None = None, groups: Sequence[str] | None = None) -> int:
        """Chunks in the store; with ``doc_id``, in that document; with ``groups`` too, only those
        the groups may be served, by ``records_of``' filtered path (no hidden row read): with the
        document row's ``chunk_count`` it says whether the caller may read the whole document
        (retrieve/positions.py). ``groups`` needs a ``doc_id``."""
    def counts(self) -> StoreCounts:
        """The quality gate's counts over the whole store (not for a ``filtered_reads`` role)."""


__all__ = ["Capabilities", "DocumentDiff", "DocumentPlan", "DocumentRow", "DocumentState", "FinishRun", "LocalRanker",
           "Postings", "ServableRows", "ServerRanker", "Store", "StoreBusy", "StoreCounts", "StoredChunk", "VersionLink",
           "kept_links", "servable_columns", "tie_ranks"]
