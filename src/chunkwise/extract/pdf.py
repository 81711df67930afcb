"""PDF → Document with pypdf (BSD; PyMuPDF is AGPL): text per page, a page map, font-size headings.

Reading order is pypdf's default ("plain") mode, i.e. content-stream order: generators write a column
at a time, so columns stay apart, whereas ``extraction_mode="layout"`` rebuilds visual rows and puts
both columns of a row on one line. Headings come from font size: pypdf's ``visitor_text`` reports
each piece of text with its font and matrices, and the pieces concatenate to the page text, so every
character gets a size without matching strings. Lines clearly larger than the body size are headings,
ranked by size. PDF tables are not detected (they come out as lines of text).
"""
from __future__ import annotations

import hashlib
import io
import math
import re
from collections import Counter
from statistics import median
from typing import NamedTuple

from chunkwise.errors import DependencyError, InputError
from chunkwise.types import Block, Document, Page

MEDIA_TYPE = "application/pdf"
HEADING_RATIO = 1.15  # a line this much larger than the body size is a heading
MAX_HEADING_CHARS = 150  # longer "large" lines are pull quotes or banners, not headings
MAX_HEADING_SHARE = 0.4  # when more lines than this look like headings, size says nothing
PARAGRAPH_GAP = 1.4  # a line gap this much larger than the page's usual gap starts a paragraph


class _Line(NamedTuple):
    text: str
    size: float  # dominant effective font size in points, 0 when unknown
    y: float | None  # baseline position, for paragraph gaps


def extract(data: bytes, source: str) -> Document:
    """Extract one PDF. Raises InputError for an unreadable file, never a pypdf traceback."""
    pypdf = _import_pypdf()
    reader = _open(pypdf, data, source)
    warnings: list[str] = []
    pages = [_page_lines(pypdf, page, n, warnings) for n, page in _pages(pypdf, reader, source)]
    if pages and len(warnings) == len(pages):  # every page failed: the file, not a page, is broken
        raise InputError(f"{source}: no page of this PDF could be read ({warnings[0]}); the file is "
                         "corrupt or truncated — download or export it again")
    levels = _heading_levels([line for lines in pages for line in lines])
    text, blocks, page_map = _assemble(pages, levels)
    warnings += _page_warnings(page_map) + _artifact_warnings(text)
    return Document(
        doc_id=source, source=source, media_type=MEDIA_TYPE, text=text, blocks=tuple(blocks),
        pages=tuple(page_map), metadata=_metadata(pypdf, reader), sha256=hashlib.sha256(data).hexdigest(),
        warnings=tuple(warnings),
    )


def _import_pypdf():
    try:
        import pypdf
    except ImportError as exc:  # an optional extra: say how to get it
        raise DependencyError("PDF extraction needs pypdf: pip install 'chunkwise[pdf]'") from exc
    return pypdf


def _open(pypdf, data: bytes, source: str):
    """Open and, when needed, decrypt with the empty user password (owner-only protection)."""
    try:
        reader = pypdf.PdfReader(io.BytesIO(data))
        if reader.is_encrypted and reader.decrypt("") == pypdf.PasswordType.NOT_DECRYPTED:
            raise InputError(f"{source}: PDF is encrypted with a user password; decrypt it "
                             "(e.g. qpdf --decrypt --password=...) and extract the decrypted copy")
        return reader
    except pypdf.errors.DependencyError as exc:
        raise DependencyError(f"{source}: this PDF's encryption needs a crypto library: "
                              "pip install cryptography") from exc
    except pypdf.errors.PyPdfError as exc:
        raise _corrupt(source, exc) from exc


def _pages(pypdf, reader, source: str):
    try:
        return list(enumerate(reader.pages, 1))
    except (pypdf.errors.PyPdfError, KeyError, ValueError, TypeError) as exc:
        raise _corrupt(source, exc) from exc


def _corrupt(source: str, exc: Exception) -> InputError:
    return InputError(f"{source}: not a readable PDF ({exc}); the file is corrupt or truncated — "
                      "download or export it again")


def _page_lines(pypdf, page, number: int, warnings: list[str]) -> list[_Line]:
    """The page's text lines, each with its dominant font size and baseline."""
    pieces: list[tuple[str, float, float]] = []

    def visit(text, cm, tm, font_dict, font_size):  # noqa: ARG001 - pypdf's visitor signature
        if text:
            m = _times(tm, cm)
            pieces.append((text, abs(float(font_size or 0)) * math.hypot(m[2], m[3]), m[5]))

    try:
        raw = page.extract_text(visitor_text=visit)
    except (pypdf.errors.PyPdfError, KeyError, ValueError, TypeError, AttributeError, IndexError) as exc:
        warnings.append(f"page {number}: text extraction failed ({exc}); page left empty, as if scanned")
        return []
    sizes, ys = _char_props(raw, pieces)
    lines, pos = [], 0
    for part in raw.split("\n"):
        lines.append(_line(part, sizes[pos : pos + len(part)], ys[pos : pos + len(part)]))
        pos += len(part) + 1
    while lines and not lines[-1].text:
        lines.pop()
    while lines and not lines[0].text:
        lines.pop(0)
    return lines


