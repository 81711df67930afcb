"""Strategy registry: names are part of the product (CLI flags, config files, store fingerprints)."""
from __future__ import annotations

from typing import Iterable

from chunkwise.chunking.atoms import ROUTES
from chunkwise.chunking.balanced import BalancedChunker
from chunkwise.chunking.base import BaseChunker
from chunkwise.chunking.code import CodeChunker
from chunkwise.chunking.fixed import FixedChunker
from chunkwise.chunking.recursive import ParagraphsChunker, RecursiveChunker
from chunkwise.chunking.semantic import SemanticChunker
from chunkwise.chunking.sentences import SentencesChunker, SentenceWindowChunker
from chunkwise.chunking.sizing import Sizer, make_sizer
from chunkwise.chunking.structure import AutoChunker, StructureChunker, TableChunker
from chunkwise.config import ChunkConfig
from chunkwise.types import Chunk

STRATEGY_CLASSES: dict[str, type[BaseChunker]] = {
    cls.name: cls
    for cls in (
        FixedChunker,
        SentenceWindowChunker,
        SentencesChunker,
        ParagraphsChunker,
        RecursiveChunker,
        StructureChunker,
        TableChunker,
        BalancedChunker,
        AutoChunker,
        SemanticChunker,
        CodeChunker,
    )
}


def build_chunker(config: ChunkConfig, sizer: Sizer | None = None) -> BaseChunker:
    """The one way to turn a config into a chunker (the sizer loads once and is reused)."""
    if sizer is None:
        sizer = make_sizer(config.unit, config.tokenizer, config.backend, config.special_tokens)
    cls = CodeChunker if config.strategy == "auto" and config.format == "code" else STRATEGY_CLASSES[config.strategy]
    return cls(config, sizer)


def route_of(chunks: Iterable[Chunk]) -> tuple[str, ...]:
    """The content types a document was routed to, from its chunks' ``kind`` (``auto`` sets
    ``turn``/``qa``/``step``/``fields`` on chunks made of those atoms; tables and code keep theirs):
    e.g. ``("prose", "table", "transcript")``, in the fixed order of ``atoms.ROUTES``. Pure, so a
    manifest or an ingest report can record the route without re-chunking."""
    kinds = {c.kind for c in chunks}
    return tuple(route for kind, route in ROUTES.items() if kind in kinds) + tuple(
        sorted(k for k in kinds if k not in ROUTES))
