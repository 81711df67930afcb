"""PDF → Document with pypdf (BSD; PyMuPDF is AGPL): text per page, a page map, layout.

Lines come from ``pdf_lines`` (upright text only, so margin stamps drop out; two columns read left
then right), headings from ``pdf_headings`` (the outline when the PDF has one, else font
statistics that ignore running heads and figure text; a heading's word breaks from pdfplumber's
word boxes where it read the page), tables from ``pdf_tables`` (pdfplumber, only on pages that draw
rules or whose lines end in figures or dot leaders; unruled ones by ``pdf_aligned``) as pipe rows. A paragraph keeps its lines, except that a
word hyphenated at a line end is whole again (``join_lines``). Every page records its printed label
("iv") beside its physical number. Pages without a usable text layer are OCR'd (``ocr``), else
flagged ``needs_ocr``. Text drawn invisible among visible text is read, and is a page warning.
"""
from __future__ import annotations

import contextlib
import io
import re
from statistics import median
from typing import NamedTuple

from chunkwise import ids
from chunkwise.errors import DependencyError, InputError
from chunkwise.extract.builder import pipe_table
from chunkwise.extract.ocr import LOW_CONFIDENCE, MIN_CONFIDENCE, PAGE_TIMEOUT, missing, ocr_pages, usable
from chunkwise.extract.pdf_aligned import candidate as aligned_candidate
from chunkwise.extract.pdf_headings import font_headings, outline_entries, outline_headings, respace
from chunkwise.extract.pdf_lines import Line, page_lines, union
from chunkwise.extract.pdf_tables import MIN_RULES, Table, find_tables, inside, page_tables, within_bounds
from chunkwise.types import Block, Document, Page

MEDIA_TYPE = "application/pdf"
PARAGRAPH_GAP = 1.4  # a line gap this much larger than the page's usual gap starts a paragraph
WRAP_SIZE = 0.15  # heading lines this close in size, one under the other, are one wrapped heading
SCAN_LAYER = 0.9  # a page with at least this share of its text invisible is a scan with an OCR layer
# A page raising one of these is left empty (ArithmeticError: a division by zero, or numbers past float
# range in pypdf's own arithmetic on a hostile page: OverflowError), never the whole file
_PAGE_ERRORS = (KeyError, ValueError, TypeError, AttributeError, IndexError, ArithmeticError, RecursionError)


def extract(data: bytes, source: str, ocr: bool = True, ocr_min_confidence: float = MIN_CONFIDENCE,
            ocr_timeout: float = PAGE_TIMEOUT) -> Document:
    """Extract one PDF. Raises InputError for an unreadable file, never a pypdf traceback. Pages
    without a usable text layer are OCR'd when ``ocr`` and the ``ocr`` extra is installed; a page
    whose mean confidence is under ``ocr_min_confidence`` is marked for review."""
    pypdf = _import_pypdf()
    reader = _open(pypdf, data, source)
    whole = _scan(pypdf, reader, source, 0, None)
    return _document(pypdf, reader, data, source, [whole], ocr, ocr_min_confidence, ocr_timeout, None)


class Scan(NamedTuple):
    """The per-page first pass over pages ``start`` to ``start + len(pages) - 1`` (0-based): each
    page's lines, drawn rules and top edge, and, speculatively, the tables of the pages there that
    may be table pages (``pdf_tables.PageTables``; the document-wide bounds pick among them). Why:
    this pass is nearly all of a big PDF's cost and no page's result depends on another page, so
    page ranges are scanned in separate workers and ``assemble`` gives exactly the Document one
    scan of every page gives."""

    start: int
    count: int  # pages in the document
    pages: list
    rules: list
    tops: list
    failed: list
    warnings: list
    tables: dict
    heard: tuple = ((), ())  # what the parsers logged and warned meanwhile (``capture.captured_parts``)


def page_count(data: bytes, source: str) -> int:
    """The number of pages (raises InputError for an unreadable file)."""
    from chunkwise.extract.capture import captured_parts

    pypdf = _import_pypdf()
    with captured_parts():  # parser noise kept off stderr: the extraction that follows reports it
        return len(_pages(pypdf, _open(pypdf, data, source), source))


def scan(data: bytes, source: str, first: int = 0, last: int | None = None) -> Scan:
    """The first pass over pages ``first`` to ``last - 1`` (0-based; None: to the end), in a
    process of its own: the parser messages of its pages are kept (``Scan.heard``; those of opening
    the file are the assembler's), and the tables of the pages that may hold some are found as
    ``find_tables`` would (within the range's own bounds: every page the document's bounds choose is
    among them)."""
    from chunkwise.extract.capture import captured_parts

    pypdf = _import_pypdf()
    with captured_parts():  # opening the file: ``assemble`` opens it too and hears the same
        reader = _open(pypdf, data, source)
    with captured_parts() as heard:
        part = _scan(pypdf, reader, source, first, last)
    work = {first + i: w for i, w in _table_work(part.pages, part.rules).items() if usable(part.pages[i])}
    found = page_tables(data, within_bounds(work, []), {i: w[0] for i, w in work.items()})
    return part._replace(tables=found, heard=heard.lines())