def _times(a, b) -> list[float]:
    """PDF matrix product a × b for [a b c d e f] matrices (text matrix then CTM)."""
    a, b = [float(v) for v in a], [float(v) for v in b]
    return [a[0] * b[0] + a[1] * b[2], a[0] * b[1] + a[1] * b[3],
            a[2] * b[0] + a[3] * b[2], a[2] * b[1] + a[3] * b[3],
            a[4] * b[0] + a[5] * b[2] + b[4], a[4] * b[1] + a[5] * b[3] + b[5]]


def _char_props(raw: str, pieces: list[tuple[str, float, float]]):
    """Per-character size and y; all unknown when the pieces do not spell the page text."""
    if "".join(p[0] for p in pieces) != raw:
        return [0.0] * len(raw), [None] * len(raw)
    sizes: list[float] = []
    ys: list[float | None] = []
    for text, size, y in pieces:
        sizes += [size] * len(text)
        ys += [y] * len(text)
    return sizes, ys


def _line(part: str, sizes, ys) -> _Line:
    text = part.strip()
    if not text:
        return _Line("", 0.0, None)
    counts = Counter(round(s * 2) / 2 for ch, s in zip(part, sizes) if not ch.isspace())
    first = len(part) - len(part.lstrip())
    return _Line(text, counts.most_common(1)[0][0], ys[first])


def _heading_levels(lines: list[_Line]) -> dict[float, int]:
    """Font size → heading level (largest size = 1), or {} when size does not mark headings."""
    body = Counter()
    for line in lines:
        if line.size:
            body[line.size] += len(line.text)
    if not body:
        return {}
    body_size = body.most_common(1)[0][0]
    heads = [ln for ln in lines if ln.size >= body_size * HEADING_RATIO and _heading_shaped(ln.text)]
    if not heads or len(heads) > MAX_HEADING_SHARE * sum(1 for ln in lines if ln.text):
        return {}
    sizes = sorted({ln.size for ln in heads}, reverse=True)
    return {size: min(rank, 6) for rank, size in enumerate(sizes, 1)}


def _heading_shaped(text: str) -> bool:
    """Short and wordy: a large page number or a long banner line is not a heading."""
    return 0 < len(text) <= MAX_HEADING_CHARS and any(ch.isalpha() for ch in text)


def _page_blocks(lines: list[_Line], levels: dict[float, int]) -> list[tuple[str, list[str], int]]:
    """Group lines into (kind, lines, level): headings by size; paragraphs split at gaps."""
    gaps = [abs(a.y - b.y) for a, b in zip(lines, lines[1:]) if a.y is not None and b.y is not None]
    usual = median([g for g in gaps if g > 0] or [0.0])
    out: list[tuple[str, list[str], int]] = []
    prev: _Line | None = None
    for line in lines:
        level = levels.get(line.size, 0) if _heading_shaped(line.text) else 0
        kind = "heading" if level else "paragraph"
        if not line.text:
            prev = None
            continue
        gap = abs(prev.y - line.y) if prev and prev.y is not None and line.y is not None else 0.0
        same = out and prev is not None and out[-1][0] == kind and out[-1][2] == level
        if same and not (kind == "paragraph" and usual and gap > usual * PARAGRAPH_GAP):
            out[-1][1].append(line.text)
        else:
            out.append((kind, [line.text], level))
        prev = line
    return out


def _assemble(pages: list[list[_Line]], levels: dict[float, int]):
    """Pages joined by a blank line (a page_break block spans it); blocks within a page likewise."""
    parts: list[str] = []
    pos = 0
    blocks: list[Block] = []
    page_map: list[Page] = []

    def put(s: str) -> None:
        nonlocal pos
        parts.append(s)
        pos += len(s)

    for number, lines in enumerate(pages, 1):
        if number > 1:
            put("\n\n")
            blocks.append(Block("page_break", pos - 2, pos, meta={"page": number}))
        start = pos
        for i, (kind, body, level) in enumerate(_page_blocks(lines, levels)):
            if i:
                put("\n\n")
            a = pos
            put(" ".join(body) if kind == "heading" else "\n".join(body))  # a wrapped heading: one line
            blocks.append(Block(kind, a, pos, level, parts[-1] if kind == "heading" else "", {"page": number}))
        page_map.append(Page(number, start, pos, needs_ocr=pos == start))
    return "".join(parts), blocks, page_map


def _page_warnings(pages: list[Page]) -> list[str]:
    if not pages:
        return ["PDF has no pages"]
    return [f"page {p.number} has no text layer (needs OCR)" for p in pages if p.needs_ocr]


_CID = re.compile(r"\(cid:\d+\)")


def _artifact_warnings(text: str) -> list[str]:
    """Unmappable glyphs embed as noise: say how many there are so audit can flag the file."""
    out = []
    if cids := len(_CID.findall(text)):
        out.append(f"{cids} '(cid:N)' glyph artifacts (font without a Unicode map); that text is unreadable")
    if bad := text.count("\ufffd"):
        out.append(f"{bad} U+FFFD replacement characters (undecodable glyphs)")
    return out


def _metadata(pypdf, reader) -> dict:
    """Title and author from the info dictionary, only when present; a broken one loses no text."""
    try:
        info = reader.metadata
    except (pypdf.errors.PyPdfError, KeyError, ValueError, TypeError):
        return {}
    meta = {}
    for key, value in (("title", info and info.title), ("author", info and info.author)):
        if isinstance(value, str) and value.strip():
            meta[key] = value.strip()
    return meta
