"""What the framework integrations share, so the three agree exactly: chunk options as
``chunkwise chunk`` takes them, chunks with the store's own stable ids, and searches over a store
with the caller's groups. Imports only ``chunkwise.api`` (and the standard library)."""
from __future__ import annotations

import json
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from chunkwise import api

CHUNK_DEFAULTS = {"strategy": "auto"}  # what `chunkwise chunk` uses when no --strategy is given
MODES = ("auto", "bm25", "dense", "hybrid")
EXPANSIONS = ("none", "neighbours", "parent")


def install_hint(extra: str, framework: str, exc: ImportError) -> api.DependencyError:
    return api.DependencyError(f"chunkwise.integrations.{extra} needs {framework} ({exc.name or exc}); "
                               f"install it with: pip install 'chunkwise[{extra}]'")


def chunk_config(config: api.ChunkConfig | None = None, options: dict | None = None) -> api.ChunkConfig:
    """``config`` and/or the options of ``chunkwise chunk`` (strategy, size, overlap, unit, tokenizer,
    backend, header, window, special_tokens, semantic_*) -> one validated ChunkConfig; a bad value
    fails here, when the splitter is built, not on the first document."""
    options = dict(options or {})
    if config is None:
        return api.ChunkConfig(**{**CHUNK_DEFAULTS, **options})
    if not isinstance(config, api.ChunkConfig):
        raise api.ConfigError(f"config must be a chunkwise ChunkConfig, got {type(config).__name__}")
    if options:
        from dataclasses import replace

        return replace(config, **options)
    return config


@dataclass(frozen=True)
class Piece:
    """One record as the integrations hand it on (``api.ChunkRecord``: what ``chunkwise ingest``
    stores for the same document, same ``chunk_id``). ``text == source_text[start:end]``."""

    chunk_id: str
    doc_id: str
    index: int
    start: int
    end: int
    text: str
    embed_text: str
    heading_path: tuple[str, ...]
    page: int | None
    page_end: int | None
    size: int
    needs_review: bool
    source: str = ""
    acl: tuple[str, ...] = ()
    reasons: tuple[str, ...] = ()
    boxes: tuple[tuple, ...] = ()  # (page, x0, top, x1, bottom) of a PDF chunk (``ChunkRecord.boxes``)

    @classmethod
    def of(cls, r: api.ChunkRecord) -> "Piece":
        return cls(r.chunk_id, r.doc_id, r.chunk_index, r.start_char, r.end_char, r.text, r.embed_text,
                   tuple(r.heading_path), r.page, r.page_end, r.size, r.needs_review, r.source_uri, tuple(r.acl),
                   tuple(r.reasons), tuple(r.boxes))

    def metadata(self) -> dict[str, Any]:
        return {"chunk_id": self.chunk_id, "doc_id": self.doc_id, "chunk_index": self.index,
                "start_index": self.start, "end_index": self.end, "heading_path": list(self.heading_path),
                "page": self.page, "page_end": self.page_end, "size": self.size, "needs_review": self.needs_review,
                "acl": list(self.acl), "reasons": list(self.reasons),
                **({"boxes": [list(b) for b in self.boxes]} if self.boxes else {})}


class Engine:
    """The door of a framework splitter: texts, pages and files -> Pieces, through the preparation
    ``chunkwise ingest`` runs (``api.door_preparer``), so a splitter's chunks, ids and access tags
    are the store's. ``acl``/``acl_map``: default tags and globs -> tags, as ingest takes them."""

    def __init__(self, config: api.ChunkConfig, acl=(), acl_map=None) -> None:
        self.config = config
        self.preparer = api.door_preparer(config, acl=acl, acl_map=acl_map)

    def split_text(self, text: str, doc_id: str | None = None) -> list[Piece]:
        if not isinstance(text, str):
            raise api.ConfigError(f"expected text (str), got {type(text).__name__}")
        return [Piece.of(r) for r in api.text_records(self.preparer, text, doc_id)]

    def split_pages(self, pages: Sequence[tuple[int | None, str]], doc_id: str, join: str) -> list[Piece]:
        """One source given page by page (a PDF loader's Documents): one document whose text is the
        pages joined by ``join``; pages keep their numbers, ids are unique across pages."""
        return [Piece.of(r) for r in api.page_records(self.preparer, pages, doc_id, join)]

    def split_file(self, path: str | Path) -> list[Piece]:
        """Any supported format; offsets into the document's extracted original text, pages set."""
        return [Piece.of(r) for r in api.file_records(self.preparer, path)]