def _scan(pypdf, reader, source: str, first: int, last: int | None) -> Scan:
    numbered = _pages(pypdf, reader, source)
    warnings: list[str] = []
    pages, rules, tops, failed = [], [], [], []
    for n, page in numbered[first:last]:
        lines, ruled, top = _page_lines(pypdf, page, n, warnings, failed)
        pages.append(lines)
        rules.append(ruled)
        tops.append(top)
    return Scan(first, len(numbered), pages, rules, tops, failed, warnings, {})


def _table_work(pages: list, rules: list) -> dict[int, tuple[int, int]]:
    """Pages that may hold tables (drawn rules or aligned lines) -> (rules, characters)."""
    return {i: (r, sum(len(line.text) for line in pages[i])) for i, r in enumerate(rules)
            if r >= MIN_RULES or aligned_candidate([line.text for line in pages[i]])}


def assemble(data: bytes, source: str, scans: list[Scan], ocr: bool = True,
             ocr_min_confidence: float = MIN_CONFIDENCE, ocr_timeout: float = PAGE_TIMEOUT, heard=None) -> Document:
    """The Document from ``scan``s of page ranges covering every page in order: exactly the one
    ``extract`` gives. ``heard``: a ``capture.Heard`` collecting this pass's parser messages; the
    scans' are put in it where one pass over every page would have heard them."""
    pypdf = _import_pypdf()
    reader = _open(pypdf, data, source)
    return _document(pypdf, reader, data, source, scans, ocr, ocr_min_confidence, ocr_timeout, heard)


def extract_scans(data: bytes, source: str, scans: list[Scan], options=None) -> Document:
    """``extract.extract_bytes`` of a PDF whose page ranges were scanned apart (``scan``, in other
    worker processes): the same Document, the parsers' messages included, as one pass gives.
    ``options``: an ``extract.ExtractOptions`` (OCR)."""
    from dataclasses import replace

    from chunkwise.extract.capture import captured_parts, summary

    kw = {} if options is None else {"ocr": options.ocr, "ocr_min_confidence": options.ocr_min_confidence}
    with captured_parts() as heard:
        try:
            doc = assemble(data, source, scans, heard=heard, **kw)
        except InputError as exc:
            said = summary(heard.all())
            if not said:
                raise
            more = f" (and {len(said) - 1} more)" if len(said) > 1 else ""
            raise InputError(f"{exc}; {said[0]}{more}") from exc
    said = summary(heard.all())
    return replace(doc, warnings=doc.warnings + tuple(said)) if said else doc


