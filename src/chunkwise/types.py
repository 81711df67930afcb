"""Core data types: frozen, stdlib-only, shared by every stage."""
from __future__ import annotations

from dataclasses import MISSING, dataclass, field, fields, make_dataclass


@dataclass(frozen=True, slots=True)
class Chunk:
    """One retrieval unit.

    ``text == original[start_char:end_char]`` always holds: offsets are the truth and the text is a
    slice. ``embed_text`` is what an embedder sees (contextual header, repeated table header); ``size``
    is measured on ``embed_text`` with the configured sizer and never exceeds the cap.
    """

    index: int
    start_char: int
    end_char: int
    text: str
    size: int
    level: str
    embed_text: str
    heading_path: tuple[str, ...] = ()
    section: int | None = None
    kind: str = "text"
    needs_review: bool = False
    reasons: tuple[str, ...] = ()
    rows: tuple[int, int] | None = None
    page: int | None = None  # first page (1-based) of a paged source
    page_end: int | None = None  # last page, when the chunk crosses a page break

    def to_dict(self) -> dict:
        return {
            "index": self.index,
            "start_char": self.start_char,
            "end_char": self.end_char,
            "size": self.size,
            "level": self.level,
            "kind": self.kind,
            "heading_path": list(self.heading_path),
            "section": self.section,
            "needs_review": self.needs_review,
            "reasons": list(self.reasons),
            "rows": list(self.rows) if self.rows else None,
            "page": self.page,
            "page_end": self.page_end,
            "text": self.text,
            "embed_text": self.embed_text,
        }


def _builder_of(cls: type) -> type:
    """A plain (not frozen) slotted dataclass with ``cls``'s fields in order: the same instance layout,
    so what it builds can be given ``cls`` as its class."""
    specs = [(f.name, f.type, field(default=f.default) if f.default is not MISSING else field())
             for f in fields(cls)]
    return make_dataclass(f"_{cls.__name__}Builder", specs, slots=True)


_ChunkBuilder = _builder_of(Chunk)


def new_chunk(*args) -> Chunk:
    """``Chunk(*args)`` for the chunkers' loop over every chunk, at about a fifth of the cost.

    Why: a frozen dataclass sets each of its 15 fields through ``object.__setattr__`` (~2 us a chunk,
    a quarter of ``recursive@800``'s whole time); the builder stores them as plain slots, then the
    instance becomes a ``Chunk``: the same class, fields, equality, hash, and it is frozen from then on.
    """
    chunk = _ChunkBuilder(*args)
    chunk.__class__ = Chunk
    return chunk


@dataclass(frozen=True, slots=True)
class Block:
    """A structural unit found in a document: heading, paragraph, list, list_item, code, table, ..."""

    kind: str
    start: int
    end: int
    level: int = 0
    text: str = ""
    meta: dict = field(default_factory=dict, compare=False, hash=False)


@dataclass(frozen=True, slots=True)
class Page:
    """One page of a paged source: ``text[start:end]`` of its Document; numbers are 1-based."""

    number: int
    start: int
    end: int
    needs_ocr: bool = False
    label: str = ""  # the printed page label ("iv", "A-3") when the PDF defines labels
    ocr_confidence: float | None = None  # mean word confidence 0-100 when the text came from OCR
    review_reason: str = ""  # set when this page's chunks must not be served as certain (low OCR confidence)


@dataclass(frozen=True)
class Document:
    """One extracted source. ``text`` is the *original* extracted text: every offset (blocks, pages,
    chunks) points into it. ``body_start`` skips metadata such as YAML front matter.

    Block kinds: heading (``level`` 1-6, ``text`` = heading text), paragraph, list_item (``level`` =
    nesting depth), table (``meta["header"]`` = header cells, ``meta["rows"]`` = row spans), code
    (``meta["lang"]``), page_break. A PDF block has ``meta["boxes"]``: ((page, x0, top, x1, bottom), ...) in
    points from the page's top left, one per page it is on. Text beside the main flow carries ``meta["role"]`` (footnote,
    endnote, comment, textbox, header, footer).
    """

    doc_id: str
    source: str
    media_type: str
    text: str
    blocks: tuple[Block, ...] = ()
    pages: tuple[Page, ...] = ()
    metadata: dict = field(default_factory=dict, compare=False, hash=False)
    sha256: str = ""
    body_start: int = 0
    warnings: tuple[str, ...] = ()

    @property
    def title(self) -> str:
        return str(self.metadata.get("title") or "")
