"""The library facade: what the CLI, the HTTP service, the framework integrations and users call.

It sits at the top: nothing in the library imports it, and it adds no behaviour of its own beyond
turning names (an embedder name, a config file) into the objects the stages take, once, with the
same validation for every caller. The stages it fronts are in ``pipeline/`` (prepare, embed, write),
``store/``, ``retrieve/`` and ``evaluate/``.
"""
from __future__ import annotations

import importlib
from pathlib import Path
from typing import TYPE_CHECKING, Any

from chunkwise.access import AccessTags
from chunkwise.config import BACKENDS, DEFAULT_EMBEDDER, DEFAULT_SIZE, HEADERS, STRATEGIES, UNITS, ChunkConfig
from chunkwise.errors import ChunkwiseError, ConfigError, DependencyError, InputError
from chunkwise.types import Chunk, Document, Page

# The rest of the facade is imported on first use (PEP 562): a command loads only the subsystems
# it touches (``chunkwise chunk`` never imports retrieval, evaluation or the embedders). Name ->
# (module, its name there).
_LAZY = {
    **dict.fromkeys(("ConfigFile", "load_acl_map", "load_config"), "chunkwise.configfile"),
    "ChunkRecord": "chunkwise.enrich.records",
    "make_embedder": "chunkwise.embed",
    **dict.fromkeys(("SEED_HEADERS", "SEED_MERGE", "SEED_OVERLAP", "SEED_OVERLAP_QUESTIONS", "header_experiment",
                     "merge_experiment", "overlap_sweep", "sampling_tolerance"), "chunkwise.evaluate.experiments"),
    **dict.fromkeys(("Evaluation", "expand_grid", "load_grid", "run_eval"), "chunkwise.evaluate.runner"),
    "EvalSettings": ("chunkwise.evaluate.runner", "Settings"),
    "ExtractOptions": "chunkwise.extract",
    "table_cells": "chunkwise.extract.builder",
    "FieldWeights": "chunkwise.lexical",
    **dict.fromkeys(("attach_pages", "chunk_document", "for_document", "make_chunker", "normalised_view"),
                    "chunkwise.pipeline.chunk"),
    **dict.fromkeys(("SourceFailure", "Unchanged", "extract_options", "iter_documents", "load_document"),
                    "chunkwise.pipeline.documents"),
    **dict.fromkeys(("file_records", "page_records", "text_records"), "chunkwise.pipeline.doors"),
    **dict.fromkeys(("EXECUTORS", "make_executor"), "chunkwise.pipeline.executors"),
    **dict.fromkeys(("Prepared", "PrepareFailure"), "chunkwise.pipeline.prepare"),
    "toy_store_note": "chunkwise.pipeline.settings",
    "IngestStats": "chunkwise.pipeline.write",
    **dict.fromkeys(("Plan", "n_windows", "plan", "straddle_probability"), "chunkwise.planning"),
    "CheckReport": "chunkwise.quality",
    **dict.fromkeys(("Retriever", "SearchResult"), "chunkwise.retrieve"),
    "Filters": "chunkwise.retrieve.filters",
    "Fusion": "chunkwise.retrieve.fusion",
    "DEFAULT_PASSAGE_BUDGET": "chunkwise.retrieve.passages",
    "PER": "chunkwise.retrieve.per_document",
    **dict.fromkeys(("Limits", "default_workers"), "chunkwise.sandbox"),
}

if TYPE_CHECKING:  # what the names are, for readers and type checkers (loaded lazily at run time)
    from chunkwise.enrich.records import ChunkRecord
    from chunkwise.pipeline.write import IngestStats
    from chunkwise.quality import CheckReport
    from chunkwise.retrieve import Retriever, SearchResult
    from chunkwise.sandbox import Limits


def __getattr__(name: str):
    where = _LAZY.get(name)
    if where is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module, attr = (where, name) if isinstance(where, str) else where
    value = getattr(importlib.import_module(module), attr)
    globals()[name] = value  # looked up once
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_LAZY])


DEFAULT_CONFIG = ChunkConfig(strategy="auto")  # what a new store is built with when nothing is said


