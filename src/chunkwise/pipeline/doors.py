"""The doors besides ``ingest``: ``chunk_text``, ``chunk_file``, ``chunkwise chunk`` and the framework
splitters, all through the ``Preparer`` that ingest runs.

Why one path: what a user sees before ingesting must be what ingest stores — the same chunks, ids,
access tags and section-marker scopes, review state. So a door only turns its input into what
``Preparer`` takes (a ``PrepareTask`` for a file, a ``Document`` for text or pages) under the id
ingest would give it, and returns the records ``Preparer`` made:

- a file: its path under its root (``root``), a file named alone: its name (what ``chunkwise
  ingest FILE`` gives it in a new store);
- text given directly: the id the caller names, else ``"sha256:"`` + the hash of the text;
- a front matter ``id`` wins over either, as in ingest.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Iterator, Mapping, Sequence

from chunkwise import ids
from chunkwise.access import AccessTags, parse_acl_map
from chunkwise.config import ChunkConfig
from chunkwise.enrich.records import ChunkRecord
from chunkwise.errors import InputError
from chunkwise.pipeline.packing import PackingPreparer
from chunkwise.pipeline.prepare import Prepared, PrepareFailure, Preparer, PrepareSettings, PrepareTask
from chunkwise.types import Document, Page

MEDIA_TYPES = {"markdown": "text/markdown", "text": "text/plain", "code": "text/x-code"}  # text given directly
PAGE_JOIN = "\n\n"  # between the pages of one source given page by page (a paragraph break)


def door_config(config: ChunkConfig | None, options: Mapping, default: ChunkConfig) -> ChunkConfig:
    """``config`` (None: ``default``, the config ingest builds a new store with) with ``options`` over it."""
    base = default if config is None else config
    return replace(base, **options) if options else base


def make_preparer(config: ChunkConfig, *, acl=(), acl_map=None, embed_model: str = "none") -> Preparer:
    """The Preparer of a door: ingest's settings with the caller's default tags and acl map (the
    same grammar, checked here); no clock (``ingested_at`` is ""), no embedder, no lexical fields
    (nothing here indexes them; the records are the same). The chunker is built here, so a bad
    config or tokenizer is the caller's ConfigError, never one file's failure."""
    preparer = Preparer(PrepareSettings(config, embed_model, AccessTags.parse(acl, "acl"),
                                        parse_acl_map(acl_map or {}, "acl_map"), lexical=False))
    preparer.warm_up()
    return preparer


def text_doc_id(text: str) -> str:
    """A stable document id for a text that came without a name: derived from its content."""
    return "sha256:" + ids.sha256_hex(text)[:32]


def text_records(preparer: Preparer, text: str, doc_id: str | None = None) -> list[ChunkRecord]:
    """Records of one text given directly, as if it were a file of the config's format holding it
    (front matter, access markers and all); offsets index ``text``. An empty text has none."""
    if not isinstance(text, str):
        raise InputError(f"expected text (str), got {type(text).__name__}")
    doc_id = str(doc_id) if doc_id else text_doc_id(text)
    doc = _text_document(text, doc_id, preparer.settings.config)
    if doc is None:
        return []
    return _records(preparer, doc, doc_id)


def page_records(preparer: Preparer, pages: Sequence[tuple[int | None, str]], doc_id: str,
                 join: str = PAGE_JOIN) -> list[ChunkRecord]:
    """Records of one source given page by page (``(page number, text)``, e.g. a PDF loader's
    Documents): one document, the pages joined by ``join`` (offsets index that text: for Haystack's
    PDF converter, ``"\\f"`` gives its own content back), each record's ``page``/``page_end`` the
    numbers given (None: its position, from 1), chunk ids unique across pages and stable."""
    text, spans, at = "", [], 0
    for i, (number, page) in enumerate(pages):
        if i:
            text += join
            at += len(join)
        spans.append(Page(number if number is not None else i + 1, at, at + len(page)))
        text += page
        at += len(page)
    doc = _text_document(text, doc_id, preparer.settings.config)
    if doc is None:
        return []
    return _records(preparer, replace(doc, pages=tuple(spans)), doc_id)


def file_records(preparer: Preparer, path: str | Path, root: str | Path | None = None,
                 max_bytes: int = 50_000_000) -> list[ChunkRecord]:
    """Records of one file of any supported format; raises InputError when it cannot be used."""
    for item in prepare_paths(preparer, [path], root=root, max_bytes=max_bytes):
        if isinstance(item, PrepareFailure):
            raise InputError(item.error)
        return records_of(item)
    raise InputError(f"{path}: no such file")


def prepare_paths(preparer: Preparer, paths, *, root: str | Path | None = None, max_bytes: int = 50_000_000,
                  include=(), exclude=(), limits=None, encode=None) -> Iterator[Prepared | PrepareFailure]:
    """Files, folders and globs -> what ``Preparer`` makes of each, in walk order; one bad file is
    its own PrepareFailure. Ids: the path under ``root`` (a folder: under it; a file alone: its name).
    Each file is prepared in a contained worker (``pipeline.contained``), as ingest prepares it: this
    process never parses a file, and a file that crashes the parser or runs out of its memory or
    time (``limits``, a ``sandbox.Limits``; default: ``pipeline.contained.DOOR_LIMITS``) is a
    PrepareFailure saying so. ``encode``: each ``Prepared``'s records are what it makes of each
    ``ChunkRecord`` (``PackingPreparer``), e.g. ``chunk --json``'s output lines, not record dicts."""
    from chunkwise.pipeline.contained import contained_map
    from chunkwise.sources import SourceError, iter_sources

    def tasks():
        for src in iter_sources(paths, root=root, max_bytes=max_bytes, include=include, exclude=exclude):
            if isinstance(src, SourceError):
                rel = src.doc_id or str(src.path)
                yield PrepareFailure(PrepareTask(str(src.path), rel, rel, "", ""), src.error, src.skipped)
            else:
                yield PrepareTask(str(src.path), src.doc_id, src.doc_id, src.media_type, src.sha256, src.size)

    def failed(task, failure):
        return PrepareFailure(task, f"{task.rel}: {failure.reason}")

    yield from contained_map(PackingPreparer(preparer, encode=encode), tasks(), failed, limits)