PAGE_JOIN = "\n\n"  # between the pages of one source given as one document each (offsets index the joined text)


def page_number(meta: dict | None, key: str) -> int | None:
    """The page number a framework document carries under ``key`` (an int, or a label of digits
    such as LlamaIndex's ``page_label``), else None: not a page."""
    value = (meta or {}).get(key)
    if isinstance(value, str) and value.isascii() and value.isdigit():
        return int(value)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def runs(metas: Sequence[dict | None], ids: Sequence[str | None], key: str) -> list[list[int]]:
    """The inputs grouped into documents: consecutive pages of one source (the same declared
    ``source``/``file_path``, a page number under ``key``, no id of their own: what a PDF loader
    gives) are one group, one document with pages; every other input is a group of its own."""
    out: list[list[int]] = []
    last = None
    for i, (meta, own) in enumerate(zip(metas, ids)):
        source = declared_id(meta) if not own and page_number(meta, key) is not None else None
        if source is not None and source == last:
            out[-1].append(i)
        else:
            out.append([i])
        last = source
    return out


def page_index(piece: Piece, starts: Sequence[int]) -> int:
    """Which of the pages (their start offsets in the joined text) ``piece`` begins on."""
    from bisect import bisect_right

    return max(0, bisect_right(starts, piece.start) - 1)


def page_starts(texts: Sequence[str], join: str = PAGE_JOIN) -> list[int]:
    starts, at = [], 0
    for text in texts:
        starts.append(at)
        at += len(text) + len(join)
    return starts


def declared_id(metadata: dict | None, explicit: str | None = None) -> str | None:
    """The document id a framework document declares: its own id, else its metadata's source."""
    if explicit:
        return str(explicit)
    meta = metadata or {}
    for key in ("doc_id", "source", "file_path", "file_name"):
        if meta.get(key):
            return str(meta[key])
    return None


def groups_of(groups) -> tuple[str, ...]:
    """The caller's groups ("a,b" or a list), required: an integration without groups fails closed."""
    if isinstance(groups, str):
        groups = groups.split(",")
    try:
        out = tuple(str(g).strip() for g in groups if str(g).strip())
    except TypeError:
        out = ()
    if not out:
        raise api.ConfigError("a chunkwise retriever needs the caller's access groups (e.g. groups=['staff']): "
                              "chunks are served only to callers sharing one of their tags")
    return out


class Searcher:
    """A store path and the caller's groups -> search results. SQLite connections belong to the
    thread that opened them, so each thread gets its own Retriever (frameworks run sync retrievers
    in worker threads for their async calls). Picklable: a copy reopens the store on first use."""

    def __init__(self, db: str | Path, groups, *, k: int = 5, mode: str = "auto", expand: str = "none",
                 budget: int | None = None, bm25: str = "fts5", embedder: str = "auto", filters=None) -> None:
        if mode not in MODES or expand not in EXPANSIONS:
            raise api.ConfigError(f"mode must be one of {', '.join(MODES)} and expand one of {', '.join(EXPANSIONS)}; "
                                  f"got mode={mode!r}, expand={expand!r}")
        if api.store_missing(db) or (not api.is_store_url(db) and not Path(db).is_file()):
            raise api.ConfigError(f"no chunkwise store at {db}; create it with: chunkwise ingest PATH --db {db}")
        self.db = str(db)
        self.groups = groups_of(groups)
        self.options = {"k": check_k(k), "mode": mode, "expand": expand, "budget": budget,
                        "filters": filters_of(filters)}
        self.open_options = {"bm25": bm25, "embedder": embedder}
        self._local = threading.local()
        self.retriever()  # fail now on a bad store or embedder, not on the first query

    def __getstate__(self) -> dict:
        return {k: v for k, v in self.__dict__.items() if k != "_local"}

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._local = threading.local()

    def retriever(self):
        r = getattr(self._local, "retriever", None)
        if r is None:
            r = self._local.retriever = api.open_retriever(self.db, **self.open_options)
        return r

    def search(self, query: str, **overrides):
        """Search with the options given at construction, ``overrides`` (k, mode, expand, budget,
        filters) replacing them for this call; the groups are never an override."""
        unknown = sorted(set(overrides) - set(self.options))
        if unknown:
            raise api.ConfigError(f"unknown search option(s) {', '.join(unknown)}; use: {', '.join(self.options)}")
        options = {**self.options, **{k: v for k, v in overrides.items() if v is not None}}
        options["k"], options["filters"] = check_k(options["k"]), filters_of(options["filters"])
        return self.retriever().search(query, self.groups, **options)

    def close(self) -> None:
        """Close this thread's store connection; other threads' close when their threads end."""
        r = getattr(self._local, "retriever", None)
        if r is not None:
            r.close()
        self._local = threading.local()