def chunk_text(text: str, config: ChunkConfig | None = None, *, doc_id: str | None = None, acl=(), acl_map=None,
               **options: Any) -> list[ChunkRecord]:
    """The records ``ingest`` would store for ``text`` held in a file of the config's ``format``
    (Markdown by default: front matter, access markers and all): chunk ids, document id, access
    tags and review state, heading path, offsets. Offsets index ``text``:
    ``record.text == text[record.start_char:record.end_char]`` (``text`` is normalised, as stored).
    ``doc_id``: the document's id (default ``"sha256:"`` + the text's hash; a front matter ``id``
    wins); ``acl``/``acl_map``: default tags and globs -> tags, as ``ingest`` takes them; ``config``
    None: the config ``ingest`` builds a new store with; ``options``: ChunkConfig fields over it."""
    from chunkwise.pipeline.doors import text_records

    return text_records(door_preparer(config, acl=acl, acl_map=acl_map, **options), text, doc_id)


def chunk_file(path: str | Path, config: ChunkConfig | None = None, *, root: str | Path | None = None, acl=(),
               acl_map=None, **options: Any) -> list[ChunkRecord]:
    """The records ``ingest`` would store for one file of any supported format, through the same
    preparation: its document id is its path under ``root`` (default: its folder, so its name, as
    ``chunkwise ingest FILE`` gives it); ``acl``, ``acl_map``, ``config`` and ``options`` as for
    ``chunk_text`` (the config's ``docx_comments`` decides whether DOCX comments are read).
    Raises InputError when the file cannot be used."""
    from chunkwise.pipeline.doors import file_records

    return file_records(door_preparer(config, acl=acl, acl_map=acl_map, **options), path, root=root)


def door_preparer(config: ChunkConfig | None = None, *, acl=(), acl_map=None, **options: Any):
    """The ``Preparer`` every door besides ingest uses (``chunkwise chunk``, the splitters): ingest's
    preparation with these default tags and acl map, no clock, no embedder."""
    from chunkwise.pipeline import doors

    return doors.make_preparer(doors.door_config(config, options, DEFAULT_CONFIG), acl=acl, acl_map=acl_map)


def prepare_paths(preparer, paths, **walk: Any):
    """Files, folders and globs -> ``Prepared`` (records as ``ChunkRecord.to_dict()``) or
    ``PrepareFailure`` each, in walk order (``pipeline.doors.prepare_paths``)."""
    from chunkwise.pipeline import doors

    return doors.prepare_paths(preparer, paths, **walk)


def audit(paths, root: str | Path | None = None, max_bytes: int = 50_000_000, include=(), exclude=(),
          limits: Limits | None = None):
    """Extraction audit rows, one per source (failures and skipped files included), in a stable order;
    each file is extracted and measured in a contained worker (``limits``: its memory and time per
    file, default ``Limits()``), and only its row comes back."""
    from chunkwise.pipeline.audit import audit_sources
    from chunkwise.sources import iter_sources

    yield from audit_sources(iter_sources(paths, root=root, max_bytes=max_bytes, include=include, exclude=exclude),
                             limits)


def ingest(paths, db, config: ChunkConfig | None = None, *, embedder="auto", embed_mode: str = "auto",
           executor="local", ray_address: str | None = None, ray_gpus: float = 0.0, ray_embedders: int = 1,
           **options: Any) -> IngestStats:
    """Ingest files and folders into a store (idempotent; see ``pipeline.ingest``).

    ``config`` None and no ``chunk_options``: the store's recorded settings (a new store:
    ``DEFAULT_CONFIG``); ``embedder``: an Embedder, a name (``"hashing"``, ``"minilm"``, ``"none"``)
    or ``"auto"`` (the store's, else ``DEFAULT_EMBEDDER``, else none with a notice). A run that would change a store's settings is
    refused unless ``reconfigure=True``. Options: chunk_options, acl, acl_map, dry_run, now,
    progress, workers (processes preparing files, one at least: this process never parses), limits
    (``Limits``: memory and wall time per file in a worker), reconfigure, warn, timeout.
    ``executor``: ``"local"``, ``"ray"`` (Ray actors: ``workers`` prepare actors, ``ray_embedders``
    embed actors with ``ray_gpus`` each, on the cluster at ``ray_address`` or a local one; see
    ``make_executor``) or an executor object."""
    from chunkwise.pipeline.executors import make_executor
    from chunkwise.pipeline.ingest import ingest as run

    if isinstance(executor, str):
        executor = make_executor(executor, workers=options.get("workers"), limits=options.get("limits"),
                                 ray_address=ray_address, ray_gpus=ray_gpus, ray_embedders=ray_embedders)
    return run(paths, db, config, embedder=embedder, embed_mode=embed_mode, default=DEFAULT_CONFIG,
               executor=executor, **options)


