"""Sources -> extracted Documents, one failure per bad file (never a failed run).

``read_source`` is what a worker runs per file. ``iter_documents`` walks in this process and extracts
each file in a contained worker (``pipeline.contained``: this process never parses a file), one at a
time, so a caller can stop or skip (``unchanged``) without reading the rest.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from chunkwise.errors import ConfigError, DependencyError, InputError
from chunkwise.types import Document


@dataclass(frozen=True)
class SourceFailure:
    """A source that produced no Document, and why. ``skipped`` marks empty files: reported, not errors."""

    source: str
    error: str
    skipped: bool = False


@dataclass(frozen=True)
class Unchanged:
    """A source the caller already holds in this exact version (its ``unchanged`` test said so)."""

    doc_id: str
    sha256: str


def extract_options(config):
    """The extraction choices a ``ChunkConfig`` records (DOCX comments): ``chunk`` and ``ingest`` read
    a file alike, and a store's fingerprint says which text its chunks came from."""
    from chunkwise.extract import ExtractOptions

    return ExtractOptions(docx_comments=bool(config is not None and config.docx_comments))


def read_source(src, options=None) -> Document | SourceFailure:
    """One ``sources.SourceFile`` -> its Document (sha256 of the bytes walked), or why not.
    ``options`` (an ``extract.ExtractOptions``) opts into extras such as DOCX comments."""
    from chunkwise.extract import extract_bytes

    try:
        doc = extract_bytes(src.path.read_bytes(), src.doc_id, src.media_type, options)
    except (InputError, DependencyError) as exc:
        msg = str(exc)
        return SourceFailure(src.doc_id, msg, msg.endswith("skipped"))
    except OSError as exc:
        return SourceFailure(src.doc_id, f"{src.doc_id}: cannot read ({exc.strerror or exc})")
    return replace(doc, sha256=src.sha256)


def iter_documents(paths, root: str | Path | None = None, max_bytes: int = 50_000_000, unchanged=None,
                   options=None, include=(), exclude=()):
    """Files, folders and globs -> Documents, or a SourceFailure per file that cannot be used. One bad
    file never stops the run, and the good files come out exactly as they would alone. ``unchanged``
    (SourceFile -> bool) lets a caller skip reading and extracting files it already has; ``options``
    (an ``extract.ExtractOptions``) opts into extras such as DOCX comments; ``include``/``exclude``
    are globs on the path relative to the root (``sources.globs``). Each file is extracted in a
    contained worker (``pipeline.contained``); one that crashes it or runs out of its memory or
    time is a SourceFailure saying so."""
    from chunkwise.pipeline.contained import contained_map, source_name
    from chunkwise.sources import SourceError, iter_sources

    def walk():
        for src in iter_sources(paths, root=root, max_bytes=max_bytes, include=include, exclude=exclude):
            if isinstance(src, SourceError):
                yield SourceFailure(src.doc_id or str(src.path), src.error, src.skipped)
            elif unchanged is not None and unchanged(src):
                yield Unchanged(src.doc_id, src.sha256)
            else:
                yield src

    def failed(src, failure):
        return SourceFailure(source_name(src), f"{source_name(src)}: {failure.reason}")

    yield from contained_map(ReadSource(options), walk(), failed)


def load_document(path: str | Path, options=None) -> Document:
    """One file -> Document, raising InputError when it cannot be used. A folder, or a glob that
    matches several files, is a ConfigError: taking its first file would pass for the whole."""
    if Path(path).is_dir():
        raise ConfigError(f"{path} is a folder: name one file in it (chunk, audit and ingest take folders)")
    items = iter_documents([path], options=options)
    try:
        item = next(items, None)
        if item is not None and not Path(path).exists() and next(items, None) is not None:
            raise ConfigError(f"{path} matches several files: name one file (chunk, audit and ingest take globs)")
    finally:
        items.close()
    if item is None:
        raise InputError(f"{path}: no such file")
    if isinstance(item, SourceFailure):
        raise InputError(item.error)
    return item


class ReadSource:
    """``sources.SourceFile`` -> its ``Document`` or a ``SourceFailure``, in the worker; anything
    else passes through. Picklable: it carries only the extraction options."""

    def __init__(self, options=None) -> None:
        self.options = options

    def __call__(self, src):
        from chunkwise.sources import SourceFile

        return read_source(src, self.options) if isinstance(src, SourceFile) else src
