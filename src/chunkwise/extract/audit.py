"""Extraction audit: is this file's text fit to chunk? Counted per file, before anyone blames the
chunker (seed 004): empty pages, characters per page, `(cid:` glyph garbage, replacement characters,
language, running headers/footers, tables, pages that need OCR, pages read by OCR and how sure it was,
and the damage signals of ``damage`` (broken lines, mojibake, glyphs without text, reversed
right-to-left text, words per page, garbled tables), each a warning with a hint past its threshold.
What the parsers logged while reading the file is among the warnings (``capture``). Access
declarations that cannot be read make the row an ``error``: ingest would not serve the file."""
from __future__ import annotations

from dataclasses import asdict, dataclass, field

from chunkwise.types import Document


@dataclass(frozen=True)
class AuditRow:
    source: str
    status: str  # ok | warn | skipped | error
    format: str = ""
    pages: int | None = None
    empty_pages: int = 0
    chars: int = 0
    chars_per_page: float | None = None
    cid_artifacts: int = 0
    replacement_chars: int = 0
    language: str = ""
    language_prob: float = 0.0
    repeated_lines: tuple[str, ...] = ()  # running headers/footers removed before chunking, with page counts
    tables: int = 0
    needs_ocr: bool = False
    ocr_pages: int = 0  # pages whose text came from OCR
    ocr_confidence: float | None = None  # their mean word confidence, 0-100
    ocr_low_confidence_pages: int = 0  # of them, pages under the confidence gate (chunks go to review)
    broken_lines: float | None = None  # share of wrapped lines split mid-way (damage.py)
    mojibake: int = 0  # UTF-8 read as Windows-1252 ("Ã©")
    odd_glyphs: int = 0  # private-use and control characters
    rtl_words: int = 0
    rtl_reversed: float | None = None  # share of right-to-left words in visual order
    words_per_page: float | None = None
    table_problems: int = 0  # tables with digits split across cells or mostly empty
    warnings: tuple[str, ...] = field(default=())
    error: str = ""

    def to_dict(self) -> dict:
        d = asdict(self)
        d["repeated_lines"] = list(self.repeated_lines)
        d["warnings"] = list(self.warnings)
        return d


_SHORT = {
    "text/markdown": "markdown",
    "text/plain": "text",
    "text/html": "html",
    "application/pdf": "pdf",
    "text/x-code": "code",
    "application/vnd.openxmlformats-officedocument.wordprocessingml.document": "docx",
}


def _tables(doc: Document) -> int:
    tables = sum(1 for b in doc.blocks if b.kind == "table")
    if doc.media_type == "text/markdown" and not doc.blocks:
        from chunkwise.chunking.markdown import parse_markdown

        tables = sum(1 for s in parse_markdown(doc.text).sections for b in s.blocks if b.kind == "table")
    return tables


def _running(doc: Document):
    """What chunking removes as running headers/footers (the same rule and the same page minimum),
    so the audit shows exactly which lines the chunks will not contain, or why none were removed."""
    from chunkwise.normalise.headers import MIN_PAGES, RunningLines, running_lines

    return running_lines(doc) if len(doc.pages) >= MIN_PAGES else RunningLines()


def audit_document(doc: Document) -> AuditRow:
    from chunkwise.extract.damage import measure
    from chunkwise.extract.language import detect

    text = doc.text[doc.body_start :]
    empty = sum(1 for p in doc.pages if p.needs_ocr)
    lang, prob = detect(text)
    cid = text.count("(cid:")
    fffd = text.count("\ufffd")
    warnings = list(doc.warnings)
    running = _running(doc)
    if running.refused:
        warnings.append(f"running headers not removed: {running.refused}")
    if cid and not any("(cid:" in w for w in warnings):
        warnings.append(f"{cid} '(cid:' glyph artifacts: the PDF's fonts lack a text mapping; consider OCR")
    if fffd and not any("U+FFFD" in w or "replacement" in w.lower() for w in warnings):
        warnings.append(f"{fffd} replacement characters: bytes that did not decode")
    if doc.pages and empty == len(doc.pages):
        warnings.append("no page has a text layer: the file needs OCR before it can be chunked")
    ocrd = [p.ocr_confidence for p in doc.pages if p.ocr_confidence is not None]
    low = [p.number for p in doc.pages if p.review_reason == "low_ocr_confidence"]
    if low:
        warnings.append(f"low OCR confidence on page(s) {', '.join(map(str, low[:10]))}"
                        f"{' …' if len(low) > 10 else ''}: their chunks go to review")
    damage = measure(doc)
    warnings += damage.warnings()
    from chunkwise.enrich.acl import access_problems  # the rules ingest applies, run here to report them

    denied = access_problems(doc)  # access that cannot be read: not served, so a failure of the file
    warnings = [w for w in warnings if w not in denied]
    status = "error" if denied else "warn" if warnings else "ok"
    return AuditRow(
        source=doc.source,
        status=status,
        format=_SHORT.get(doc.media_type, doc.media_type),
        pages=len(doc.pages) or None,
        empty_pages=empty,
        chars=len(text),
        chars_per_page=round(len(text) / len(doc.pages), 1) if doc.pages else None,
        cid_artifacts=cid,
        replacement_chars=fffd,
        language=lang,
        language_prob=prob,
        repeated_lines=running.shown,
        tables=_tables(doc),
        needs_ocr=empty > 0,
        ocr_pages=len(ocrd),
        ocr_confidence=round(sum(ocrd) / len(ocrd), 1) if ocrd else None,
        ocr_low_confidence_pages=len(low),
        **asdict(damage),
        warnings=tuple(dict.fromkeys(warnings)),
        error="; ".join(denied),
    )


def audit_failure(source: str, error: str, skipped: bool = False) -> AuditRow:
    return AuditRow(source=source, status="skipped" if skipped else "error", error=error)