def check(db, strict: bool = False) -> CheckReport:
    """The quality gate over a store (``chunkwise check``); ``strict``: chunks that can never be
    served fail it too (else they are warnings)."""
    from chunkwise.quality import check as run

    return run(db, strict)


def manifest(db) -> dict:
    """What an index release is made of (config, tokenizer, model, tool and document versions)."""
    from chunkwise.quality import manifest as run

    return run(db)


def review_queue(db, reasons=()) -> list:
    """The chunks in review (never served), with file, offsets, reasons and text (``chunkwise.review``)."""
    from chunkwise.review import queue

    return queue(db, reasons)


def release(db, chunk_ids) -> Any:
    """Release chunks from review (all or nothing; never access review); kept across re-ingests
    while their text is unchanged (``chunkwise.review``)."""
    from chunkwise.review import release as run

    return run(db, chunk_ids)


def search(db, query: str, groups, **options: Any) -> SearchResult:
    """Search a store with the caller's access groups (filter before ranking); returns a
    ``SearchResult`` (passages with citations, the assembled context and its token count, and
    whatever was found but not sent, and why). Options: k, per ("passage", the default, or
    "document": k distinct documents, results grouped by document, best passage first), mode, expand, budget, passage_budget
    (tokens a merged passage may grow to around its best hit; None: unbounded), overfetch, versions
    ("auto", the default: the latest version the caller may see unless the query names a version, a year or an earlier one; "latest"; "all"), embedder, bm25,
    generator_tokenizer. For many queries keep a ``Retriever`` open."""
    from chunkwise.retrieve import search as run

    return run(db, query, groups, **options)


def open_retriever(db: str | Path, **options: Any) -> Retriever:
    """A long-lived ``Retriever`` over an existing store (open once, search many times; close it).
    Options: embedder, bm25, generator_tokenizer, field_weights, fusion. Raises ConfigError when ``db`` does not exist
    (instead of creating an empty store); a path that is not a chunkwise store is a StoreError."""
    if store_missing(db):
        raise ConfigError(f"{db}: no such store; create it with: chunkwise ingest PATH --db {db}")
    from chunkwise.retrieve import Retriever

    return Retriever(db, **options)


def open_store(db: str | Path, *, readonly: bool = True, timeout: float = 60.0):
    """An existing store (SQLite file or ``postgresql://`` URL), read-only unless asked: its
    ``records_of(doc_id)`` are the records ``chunk_file`` returns, as stored. Use it in a ``with``.
    A SQLite file that does not exist is a ConfigError (nothing is created)."""
    from chunkwise.store import open_store as _open

    if store_missing(db):
        raise ConfigError(f"{db}: no such store; create it with: chunkwise ingest PATH --db {db}")
    return _open(db, readonly=readonly, create=False, timeout=timeout)


def is_store_url(db) -> bool:
    """``db`` is a server store's URL (``postgresql://...``), not a SQLite file path."""
    from chunkwise.store import is_server_url

    return is_server_url(db)


def store_missing(db) -> bool:
    """``db`` names a SQLite file that does not exist. A ``postgresql://`` URL is never "missing"
    here: opening it says whether the server, the database and a chunkwise store are there."""
    return not is_store_url(db) and not Path(db).exists()


