"""The library facade: what the CLI and users call."""
from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from chunkwise.config import ChunkConfig
from chunkwise.errors import InputError
from chunkwise.types import Chunk, Document, Page

_MARKDOWN_SUFFIXES = {".md", ".markdown", ".mdx", ".mdown"}


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


def read_text(path: str | Path) -> str:
    """Decode a text file exactly (UTF-8, UTF-8 with BOM kept as a character, UTF-16 with BOM)."""
    p = Path(path)
    try:
        raw = p.read_bytes()
    except OSError as exc:
        raise InputError(f"{p}: cannot read ({exc.strerror or exc})") from exc
    if raw.startswith((b"\xff\xfe", b"\xfe\xff")):
        return raw.decode("utf-16")
    if b"\x00" in raw[:8192]:
        raise InputError(f"{p}: looks binary (NUL bytes); not a text file")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"{p}: not valid UTF-8 at byte {exc.start}; re-save it as UTF-8") from exc


def chunk_file(path: str | Path, config: ChunkConfig | None = None, chunker=None, **options: Any) -> list[Chunk]:
    """Chunk a Markdown or text file; the format follows the suffix unless the config says otherwise."""
    text = read_text(path)
    fmt = "markdown" if Path(path).suffix.lower() in _MARKDOWN_SUFFIXES else "text"
    if chunker is None:
        chunker = make_chunker(config, format=fmt, **options)
    elif chunker.config.format != fmt:
        from dataclasses import replace

        chunker = type(chunker)(replace(chunker.config, format=fmt), chunker.sizer)
    return chunker.chunk(text)


def chunk_document(doc: Document, chunker=None, **options: Any) -> list[Chunk]:
    """Chunk an extracted Document: offsets into ``doc.text``, front matter left out, heading paths
    from the document's own structure, and the page (and last page, if it crosses one) on each chunk."""
    from dataclasses import replace

    from chunkwise.chunking.structure import StructureChunker

    if chunker is None:
        fmt = "markdown" if doc.media_type == "text/markdown" else "text"
        chunker = make_chunker(None, format=fmt, title=options.pop("title", doc.title), **options)
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
