"""The library facade: what the CLI and users call."""
from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from chunkwise.config import ChunkConfig
from chunkwise.errors import ChunkwiseError, ConfigError, DependencyError, InputError  # re-exported for callers of the facade
from chunkwise.types import Chunk, Document, Page

def make_chunker(config: ChunkConfig | None = None, **options: Any):
    """Build a reusable chunker: ``make_chunker(strategy="recursive", size=256).chunk(text)``."""
    from chunkwise.chunking.router import build_chunker

    if config is None:
        config = ChunkConfig(**options)
    elif options:
        from dataclasses import replace

        config = replace(config, **options)
    return build_chunker(config)


def chunk_text(text: str, config: ChunkConfig | None = None, **options: Any) -> list[Chunk]:
    """Chunk one string. Offsets point into ``text``: ``chunk.text == text[chunk.start_char:chunk.end_char]``."""
    return make_chunker(config, **options).chunk(text)


def audit(paths, root: str | Path | None = None, max_bytes: int = 50_000_000):
    """Extraction audit rows, one per source (failures included), in a stable order."""
    from chunkwise.extract.audit import audit_document, audit_failure

    for item in iter_documents(paths, root=root, max_bytes=max_bytes):
        if isinstance(item, SourceFailure):
            yield audit_failure(item.source, item.error, item.skipped)
        else:
            yield audit_document(item)


def chunk_file(path: str | Path, config: ChunkConfig | None = None, chunker=None, **options: Any) -> list[Chunk]:
    """Chunk one file of any supported format (Markdown, text, HTML, PDF, DOCX)."""
    doc = load_document(path)
    if chunker is None:
        chunker = make_chunker(config, **_doc_options(doc, config, options))
    else:
        chunker = for_document(chunker, doc)
    return chunk_document(doc, chunker)


def _doc_options(doc: Document, config: ChunkConfig | None, options: dict) -> dict:
    opts = dict(options)
    opts.setdefault("format", "markdown" if doc.media_type == "text/markdown" else "text")
    if not (config and config.title) and "title" not in opts and doc.title:
        opts["title"] = doc.title
    return opts


def for_document(chunker, doc: Document):
    """The same chunker, with the format (and title, when the config has none) this document needs."""
    from dataclasses import replace

    want = _doc_options(doc, chunker.config, {})
    cfg = chunker.config
    new = replace(cfg, format=want["format"], title=cfg.title or want.get("title", ""))
    return chunker if new == cfg else type(chunker)(new, chunker.sizer)


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


def iter_documents(paths, root: str | Path | None = None, max_bytes: int = 50_000_000, unchanged=None,
                   options=None):
    """Files, folders and globs -> Documents, or a SourceFailure per file that cannot be used. One bad
    file never stops the run, and the good files come out exactly as they would alone. ``unchanged``
    (SourceFile -> bool) lets a caller skip reading and extracting files it already has; ``options``
    (an ``extract.ExtractOptions``) opts into extras such as DOCX comments."""
    from dataclasses import replace

    from chunkwise.extract import extract_bytes
    from chunkwise.sources import SourceError, iter_sources

    for src in iter_sources(paths, root=root, max_bytes=max_bytes):
        if isinstance(src, SourceError):
            yield SourceFailure(src.doc_id or str(src.path), src.error, src.error.endswith("skipped"))
            continue
        if unchanged is not None and unchanged(src):
            yield Unchanged(src.doc_id, src.sha256)
            continue
        try:
            doc = extract_bytes(src.path.read_bytes(), src.doc_id, src.media_type, options)
        except (InputError, DependencyError) as exc:
            msg = str(exc)
            yield SourceFailure(src.doc_id, msg, msg.endswith("skipped"))
            continue
        except OSError as exc:
            yield SourceFailure(src.doc_id, f"{src.doc_id}: cannot read ({exc.strerror or exc})")
            continue
        yield replace(doc, sha256=src.sha256)


def load_document(path: str | Path, options=None) -> Document:
    """One file -> Document, raising InputError when it cannot be used."""
    for item in iter_documents([path], options=options):
        if isinstance(item, SourceFailure):
            raise InputError(item.error)
        return item
    raise InputError(f"{path}: no such file")