def row_security(db, *, reader: str | None = None, revoke: str | None = None, off: bool = False):
    """PostgreSQL row-level security (``chunkwise pg-secure``; store/postgres/pg_security.py): with ``reader``,
    secure the store (policies on every table holding or revealing row content) and let that role
    SELECT through them only; ``revoke``: take a role's access away; ``off``: turn it off (refused
    while a reader remains). Nothing asked: how it is. Changes need the tables' owner in ``db``;
    idempotent. Returns a ``RowSecurity`` (``.to_dict()``)."""
    if not is_store_url(db):
        raise ConfigError(f"--db {db}: row-level security is for postgresql:// stores; a SQLite file has no roles "
                          f"(whoever may read the file reads every row: protect it with file permissions)")
    for flag, role in (("--reader", reader), ("--revoke", revoke)):
        if role is not None and (not role or len(role.encode("utf-8")) > 63
                                 or any(ord(ch) < 32 or ord(ch) == 127 for ch in role)):
            raise ConfigError(f"{flag} {role!r}: not a PostgreSQL role name (1-63 bytes, no control characters)")
    change = reader is not None or revoke is not None or off
    # PostgreSQL's own administration, not part of the storage interface (store/base.py): the
    # backend's class is opened by name, so no ``Store`` is asked for what only one backend has.
    from chunkwise.store.postgres.postgres import PostgresStore

    with PostgresStore(str(db), readonly=not change, create=change) as pg:
        return pg.row_security(reader=reader, revoke=revoke, off=off)


def caller_groups(groups) -> tuple[str, ...]:
    """A caller's groups (a list, or one comma-separated string) in canonical form, sorted: the same
    tag grammar as the stored tags (see chunkwise.access). Raises ConfigError for a tag outside it;
    ``()`` means the caller has no group (and may see nothing)."""
    from chunkwise.access import caller_groups as _parse

    return _parse(groups).tags


def visible_document(retriever, doc_id: str, groups):
    """The records of one document that ``groups`` may see, in chunk order, as a
    ``VisibleDocument`` (``.to_dict()``), or ``None`` when the caller may see none of it: exactly
    what a document that does not exist gives."""
    from chunkwise.retrieve.documents import visible_document as _visible

    return _visible(retriever.store, doc_id, groups)


def visible_documents(retriever, groups, *, after: str | None = None, limit: int = 100):
    """The documents ``groups`` may see some record of, by doc_id after ``after``: (up to ``limit``
    ``DocumentEntry``s, whether more follow). A hidden document is skipped exactly as an absent one."""
    from chunkwise.retrieve.documents import visible_documents as _listing

    return _listing(retriever.store, groups, after=after, limit=limit)


def evaluate(golden: str | Path, docs: str | Path, configs=None, **settings: Any):
    """Evaluate chunk configs (default: one default ``ChunkConfig`` with hybrid retrieval) on a golden
    set; returns an ``Evaluation`` (``.to_dict()``, ``.report_data()``, ``.below(min_recall)``)."""
    from chunkwise.evaluate.runner import Settings, run_eval

    if configs is None:
        configs = [ChunkConfig(strategy="auto")]
    runs = [(c, [("hybrid", "none")]) if isinstance(c, ChunkConfig) else c for c in configs]
    return run_eval(golden, docs, runs, Settings(**settings))


def write_report(data: dict, out: str | Path) -> None:
    """The self-contained HTML report of an evaluation (``Evaluation.report_data``)."""
    from chunkwise.evaluate.report import write_report as run

    run(data, out)


def chunk_ids(doc_id: str, chunks) -> list[str]:
    """The ids ``ingest`` gives these chunks of document ``doc_id`` (sha256 of the document id, the
    content hash and its occurrence): framework integrations hand out the store's own ids."""
    from chunkwise import ids

    return [cid for cid, _ in ids.chunk_ids(doc_id, [c.text for c in chunks])]


def text_doc_id(text: str) -> str:
    """A stable document id for a text that came without a name: derived from its content."""
    from chunkwise.pipeline.doors import text_doc_id as _make

    return _make(text)


# What a user needs (about 25 names); the CLI, the server and the integrations also use a few
# more of this module's attributes, which stay importable but are not the documented surface.
__all__ = [
    "chunk_text", "chunk_file", "make_chunker", "audit", "plan", "ingest", "check", "manifest",
    "search", "open_retriever", "open_store", "evaluate", "write_report", "caller_groups",
    "visible_document", "visible_documents", "row_security", "Filters",
    "ChunkConfig", "ChunkRecord", "Document", "Retriever", "SearchResult", "IngestStats", "Evaluation",
    "AccessTags", "ChunkwiseError", "ConfigError", "DependencyError", "InputError",
]
