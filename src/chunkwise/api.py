"""The library facade: what the CLI and users call."""
from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from chunkwise.config import ChunkConfig
from chunkwise.errors import InputError
from chunkwise.types import Chunk

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