_MARKUP = ("text/markdown", "text/plain")


def normalised_view(doc: Document):
    """The Document as chunked: normalised text with blocks, pages and body start moved along, plus the
    map back to ``doc.text`` (None when nothing changed). Markdown and text get character repairs only
    (invisible and bidirectional controls, soft hyphens, NFC) so their syntax survives; extracted
    formats also get whitespace, hyphenation and running-header repair."""
    from bisect import bisect_left
    from dataclasses import replace

    from chunkwise import normalise as nm

    if doc.media_type in _MARKUP:
        norm = nm.Normalised.identity(doc.text)
        for step in nm.CHARACTER_STEPS:
            norm = norm.then(step(norm.text))
    else:
        # running headers need evidence: with fewer than four pages a repeated line may be content
        norm = nm.normalise_document(doc, strip_headers=len(doc.pages) >= nm.MIN_PAGES)
    if norm.text == doc.text:
        return doc, None
    to_orig = norm.to_original

    def fwd(o: int) -> int:
        return bisect_left(to_orig, o)

    view = replace(
        doc,
        text=norm.text,
        blocks=tuple(replace(b, start=fwd(b.start), end=max(fwd(b.start), fwd(b.end))) for b in doc.blocks),
        pages=tuple(replace(p, start=fwd(p.start), end=fwd(p.end)) for p in doc.pages),
        body_start=fwd(doc.body_start),
    )
    return view, norm


def chunk_document(doc: Document, chunker=None, boundaries=(), **options: Any) -> list[Chunk]:
    """Chunk an extracted Document: offsets into ``doc.text`` (the original), chunk text normalised,
    front matter left out, heading paths from the document's own structure, and the page (and last
    page, if it crosses one) on each chunk. ``boundaries`` (original offsets, e.g. where access tags
    change) are hard: no chunk crosses one."""
    from dataclasses import replace

    view, norm = normalised_view(doc)
    if boundaries:
        chunks = _chunk_between(view, norm, sorted(set(boundaries)), chunker, **options)
    else:
        chunks = _chunk_view(view, chunker, **options)
    if norm is None:
        return chunks
    out = []
    for c in chunks:
        a, b = norm.original_span(c.start_char, c.end_char)
        out.append(replace(c, start_char=a, end_char=b))
    return out


def _chunk_between(view: Document, norm, cuts: list[int], chunker=None, **options: Any) -> list[Chunk]:
    """Chunk each stretch between hard boundaries on its own (offsets stay document-wide)."""
    from bisect import bisect_left
    from dataclasses import replace

    fwd = (lambda o: bisect_left(norm.to_original, o)) if norm is not None else (lambda o: o)
    edges = sorted({view.body_start, len(view.text), *(min(max(fwd(c), view.body_start), len(view.text)) for c in cuts)})
    out: list[Chunk] = []
    for a, b in zip(edges, edges[1:]):
        part = replace(view, text=view.text[:b], body_start=a,
                       blocks=tuple(x for x in view.blocks if a <= x.start and x.end <= b))
        for c in _chunk_view(part, chunker, **options):
            if c.start_char >= a:
                out.append(replace(c, index=len(out)))
    return out


def _chunk_view(doc: Document, chunker=None, **options: Any) -> list[Chunk]:
    from dataclasses import replace

    from chunkwise.chunking.structure import StructureChunker

    if chunker is None:
        chunker = make_chunker(None, **_doc_options(doc, None, options))
    if isinstance(chunker, StructureChunker) and doc.blocks:
        chunks = chunker.chunk_blocks(doc.text, doc.blocks, doc.body_start, doc.title)
    elif isinstance(chunker, StructureChunker):
        chunks = chunker.chunk(doc.text)  # the Markdown parser skips front matter itself
    else:
        body = doc.text[doc.body_start :]
        chunks = [replace(c, start_char=c.start_char + doc.body_start, end_char=c.end_char + doc.body_start)
                  for c in chunker.chunk(body)]
    return attach_pages(chunks, doc.pages)