def check_k(k) -> int:
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise api.ConfigError(f"k (the number of passages) must be a whole number of at least 1, got {k!r}")
    return k


FILTER_KEYS = ("doc_ids", "source_prefix", "file_types", "updated_after", "updated_before")


def filters_of(value) -> "api.Filters | None":
    """``None``, an ``api.Filters`` or a dict with its fields (lists for ``doc_ids``/``file_types``)."""
    if value is None or isinstance(value, api.Filters):
        return value
    if not isinstance(value, dict):
        raise api.ConfigError(f"filters: a dict with keys {', '.join(FILTER_KEYS)}, got {type(value).__name__}")
    unknown = sorted(set(value) - set(FILTER_KEYS))
    if unknown:
        raise api.ConfigError(f"filters: unknown key(s) {', '.join(map(str, unknown))}; chunkwise filters by "
                              f"{', '.join(FILTER_KEYS)} (access groups are never a filter: they are the retriever's)")
    data = dict(value)
    for key in ("doc_ids", "file_types"):
        if key in data and isinstance(data[key], (list, tuple)):
            data[key] = tuple(data[key])
    return api.Filters(**data)


def passage_metadata(p, rank: int, withheld=frozenset()) -> dict[str, Any]:
    """Citations of one retrieved passage (source, heading path, page, exact offsets) and its
    version (``versions``: the documents its text was found in, its own first). Offsets are None
    for a document in ``withheld`` (``SearchResult.withheld``: the caller may not read all of it)."""
    hide = p.doc_id in withheld
    return {"chunk_id": p.chunk_ids[0], "chunk_ids": list(p.chunk_ids), "doc_id": p.doc_id, "source": p.source_uri,
            "start_index": None if hide else p.start_char, "end_index": None if hide else p.end_char,
            "heading_path": list(p.heading_path),
            "page": p.page, "score": p.score, "rank": rank, "expanded_from": list(p.expanded_from),
            "version": p.version, "updated_at": p.updated_at, "versions": [v.doc_id for v in p.versions],
            "superseded_by": list(p.superseded_by)}


HEADING_SEPARATOR = " > "


def flat_metadata(meta: dict[str, Any]) -> dict[str, Any]:
    """``meta`` with every value a scalar (str, int, float, bool or None), for vector stores that
    take flat metadata only: a heading path becomes one string joined with `` > ``, other lists
    comma-joined strings; ``page_number`` repeats ``page``."""
    out: dict[str, Any] = {}
    for key, value in meta.items():
        if isinstance(value, (list, tuple)):
            sep = HEADING_SEPARATOR if key == "heading_path" else ","
            value = sep.join(str(v) for v in value)
        elif isinstance(value, dict):
            value = json.dumps(value, ensure_ascii=False, sort_keys=True)
        out[key] = value
    if "page" in out:
        out["page_number"] = out["page"]
    return out


def citation(source: str, heading_path: Sequence[str], page: int | None) -> str:
    """One line that says where a passage is from: ``runbook.md > Deploys > Rolling back, p. 3``."""
    line = HEADING_SEPARATOR.join([source or "(unnamed)", *heading_path])
    return line if page is None else f"{line}, p. {page}"


def embed_header(text: str, embed_text: str) -> str:
    """The contextual header chunkwise put before ``text`` in the embedded text ("" when none)."""
    if embed_text == text or not embed_text.endswith(text):
        return ""
    return embed_text[:len(embed_text) - len(text)]
