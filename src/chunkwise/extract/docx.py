"""DOCX → Document with python-docx: headings from styles, paragraphs, list items, tables, in body order.

The body's child elements are walked directly (not ``doc.paragraphs`` then ``doc.tables``) so a table
stays between the paragraphs around it, and content controls (``w:sdt``) are entered rather than
skipped. Tables are rendered as pipe rows so chunkers can repeat the header row.
"""
from __future__ import annotations

import hashlib
import io
import re
import zipfile

from chunkwise.errors import DependencyError, InputError
from chunkwise.extract.builder import TextBuilder
from chunkwise.types import Document

MEDIA_TYPE = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
_W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
_HEADING_STYLE = re.compile(r"heading\s*([1-9])$", re.I)
_TRAILING_DIGIT = re.compile(r"\s(\d)$")
_WS = re.compile(r"\s+")


def extract(data: bytes, source: str) -> Document:
    """Extract one DOCX. Raises InputError for a file that is not a readable DOCX."""
    docx = _import_docx()
    doc = _open(docx, data, source)
    out = TextBuilder()
    styles = _Styles(doc)
    for el in _body_elements(doc.element.body):
        if el.tag == _W + "p":
            _paragraph(docx.text.paragraph.Paragraph(el, doc), out, styles)
        elif el.tag == _W + "tbl":
            _table(docx.table.Table(el, doc), out)
    return Document(
        doc_id=source, source=source, media_type=MEDIA_TYPE, text=out.value(), blocks=tuple(out.blocks),
        metadata=_metadata(doc), sha256=hashlib.sha256(data).hexdigest(),
        warnings=() if out.pos else ("document has no text",),
    )


def _import_docx():
    try:
        import docx
        import docx.table
        import docx.text.paragraph
    except ImportError as exc:  # an optional extra: say how to get it
        raise DependencyError("DOCX extraction needs python-docx: pip install 'chunkwise[docx]'") from exc
    return docx


def _open(docx, data: bytes, source: str):
    from docx.opc.exceptions import PackageNotFoundError
    from lxml.etree import XMLSyntaxError

    try:
        return docx.Document(io.BytesIO(data))
    except (PackageNotFoundError, zipfile.BadZipFile, zipfile.LargeZipFile, KeyError, ValueError,
            XMLSyntaxError, EOFError) as exc:
        raise InputError(f"{source}: not a readable DOCX ({exc or type(exc).__name__}); the file is corrupt, "
                         "truncated or another format (legacy .doc must be saved as .docx first)") from exc


def _body_elements(body):
    """Paragraphs and tables in document order, entering content controls; no recursion."""
    stack = list(reversed(body))
    while stack:
        el = stack.pop()
        if el.tag == _W + "sdt":
            content = el.find(_W + "sdtContent")
            stack.extend(reversed(content) if content is not None else ())
        elif el.tag in (_W + "p", _W + "tbl"):
            yield el


class _Styles:
    """Paragraph styles by id, looked up once: python-docx's ``Paragraph.style`` re-resolves the style
    part on every call, which made extraction quadratic-feeling on long documents."""

    def __init__(self, doc) -> None:
        from docx.enum.style import WD_STYLE_TYPE

        self.by_id = {}
        for style in doc.styles:
            if style.type == WD_STYLE_TYPE.PARAGRAPH:
                self.by_id[style.style_id] = style
        try:
            self.default = doc.styles.default(WD_STYLE_TYPE.PARAGRAPH)
        except (KeyError, ValueError):
            self.default = None

    def of(self, p):
        sid = p._p.style
        return self.by_id.get(sid, self.default) if sid else self.default


def _paragraph(p, out: TextBuilder, styles: _Styles) -> None:
    if p._p.find(f".//{_W}br[@{_W}type='page']") is not None:
        out.mark("page_break")
    text = "\n".join(line.strip() for line in _paragraph_text(p).splitlines() if line.strip())
    if not text:
        return
    style_obj = styles.of(p)
    style = (style_obj.name or "") if style_obj is not None else ""
    level = _heading_level(p, style, style_obj)
    if level:
        title = _WS.sub(" ", text)
        out.block("heading", title, level, title)
    elif _is_list_item(p, style):
        out.block("list_item", text, _list_level(p, style), meta={"style": style})
    else:
        out.block("paragraph", text)


_RUNS = (".//w:r[not(ancestor::w:del) and not(ancestor::w:txbxContent)"
         " and not(ancestor::*[local-name()='Fallback'])]")


def _paragraph_text(p) -> str:
    """Runs at any depth: ``Paragraph.text`` skips tracked insertions, fields and inline controls.
    Deleted text and text boxes (drawn apart from the flow, duplicated in a VML fallback) stay out."""
    return "".join(r.text for r in p._p.xpath(_RUNS))


def _heading_level(p, style: str, style_obj=None) -> int:
    """Heading N / Title from the style name, else an explicit outline level (custom heading styles)."""
    if style == "Title":
        return 1
    if m := _HEADING_STYLE.match(style):
        return min(int(m.group(1)), 6)
    for el in (p._p, getattr(style_obj, "element", None)):
        lvl = el.find(f"{_W}pPr/{_W}outlineLvl") if el is not None else None
        if lvl is not None and (val := lvl.get(_W + "val", "")).isdigit() and int(val) < 9:
            return min(int(val) + 1, 6)
    return 0


def _num_pr(p):
    return p._p.find(f"{_W}pPr/{_W}numPr")


def _is_list_item(p, style: str) -> bool:
    by_style = style.startswith("List") and not style.startswith("List Continue")
    num = _num_pr(p)
    num_id = num.find(_W + "numId") if num is not None else None
    return by_style or (num_id is not None and num_id.get(_W + "val") not in (None, "0"))


def _list_level(p, style: str) -> int:
    """Nesting depth from 1: numbering ilvl when present, else the style's number ("List Bullet 2")."""
    num = _num_pr(p)
    ilvl = num.find(_W + "ilvl") if num is not None else None
    if ilvl is not None and (val := ilvl.get(_W + "val", "")).isdigit():
        return int(val) + 1
    m = _TRAILING_DIGIT.search(style)
    return int(m.group(1)) if m else 1


def _table(table, out: TextBuilder) -> None:
    out.table([_cells(row) for row in table.rows])


def _cells(row) -> list[str]:
    """Cell texts; a horizontally merged cell, which python-docx repeats per grid column, is kept once."""
    out, prev = [], None
    for cell in row.cells:
        if cell._tc is not prev:
            out.append(_WS.sub(" ", cell.text).strip())
        prev = cell._tc
    return out


def _metadata(doc) -> dict:
    """Title, author, language and modification time (ISO) from the core properties, when present."""
    props = doc.core_properties
    meta = {}
    for key, value in (("title", props.title), ("author", props.author), ("language", props.language)):
        if value and value.strip():
            meta[key] = value.strip()
    try:
        modified = props.modified
    except ValueError:  # a malformed date in docProps/core.xml loses only the date
        modified = None
    if modified:
        meta["updated_at"] = modified.isoformat()
    return meta