def _document(pypdf, reader, data: bytes, source: str, scans: list[Scan], ocr: bool, ocr_min_confidence: float,
              ocr_timeout: float, heard) -> Document:
    warnings: list[str] = []
    pages, rules, tops, failed = [], [], [], []
    for part in scans:
        if part.start != len(pages):
            raise ValueError(f"{source}: scans out of order (page {part.start + 1} after {len(pages)} pages)")
        pages += part.pages
        rules += part.rules
        tops += part.tops
        failed += part.failed
        warnings += part.warnings
        if heard is not None:
            heard.add(part.heard)
    if scans and len(pages) != scans[0].count:
        raise ValueError(f"{source}: scans cover {len(pages)} of {scans[0].count} pages")
    if pages and len(failed) == len(pages):  # every page failed: the file, not a page, is broken
        raise InputError(f"{source}: no page of this PDF could be read ({warnings[-1]}); the file is "
                         "corrupt or truncated — download or export it again")
    read = _ocr(data, pages, warnings, ocr_timeout) if ocr else {}
    for i, result in read.items():
        pages[i], rules[i] = result.lines, 0
    known = {i: t for part in scans for i, t in part.tables.items() if i not in read}
    words: dict[int, list[tuple[float, float, str]]] = {}
    tables = find_tables(data, _table_work(pages, rules), warnings, words, known=known,
                         heard=heard.add if heard is not None else None)
    levels = _levels(pypdf, reader, pages)
    for i, found in words.items():
        pages[i] = [_respaced(line, found, tops[i]) if level else line for line, level in zip(pages[i], levels[i])]
    items = [_with_tables(list(zip(lines, levels[i])), tables.get(i, []), tops[i]) for i, lines in enumerate(pages)]
    gate = {i: (r.confidence, r.confidence < ocr_min_confidence) for i, r in read.items()}
    text, blocks, page_map = _assemble(items, _labels(pypdf, reader, len(pages)), gate, tops)
    warnings += _page_warnings(page_map) + _artifact_warnings(text)
    return Document(
        doc_id=source, source=source, media_type=MEDIA_TYPE, text=text, blocks=tuple(blocks),
        pages=tuple(page_map), metadata=_metadata(pypdf, reader), sha256=ids.bytes_sha256(data),
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


def _page_lines(pypdf, page, number: int, warnings: list[str], failed: list[int]) -> tuple[list[Line], int, float]:
    """The page's lines, its count of drawn rules and its top edge; a broken page is left empty (and
    its number put in ``failed``)."""
    drawn: dict = {}
    try:
        box = page.mediabox
        width, top = float(box.width), float(box.top)
        lines, rules = page_lines(pypdf, page, width, drawn)
    except (pypdf.errors.PyPdfError, *_PAGE_ERRORS) as exc:
        warnings.append(f"page {number}: text extraction failed ({exc}); page left empty, as if scanned")
        failed.append(number)
        return [], 0, 0.0
    hidden, chars = drawn.get("hidden", 0), drawn.get("chars", 0)
    if hidden and hidden < chars * SCAN_LAYER:  # all of a page invisible is a scan's OCR layer: fine
        warnings.append(f"page {number}: {hidden} of its {chars} characters are drawn invisible (text render "
                        "mode 3) yet read as text: words nobody sees on the page, a way to slip instructions "
                        "to a model; check the page with `chunkwise extract FILE`")
    return lines, rules, top


def _respaced(line: Line, words: list[tuple[float, float, str]], top: float) -> Line:
    """A heading line with the word breaks that the page's word boxes show: pypdf glues a fragment
    drawn back to the left of the text before it ("들어가며" + a section number on a badge →
    "들어가며1"). Only on pages pdfplumber read anyway, for tables."""
    if line.y is None:
        return line
    base = top - line.y
    row = [text for a, b, text in words if a - 2.0 <= base <= b + 2.0]
    return line._replace(text=respace(line.text, row))


def _with_tables(lines: list[tuple[Line, int]], tables: list[Table], top: float) -> list:
    """The page's (line, heading level) pairs with each table's lines replaced by the table, where
    its first line was."""
    if not tables:
        return lines
    out: list = []
    placed: set[int] = set()
    for line, level in lines:
        hit = next((i for i, t in enumerate(tables) if inside(t, line.x, line.y, top)), None)
        if hit is None:
            out.append((line, level))
        elif hit not in placed:
            placed.add(hit)
            out.append(tables[hit])
    return out


def _ocr(data: bytes, pages: list[list[Line]], warnings: list[str], timeout: float) -> dict:
    """OCR results for the pages without a usable text layer (never for a page that has one)."""
    wanted = [i for i, lines in enumerate(pages) if not usable(lines)]
    if not wanted:
        return {}
    if why := missing():
        warnings.append(f"{len(wanted)} page(s) without a text layer not OCR'd: {why}")
        return {}
    read = ocr_pages(data, wanted, warnings, timeout=timeout)
    return {i: r for i, r in read.items() if usable(r.lines)}


def _levels(pypdf, reader, pages: list[list[Line]]):
    """Per page, the heading level of each line: from the outline when it names headings found on
    their pages, else from font statistics."""
    entries = outline_entries(pypdf, reader)
    if entries:
        by_page: dict[int, list[tuple[str, int]]] = {}
        for title, index, level in entries:
            by_page.setdefault(index, []).append((title, level))
        levels = [outline_headings(lines, by_page.get(i, [])) for i, lines in enumerate(pages)]
        if any(any(page) for page in levels):
            return levels
    return font_headings(pages)


def _labels(pypdf, reader, count: int) -> list[str]:
    """Printed page labels, or "" for every page when the PDF defines none (or a broken tree)."""
    try:
        if "/PageLabels" not in reader.trailer["/Root"]:
            return [""] * count
        labels = list(reader.page_labels)
    except (pypdf.errors.PyPdfError, *_PAGE_ERRORS):
        return [""] * count
    return (labels + [""] * count)[:count]


def _page_blocks(items: list) -> list[tuple[str, object, int, list]]:
    """Group (line, level) pairs into (kind, lines or table, level, line boxes): headings, paragraphs
    split at gaps, tables."""
    lines = [x[0] for x in items if not isinstance(x, Table)]
    gaps = [abs(a.y - b.y) for a, b in zip(lines, lines[1:]) if a.y is not None and b.y is not None]
    usual = median([g for g in gaps if g > 0] or [0.0])
    out: list[tuple[str, object, int, list]] = []
    prev: Line | None = None
    for entry in items:
        if isinstance(entry, Table):
            out.append(("table", entry, 0, []))
            prev = None
            continue
        item, level = entry
        kind = "heading" if level else "paragraph"
        if not item.text:
            prev = None
            continue
        gap = abs(prev.y - item.y) if prev and prev.y is not None and item.y is not None else 0.0
        same = out and prev is not None and out[-1][0] == kind and (out[-1][2] == level or _wrapped_heading(prev, item, level))
        if same and not (kind == "paragraph" and usual and gap > usual * PARAGRAPH_GAP):
            out[-1][1].append(item.text)
            out[-1][3].append(item.box)
        else:
            out.append((kind, [item.text], level, [item.box]))
        prev = item
    return out


def _wrapped_heading(prev: Line, line: Line, level: int) -> bool:
    """A heading wrapped over two lines set a little smaller on the second (a cover's "Row and Column
    Access Control" 33 pt over "Support in IBM DB2 for i" 30 pt) is one heading: same left edge,
    sizes within ``WRAP_SIZE``, the next line no further than one and a half sizes below."""
    if not level or not prev.size or prev.x is None or line.x is None or prev.y is None or line.y is None:
        return False
    return (abs(prev.x - line.x) <= 1.0 and abs(prev.size - line.size) <= WRAP_SIZE * prev.size
            and 0 < prev.y - line.y <= 1.5 * prev.size)


def _assemble(pages: list[list], labels: list[str], ocr: dict[int, tuple[float, bool]], tops: list[float] | None = None):
    """Pages joined by a blank line (a page_break block spans it); blocks within a page likewise.
    Each block's ``meta["boxes"]``: its (page, x0, top, x1, bottom) in points from the page's top
    left (``tops``: each page's top edge in PDF space), when its lines' positions are known."""
    parts: list[str] = []
    pos = 0
    blocks: list[Block] = []
    page_map: list[Page] = []

    def put(s: str) -> None:
        nonlocal pos
        parts.append(s)
        pos += len(s)

    for number, items in enumerate(pages, 1):
        if number > 1:
            put("\n\n")
            blocks.append(Block("page_break", pos - 2, pos, meta={"page": number}))
        start = pos
        confidence, low = ocr.get(number - 1, (None, False))
        base = {"page": number} if confidence is None else {"page": number, "ocr": True}
        top = tops[number - 1] if tops and number - 1 < len(tops) else None
        for i, (kind, body, level, boxes) in enumerate(_page_blocks(items)):
            if i:
                put("\n\n")
            a = pos
            if kind == "table":
                table, header, spans = pipe_table(body.rows)
                put(table)
                where = _boxed(number, (body.x0, body.top, body.x1, body.bottom))
                blocks.append(Block("table", a, pos, meta={**base, "header": header, **where,
                                                           "rows": [(a + s, a + e) for s, e in spans]}))
                continue
            put(" ".join(body) if kind == "heading" else join_lines(body))  # a wrapped heading: one line
            box = union(boxes) if top is not None else None
            where = _boxed(number, (box[0], top - box[3], box[2], top - box[1])) if box else {}
            blocks.append(Block(kind, a, pos, level, parts[-1] if kind == "heading" else "", {**base, **where}))
        label = labels[number - 1] if number - 1 < len(labels) else ""
        page_map.append(Page(number, start, pos, needs_ocr=pos == start, label=label, ocr_confidence=confidence,
                             review_reason=LOW_CONFIDENCE if low else ""))
    return "".join(parts), blocks, page_map


def _boxed(number: int, box: tuple[float, float, float, float]) -> dict:
    """``{"boxes": ((page, x0, top, x1, bottom),)}``, in points from the page's top left, to 0.1."""
    return {"boxes": ((number, *(round(float(v), 1) for v in box)),)}


_HYPHENATED = re.compile(r"[^\W\d_]{2}-$")


def join_lines(lines: list[str]) -> str:
    """A paragraph's lines, one a line, except a word hyphenated at a line end, which is whole again
    ("eir-" + "mod tempor" -> "eirmod tempor"), so it can be searched and matched; a compound
    ("state-of-the-" + "art") keeps its hyphen. Only before a lower-case continuation: "Anglo-" +
    "Saxon" and list dashes stay as they are."""
    out: list[str] = []
    for line in lines:
        if out and _HYPHENATED.search(out[-1]) and line[:1].islower():
            head = out[-1]
            word = head.rsplit(None, 1)[-1]
            out[-1] = head + line if "-" in word[:-1] else head[:-1] + line
        else:
            out.append(line)
    return "\n".join(out)


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