def records_of(prepared: Prepared) -> list[ChunkRecord]:
    return [ChunkRecord.from_dict(r) for r in prepared.records]


def _records(preparer: Preparer, doc: Document, doc_id: str) -> list[ChunkRecord]:
    """Prepared here (a text given directly is the caller's own), unless it is Markdown nested deep
    enough to crash the parser: then in a contained worker, as a file is, so that crash is an
    InputError (what ``chunk_file`` says of the same text in a file), not the caller's process."""
    from chunkwise.pipeline.contained import contained_map

    if doc.doc_id == doc.source:  # no front matter id: the one the door gives
        doc = replace(doc, doc_id=doc_id)
    task = PrepareTask("", doc.source, doc.doc_id, doc.media_type, doc.sha256, len(doc.text))
    if not (preparer.settings.config.format == "markdown" and too_deep(doc.text)):
        return records_of(preparer.prepare_document(task, doc))
    for out in contained_map(_PrepareDocument(preparer), [(task, doc)],
                             lambda item, failure: PrepareFailure(task, f"{task.rel}: {failure.reason}")):
        if isinstance(out, PrepareFailure):
            raise InputError(out.error)
        return records_of(out)
    raise AssertionError("unreachable: one item in, one out")  # pragma: no cover


# markdown-it-pyrs recurses once per nesting level on the thread's stack: 60,000 nested quotes crash an
# 8 MB main thread, 10,000 a 1 MB thread (3,000 did not). A line whose container markup (block quotes,
# list items) at its start is this long is parsed in a worker. Possessive: linear on any line.
DEEP_PREFIX = 2000  # characters ("> " per level: 1,000 levels)
_CONTAINERS = re.compile(r"^(?:[ \t]*+(?:>|[-*+](?=[ \t])|\d{1,9}+[.)](?=[ \t])))++", re.M)


def too_deep(text: str) -> bool:
    """Whether some line of ``text`` opens ``DEEP_PREFIX`` characters of Markdown containers."""
    return len(text) > DEEP_PREFIX and any(m.end() - m.start() >= DEEP_PREFIX for m in _CONTAINERS.finditer(text))


@dataclass(frozen=True)
class _PrepareDocument:
    """``preparer.prepare_document`` of a ``(task, document)`` pair, in a worker (it pickles)."""

    preparer: Preparer

    def __call__(self, item: tuple[PrepareTask, Document]) -> Prepared:
        return self.preparer.prepare_document(*item)


def _text_document(text: str, source: str, config: ChunkConfig) -> Document | None:
    """``text`` read as a file of ``config.format`` holding it (UTF-8) would be; None when empty."""
    from chunkwise.extract import extract_bytes

    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise InputError(f"{source}: the text holds a lone surrogate at character {exc.start}; "
                         "it is not Unicode text") from None
    try:
        doc = extract_bytes(data, source, MEDIA_TYPES[config.format])
    except InputError as exc:
        if str(exc).endswith("skipped"):  # empty: nothing to chunk, as ingest skips an empty file
            return None
        raise
    if config.format == "code":  # the name gives no language or title: the config's, if any
        meta = {**doc.metadata, "language": config.language or doc.metadata.get("language", "text")}
        meta.pop("title", None)
        doc = replace(doc, metadata=meta)
    return doc