def attach_pages(chunks: list[Chunk], pages: tuple[Page, ...] | list[Page]) -> list[Chunk]:
    """Set ``page``/``page_end`` from the document's page map (characters between pages belong to the
    page before)."""
    if not pages:
        return chunks
    from bisect import bisect_right
    from dataclasses import replace

    starts = [p.start for p in pages]

    def page_at(pos: int) -> int:
        return pages[max(0, bisect_right(starts, pos) - 1)].number

    out = []
    for c in chunks:
        first, last = page_at(c.start_char), page_at(max(c.start_char, c.end_char - 1))
        out.append(replace(c, page=first, page_end=last if last != first else None))
    return out


@dataclass(frozen=True)
class Plan:
    """Closed forms for fixed windows (seed 001): what a size/overlap choice costs and guarantees."""

    size: int
    overlap: int
    doc_words: int
    evidence: int
    chunks: int
    stored_units: int
    inflation: float
    limit_inflation: float
    guaranteed_evidence: int
    straddle_probability: float

    def to_dict(self) -> dict:
        return dict(self.__dict__)


def n_windows(total: int, size: int, overlap: int) -> int:
    if total <= 0:
        return 0
    return 1 if total <= size else math.ceil((total - size) / (size - overlap)) + 1


def straddle_probability(size: int, overlap: int, evidence: int) -> float:
    """Chance that evidence of ``evidence`` units, placed at a random offset, lands whole in no window."""
    if evidence <= overlap + 1:
        return 0.0
    if evidence > size:
        return 1.0
    return max(0.0, 1.0 - (size - evidence + 1) / (size - overlap))


def plan(size: int, overlap: int, doc_words: int = 100_000, evidence: int = 26) -> Plan:
    ChunkConfig(strategy="fixed", size=size, overlap=overlap, unit="words")  # same validation as chunking
    n = n_windows(doc_words, size, overlap)
    stored = doc_words + max(n - 1, 0) * overlap
    return Plan(
        size=size,
        overlap=overlap,
        doc_words=doc_words,
        evidence=evidence,
        chunks=n,
        stored_units=stored,
        inflation=stored / doc_words if doc_words else 0.0,
        limit_inflation=size / (size - overlap),
        guaranteed_evidence=overlap + 1,
        straddle_probability=straddle_probability(size, overlap, evidence),
    )


def search(db: str | Path, query: str, groups, **options: Any):
    """Search a store with the caller's access groups (filter before ranking); returns a
    ``SearchResult`` (passages with citations, the assembled context and its token count, and
    whatever was found but not sent). Options: k, mode, expand, budget, overfetch, embedder,
    bm25, generator_tokenizer. For many queries keep a ``chunkwise.retrieve.Retriever`` open."""
    from chunkwise.retrieve import search as _search

    return _search(db, query, groups, **options)


def open_retriever(db: str | Path, **options: Any):
    """A long-lived ``Retriever`` over an existing store (open once, search many times; close it).
    Options: embedder, bm25, generator_tokenizer. Raises ConfigError when ``db`` is not a file or
    not a chunkwise store, instead of creating an empty one."""
    import sqlite3

    from chunkwise.retrieve import Retriever

    if not Path(db).is_file():
        raise ConfigError(f"{db}: no such store; create it with: chunkwise ingest PATH --db {db}")
    try:
        return Retriever(db, **options)
    except sqlite3.DatabaseError as exc:
        raise ConfigError(f"{db}: not a chunkwise store ({exc})") from exc


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


def evaluate(golden: str | Path, docs: str | Path, configs=None, **settings: Any):
    """Evaluate chunk configs (default: one default ``ChunkConfig`` with hybrid retrieval) on a golden
    set; returns an ``Evaluation`` (``.to_dict()``, ``.report_data()``, ``.below(min_recall)``)."""
    from chunkwise.evaluate.runner import Settings, run_eval

    if configs is None:
        configs = [ChunkConfig(strategy="auto")]
    runs = [(c, [("hybrid", "none")]) if isinstance(c, ChunkConfig) else c for c in configs]
    return run_eval(golden, docs, runs, Settings(**settings))
