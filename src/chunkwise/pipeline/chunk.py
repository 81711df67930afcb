"""Chunking an extracted Document: normalised view, hard boundaries, offsets mapped back, pages.

Pure functions of a Document and a chunker; the *prepare* stage and ``api.chunk_file`` both use
them, so a chunk looks the same whether it came from ``chunkwise chunk`` or ``chunkwise ingest``.
"""
from __future__ import annotations

from bisect import bisect_left, bisect_right
from dataclasses import replace
from typing import Any

from chunkwise.chunking.markdown import mask_front_matter
from chunkwise.config import ChunkConfig
from chunkwise.types import Chunk, Document, Page


def make_chunker(config: ChunkConfig | None = None, **options: Any):
    """Build a reusable chunker: ``make_chunker(strategy="recursive", size=256).chunk(text)``."""
    from chunkwise.chunking.router import build_chunker

    if config is None:
        config = ChunkConfig(**options)
    elif options:
        config = replace(config, **options)
    return build_chunker(config)


def doc_options(doc: Document, config: ChunkConfig | None, options: dict) -> dict:
    opts = dict(options)
    code = doc.media_type == "text/x-code"
    opts.setdefault("format", "markdown" if doc.media_type == "text/markdown" else "code" if code else "text")
    opts.setdefault("language", doc.metadata.get("language", "") if code else "")
    if not (config and config.title) and "title" not in opts and doc.title:
        opts["title"] = doc.title
    return opts


def description_line(doc: Document) -> str:
    from chunkwise.enrich.describe import describe

    d = describe(doc)
    return d.text if d else ""


def for_document(chunker, doc: Document):
    """The same chunker, with the format (and title, when the config has none) this document needs."""
    want = doc_options(doc, chunker.config, {})
    cfg = chunker.config
    new = replace(cfg, format=want["format"], language=want["language"], title=cfg.title or want.get("title", ""),
                  description=description_line(doc) if cfg.header == "context" else "")
    if new == cfg:
        return chunker
    from chunkwise.chunking.router import build_chunker

    return build_chunker(new, chunker.sizer)  # auto on a code file becomes the code strategy


_MARKUP = ("text/markdown", "text/plain", "text/x-code", "text/x-rst", "text/x-org")  # whitespace is syntax: character repairs only


def normalised_view(doc: Document):
    """The Document as chunked: normalised text with blocks, pages and body start moved along, plus the
    map back to ``doc.text`` (None when nothing changed). Markdown and text get character repairs only
    (invisible and bidirectional controls, soft hyphens, NFC) so their syntax survives; extracted
    formats also get whitespace, hyphenation and running-header repair."""
    from chunkwise import normalise as nm

    if doc.media_type in _MARKUP:
        norm = nm.Normalised.identity(doc.text)
        for step in nm.CHARACTER_STEPS:
            norm = norm.then(step(norm.text))
    else:
        # running headers need evidence: with fewer than four pages a repeated line may be content
        norm, crossings = nm.normalise_paged(doc, strip_headers=len(doc.pages) >= nm.MIN_PAGES)
        if crossings:
            doc = replace(doc, blocks=nm.merge_blocks(doc.blocks, crossings))
    if norm.text == doc.text:
        return doc, None
    to_orig = norm.to_original

    def fwd(o: int) -> int:
        return bisect_left(to_orig, o)

    view = replace(
        doc,
        text=norm.text,
        blocks=tuple(replace(b, start=fwd(b.start), end=max(fwd(b.start), fwd(b.end))) for b in doc.blocks
                     if not nm.is_furniture(b)),  # removed with their text
        pages=tuple(replace(p, start=fwd(p.start), end=fwd(p.end)) for p in doc.pages),
        body_start=fwd(doc.body_start),
    )
    return view, norm


def chunk_document(doc: Document, chunker=None, boundaries=(), **options: Any) -> list[Chunk]:
    """Chunk an extracted Document: offsets into ``doc.text`` (the original), chunk text normalised,
    front matter left out, heading paths from the document's own structure, and the page (and last
    page, if it crosses one) on each chunk. ``boundaries`` (original offsets, e.g. where access tags
    change) are hard: no chunk crosses one."""
    view, norm = normalised_view(doc)
    if view.media_type == "text/markdown" and view.body_start:  # front matter the parser may not know
        view = replace(view, text=mask_front_matter(view.text, view.body_start))
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
    from chunkwise.chunking.structure import StructureChunker

    if chunker is None:
        chunker = make_chunker(None, **doc_options(doc, None, options))
    if hasattr(chunker, "chunk_blocks") and doc.blocks:  # structure-aware: structure, table, auto, semantic
        chunks = chunker.chunk_blocks(doc.text, doc.blocks, doc.body_start, doc.title)
    elif isinstance(chunker, StructureChunker):
        chunks = chunker.chunk_from(doc.text, doc.body_start)  # front matter is blank (chunk_document)
    else:
        body = doc.text[doc.body_start :]
        chunks = chunker.chunk(body)
        if doc.body_start:  # a copy per chunk only where the offsets move
            chunks = [replace(c, start_char=c.start_char + doc.body_start, end_char=c.end_char + doc.body_start)
                      for c in chunks]
    return attach_pages(chunks, doc.pages)


def attach_pages(chunks: list[Chunk], pages: tuple[Page, ...] | list[Page]) -> list[Chunk]:
    """Set ``page``/``page_end`` from the document's page map (characters between pages belong to the
    page before)."""
    if not pages:
        return chunks
    starts = [p.start for p in pages]

    def page_at(pos: int) -> int:
        return pages[max(0, bisect_right(starts, pos) - 1)].number

    out = []
    for c in chunks:
        first, last = page_at(c.start_char), page_at(max(c.start_char, c.end_char - 1))
        out.append(replace(c, page=first, page_end=last if last != first else None))
    return out
