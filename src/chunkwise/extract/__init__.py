"""Extraction: one module per format, each ``bytes -> Document`` with offsets into the extracted text.

Format libraries load lazily, only when a file of that format is met.
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass, replace

from chunkwise.errors import ConfigError, DependencyError, InputError
from chunkwise.sources.sniff import (CODE, CSV, DOCX, EML, EPUB, HTML, MARKDOWN, MSG, ODS, ODT, ORG, PDF, PPTX, RST,
                                     RTF, TSV, XLSX)
from chunkwise.sources.sniff import PLAIN as TEXT
from chunkwise.types import Document

_MODULES = {MARKDOWN: "text", TEXT: "text", HTML: "html", PDF: "pdf", DOCX: "docx", CODE: "code", PPTX: "pptx",
            XLSX: "xlsx", ODT: "odf", ODS: "odf", EPUB: "epub", CSV: "sheets", TSV: "sheets", EML: "eml", MSG: "msg",
            RTF: "rtf", RST: "text", ORG: "text"}
_BY_TYPE = frozenset({"text", "code", "sheets", "odf"})  # modules that read several media types
_EXTRAS = {"html": "html", "pdf": "pdf", "docx": "docx", "pptx": "office", "xlsx": "office", "odf": "office",
           "epub": "office", "msg": "office", "rtf": "office"}


@dataclass(frozen=True)
class ExtractOptions:
    """Choices that change the text a file yields. ``docx_comments``: reviewers' comments in DOCX
    become blocks after the paragraph they annotate (off by default: they are rarely meant for readers)."""

    docx_comments: bool = False
    ocr: bool = True  # PDF pages without a usable text layer are OCR'd when the ocr extra is installed
    ocr_min_confidence: float = 60.0  # a page OCR'd with a lower mean word confidence goes to review

    def __post_init__(self) -> None:
        if not 0 <= self.ocr_min_confidence <= 100:
            raise ConfigError(f"ocr_min_confidence must be between 0 and 100 (Tesseract's word confidence), "
                              f"not {self.ocr_min_confidence}")


def extract_bytes(data: bytes, source: str, media_type: str, options: ExtractOptions | None = None) -> Document:
    """Turn one source's bytes into a Document, or raise InputError saying why it cannot be read.
    What the format's parser logs or warns meanwhile becomes the Document's warnings (``capture``);
    for a file that cannot be read, the first of them is added to the error."""
    from chunkwise.extract.capture import captured, summary

    with captured() as said:
        try:
            doc = _extract(data, source, media_type, options)
        except InputError as exc:
            heard = summary(said)
            if not heard or str(exc).endswith("skipped"):
                raise
            more = f" (and {len(heard) - 1} more)" if len(heard) > 1 else ""
            raise InputError(f"{exc}; {heard[0]}{more}") from exc
    heard = summary(said)
    return replace(doc, warnings=doc.warnings + tuple(heard)) if heard else doc


def _extract(data: bytes, source: str, media_type: str, options: ExtractOptions | None) -> Document:
    name = _MODULES.get(media_type)
    if name is None:
        raise InputError(f"{source}: unsupported type {media_type}; chunkwise reads Markdown, text, reStructuredText, "
                         "Org, HTML, PDF, DOCX, PPTX, XLSX, ODT, ODS, EPUB, CSV, TSV, EML, MSG, RTF and code")
    try:
        module = importlib.import_module(f"chunkwise.extract.{name}")
    except ImportError as exc:
        extra = _EXTRAS.get(name, "all")
        raise DependencyError(f"{source}: reading {name.upper()} needs: pip install 'chunkwise[{extra}]' ({exc.name})") from exc
    if name in _BY_TYPE:
        return module.extract(data, source, media_type)
    if name == "docx":
        return module.extract(data, source, comments=bool(options and options.docx_comments))
    if name == "pdf" and options is not None:
        return module.extract(data, source, ocr=options.ocr, ocr_min_confidence=options.ocr_min_confidence)
    return module.extract(data, source)
