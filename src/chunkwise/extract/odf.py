"""OpenDocument text (.odt) and spreadsheets (.ods) -> Document, from ``content.xml`` with lxml (the zip
checked against ``ooxml``'s limits first; no DTDs, entities or network).

ODT: headings (``text:h`` with their outline level), paragraphs, nested list items, tables as pipe
rows, sections and frames entered; notes as their own block after the paragraph that cites them
(``meta["role"]`` "footnote"/"endnote"); tracked deletions left out.
ODS: as XLSX (``sheets``): each sheet a section, its tables with the header row, cells as the
spreadsheet displays them (ODF stores the displayed text beside the value). Repeated rows and
columns (``number-rows-repeated``: a sheet often ends with a million "repeated" empty rows) are
expanded only while they hold text, and at most ``MAX_REPEAT`` times.
"""
from __future__ import annotations

from chunkwise import ids
from chunkwise.extract.builder import TextBuilder
from chunkwise.extract.ooxml import corrupt, open_package
from chunkwise.extract.sheets import Sheets
from chunkwise.types import Document

ODT = "application/vnd.oasis.opendocument.text"
ODS = "application/vnd.oasis.opendocument.spreadsheet"
T = "{urn:oasis:names:tc:opendocument:xmlns:text:1.0}"
TB = "{urn:oasis:names:tc:opendocument:xmlns:table:1.0}"
O = "{urn:oasis:names:tc:opendocument:xmlns:office:1.0}"
DRAW = "{urn:oasis:names:tc:opendocument:xmlns:drawing:1.0}"
DC = "{http://purl.org/dc/elements/1.1/}"
MAX_REPEAT = 1_000
_SKIP = frozenset({T + "tracked-changes", T + "note", T + "sequence-decls", O + "annotation", T + "soft-page-break",
                   T + "bookmark-ref", TB + "table"})


def extract(data: bytes, source: str, media_type: str = ODT) -> Document:
    kind = "ODS" if media_type == ODS else "ODT"
    pkg = open_package(data, source, kind)
    root = pkg.xml("content.xml")
    body = root.find(O + "body") if root is not None else None
    if body is None:
        raise corrupt(source, ValueError("no content.xml body"), kind)
    meta = _metadata(pkg)
    if kind == "ODS":
        sheets = Sheets(source)
        for table in body.iter(TB + "table"):
            sheets.sheet(table.get(TB + "name", ""), _rows(table))
        return sheets.document(data, ODS, meta)
    walker = _Text()
    for part in body:
        walker.walk(part)
    out = walker.out
    warnings = [] if out.pos else ["document has no text"]
    return Document(doc_id=source, source=source, media_type=ODT, text=out.value(), blocks=tuple(out.blocks),
                    metadata=meta, sha256=ids.bytes_sha256(data), warnings=tuple(warnings))


class _Text:
    def __init__(self) -> None:
        self.out = TextBuilder()

    def walk(self, el, list_level: int = 0) -> None:
        for child in el:
            tag = child.tag if isinstance(child.tag, str) else ""
            if tag == T + "h":
                text = inline(child)
                if text:
                    level = child.get(T + "outline-level", "1")
                    self.out.block("heading", text, min(int(level) if level.isdigit() else 1, 6) or 1, text)
                self._notes(child)
            elif tag == T + "p":
                text = inline(child)
                if text:
                    if list_level:
                        self.out.block("list_item", text, list_level)
                    else:
                        self.out.block("paragraph", text)
                self._frames(child)
                self._notes(child)
            elif tag == T + "list":
                self.walk(child, list_level + 1)
            elif tag == TB + "table":
                self.out.table([[" ".join(inline(p) for p in cell.iter(T + "p", T + "h")).strip() for cell in row]
                                for row in _table_rows(child)])
            elif tag in _SKIP:
                continue
            else:  # sections, list items, frames, text boxes, index bodies
                self.walk(child, list_level)

    def _frames(self, p) -> None:
        for box in p.iter(DRAW + "text-box"):
            self.walk(box)

    def _notes(self, p) -> None:
        for note in p.iter(T + "note"):
            cite = note.find(T + "note-citation")
            body = note.find(T + "note-body")
            text = " ".join(inline(x) for x in body.iter(T + "p")) if body is not None else ""
            if text.strip():
                mark = (cite.text or "").strip() if cite is not None else ""
                role = "endnote" if note.get(T + "note-class") == "endnote" else "footnote"
                self.out.block("paragraph", f"[^{mark}]: {text.strip()}", meta={"role": role})


def inline(el) -> str:
    """The visible text of a paragraph: spans and links entered, ``text:s`` spaces, tabs and line
    breaks expanded, notes, frames and annotations left for their own blocks."""
    parts: list[str] = []

    def visit(node) -> None:
        if node.text:
            parts.append(node.text)
        for child in node:
            tag = child.tag if isinstance(child.tag, str) else ""
            if tag == T + "s":
                c = child.get(T + "c", "1")
                parts.append(" " * min(int(c) if c.isdigit() else 1, 100))
            elif tag == T + "tab":
                parts.append("\t")
            elif tag == T + "line-break":
                parts.append("\n")
            elif tag not in _SKIP and tag not in (DRAW + "frame", T + "deletion"):
                visit(child)
            if child.tail:
                parts.append(child.tail)

    visit(el)
    return "".join(parts).strip()


def _table_rows(table):
    for row in table.iter(TB + "table-row"):
        yield [c for c in row if c.tag in (TB + "table-cell", TB + "covered-table-cell")]


def _rows(table):
    """Displayed cell text per row, repeats expanded while they hold text."""
    for row in table.iter(TB + "table-row"):
        cells: list[str] = []
        for cell in row:
            if cell.tag not in (TB + "table-cell", TB + "covered-table-cell"):
                continue
            text = "\n".join(inline(p) for p in cell.iter(T + "p"))
            repeat = _count(cell.get(TB + "number-columns-repeated"))
            cells.extend([text] * (min(repeat, MAX_REPEAT) if text else min(repeat, 1)))
        repeat = _count(row.get(TB + "number-rows-repeated"))
        for _ in range(min(repeat, MAX_REPEAT) if any(cells) else 1):
            yield cells


def _count(value: str | None) -> int:
    return int(value) if value and value.isdigit() else 1


def _metadata(pkg) -> dict:
    meta_root = pkg.xml("meta.xml") if "meta.xml" in pkg.names else None
    if meta_root is None:
        return {}
    title = next((el.text.strip() for el in meta_root.iter(DC + "title") if (el.text or "").strip()), "")
    return {"title": title} if title else {}
