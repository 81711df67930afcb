"""DOCX → Document, read straight from the package XML with lxml (see ``ooxml``: zip limits checked
before inflating, Strict OOXML mapped, external parts never fetched).

What comes out, in body order: headings (Title, "heading N" styles, outline levels through the
style chain), paragraphs, nested list items, tables as pipe rows (a merged cell repeated in every column
and row it covers, so columns stay aligned and each row reads alone), content controls entered.
Beside the flow, each once and next to where it belongs:

- footnotes and endnotes: a marker at the reference (``[^1]``, ``[^e1]``) and the note as its own
  block (``[^1]: text``, ``meta["role"]`` = "footnote"/"endnote") right after the paragraph or table
  that refers to it; notes nobody refers to follow the body;
- text boxes (drawn apart from the flow; their VML fallback copy skipped): their paragraphs as blocks
  after the anchoring paragraph (``role`` "textbox");
- headers and footers: once per section that introduces them (the first/default/even variants, and
  a later section that repeats the same text, add nothing), headers before the section's body and
  footers after it (``role`` "header"/"footer");
- comments, only when asked (``comments=True``): "Comment (author): text" after the paragraph;
- charts: a caption (title, else kind) and a table of the cached data (``extract/docx_chart.py``),
  after the anchoring paragraph (``role`` "chart");
- check boxes (Word 2010 content controls) as ``[x]`` / ``[ ]`` from their state, whatever glyph
  and font draw them;
- equations (Office Math) as linear text in place (``extract/omml.py``), and a table nested in a
  cell kept in that cell, marked: ``[table: a | b ; c | d]``.

Dropped: tracked deletions and moves away, field codes, hidden (``w:vanish``) runs, which a reader
never sees and which would carry text into an index unseen.
"""
from __future__ import annotations

import re
from datetime import datetime

from chunkwise import ids
from chunkwise.errors import InputError
from chunkwise.extract import docx_chart
from chunkwise.extract.builder import TextBuilder
from chunkwise.extract.docx_numbering import Numbering
from chunkwise.extract.omml import is_math, linear
from chunkwise.extract.ooxml import W_NS, Package, corrupt, open_package
from chunkwise.types import Document

MEDIA_TYPE = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
W = "{%s}" % W_NS
_R_ID = "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}id"
_MC = "{http://schemas.openxmlformats.org/markup-compatibility/2006}"
W14 = "{http://schemas.microsoft.com/office/word/2010/wordml}"
_HEADING_STYLE = re.compile(r"heading\s*([1-9])$", re.I)
_TRAILING_DIGIT = re.compile(r"\s(\d)$")
_WS = re.compile(r"\s+")
_OFF = ("0", "false", "off", "none")
_SKIP = frozenset({W + "del", W + "moveFrom", W + "delText", W + "instrText", W + "pPr", W + "rPr",
                   W + "footnoteRef", W + "endnoteRef", W + "annotationRef", _MC + "Fallback"})
_NOTE_KINDS = {W + "footnoteReference": "footnote", W + "endnoteReference": "endnote"}
_MAX_SPAN = 64


def extract(data: bytes, source: str, comments: bool = False) -> Document:
    """Extract one DOCX. Raises InputError for a file that is not a readable DOCX (or over a limit)."""
    pkg = open_package(data, source)
    main = _main_part(pkg)
    root = pkg.xml(main)
    body = root.find(W + "body") if root is not None else None
    if body is None:
        raise corrupt(source, ValueError(f"no document body in {main or 'the package'}"))
    walker = _Walker(pkg, main, comments)
    walker.document(body)
    out = walker.out
    warnings = list(dict.fromkeys(pkg.warnings + walker.warnings))
    if pkg.strict:
        warnings.append("Strict OOXML: read with its namespaces mapped to the transitional ones")
    if walker.hidden:
        warnings.append(f"{walker.hidden} characters of hidden text (Word's hidden font setting) left out: "
                        "nobody reading the document sees them, and they can carry instructions to a model")
    if not out.pos:
        warnings.append("document has no text")
    return Document(
        doc_id=source, source=source, media_type=MEDIA_TYPE, text=out.value(), blocks=tuple(out.blocks),
        metadata=_metadata(pkg), sha256=ids.bytes_sha256(data), warnings=tuple(warnings),
    )


def _main_part(pkg: Package) -> str:
    """The officeDocument relationship's target (whatever its name); else the usual name."""
    target = pkg.related("", "officeDocument")
    if target in pkg.names:
        return target
    return "word/document.xml" if "word/document.xml" in pkg.names else ""


def _on(el) -> bool:
    return el is not None and el.get(W + "val", "1").lower() not in _OFF


def _on14(el) -> bool:
    """A Word 2010 on/off property (``w14:checked w14:val="1"``); absent is off."""
    return el is not None and el.get(W14 + "val", "1").lower() not in _OFF


def _val(el, tag: str) -> str | None:
    found = el.find(tag) if el is not None else None
    return found.get(W + "val") if found is not None else None


class _Styles:
    """Paragraph styles by id: name, base style, outline level and numbering, read once."""

    def __init__(self, root) -> None:
        self.name: dict[str, str] = {}
        self.base: dict[str, str] = {}
        self.outline: dict[str, str] = {}
        self.numbered: set[str] = set()
        self.default = ""
        for st in root.iter(W + "style") if root is not None else ():
            sid = st.get(W + "styleId")
            if st.get(W + "type", "paragraph") != "paragraph" or not sid:
                continue
            self.name[sid] = _val(st, W + "name") or sid
            if base := _val(st, W + "basedOn"):
                self.base[sid] = base
            if (lvl := _val(st.find(W + "pPr"), W + "outlineLvl")) is not None:
                self.outline[sid] = lvl
            if _val(st.find(f"{W}pPr/{W}numPr"), W + "numId") not in (None, "0"):
                self.numbered.add(sid)
            if not self.default and st.get(W + "default", "").lower() in ("1", "true", "on"):
                self.default = sid

    def chain(self, sid: str):
        """The style and its ancestors, cycle-safe."""
        seen = set()
        while sid and sid not in seen and len(seen) < 16:
            seen.add(sid)
            yield sid
            sid = self.base.get(sid, "")


class _Walker:
    def __init__(self, pkg: Package, main: str, comments: bool) -> None:
        self.pkg, self.main, self.out = pkg, main, TextBuilder()
        self.rels = pkg.rels(main)
        styles = self._part("styles")
        self.styles = _Styles(styles)
        self.numbering = Numbering(self._part("numbering"), styles)
        self.notes = {kind: self._items(self._part(kind + "s"), kind) for kind in ("footnote", "endnote")}
        self.comments = self._items(self._part("comments"), "comment") if comments else {}
        self.numbers: dict[tuple[str, str], int] = {}
        self.pending: list[tuple[str, str]] = []
        self.emitted: set[str] = set()  # header/footer texts already written
        self.warnings: list[str] = []
        self.in_note = False
        self.hidden = 0  # characters of hidden (w:vanish) runs left out

    def _part(self, kind: str):
        target = self.pkg.related(self.main, kind)
        return self.pkg.xml(target) if target else None

    @staticmethod
    def _items(root, kind: str) -> dict[str, object]:
        out = {}
        for el in root.iter(W + kind) if root is not None else ():
            if el.get(W + "type", "normal") in ("normal", "") and el.get(W + "id") is not None:
                out[el.get(W + "id")] = el
        return out

    # -- the document --------------------------------------------------------------------------
    def document(self, body) -> None:
        for elements, sect in _sections(body):
            self._furniture(sect, "header")
            for el in elements:
                self.block(el)
            self._furniture(sect, "footer")
        # notes (and asked-for comments) nobody refers to are still text of the document
        for kind, items in (("footnote", self.notes["footnote"]), ("endnote", self.notes["endnote"]),
                            ("comment", self.comments)):
            for nid in items:
                if (kind, nid) not in self.numbers:
                    self._note(kind, nid)

    def block(self, el, role: str = "") -> None:
        if el.tag == W + "p":
            self.paragraph(el, role)
        elif el.tag == W + "tbl":
            self.table(el, role)

    def blocks(self, container, role: str) -> None:
        for el in _flat(container):
            self.block(el, role)

    def _furniture(self, sect, kind: str) -> None:
        if sect is None:
            return
        refs = {r.get(W + "type", "default"): r.get(_R_ID) for r in sect.iter(f"{W}{kind}Reference")}
        for variant in ("first", "default", "even"):
            rel = self.rels.get(refs.get(variant) or "")
            if rel is None or rel.external or rel.target in self.emitted:
                continue
            self.emitted.add(rel.target)
            root = self.pkg.xml(rel.target)
            if root is None:
                continue
            text = " ".join(_WS.sub(" ", "".join(root.itertext())).split())
            if text and text not in self.emitted:
                self.emitted.add(text)
                self.blocks(root, kind)

    # -- paragraphs ----------------------------------------------------------------------------
    def paragraph(self, p, role: str = "") -> None:
        ppr = p.find(W + "pPr")
        if ppr is not None and _on(ppr.find(W + "pageBreakBefore")) or p.find(f".//{W}br[@{W}type='page']") is not None:
            self.out.mark("page_break")
        raw, boxes = self.inline(p)
        text = "\n".join(line.strip() for line in raw.splitlines() if line.strip())
        sid = _val(ppr, W + "pStyle") or self.styles.default
        if text:
            text = self._numbered(ppr, sid, text)
            style = self.styles.name.get(sid, sid or "")
            meta = {"role": role} if role else {}
            level = 0 if role else self._heading_level(ppr, sid, style)
            if level:
                title = _WS.sub(" ", text)
                self.out.block("heading", title, level, title)
            elif self._is_list_item(ppr, sid, style):
                self.out.block("list_item", text, self._list_level(ppr, style), meta={"style": style, **meta})
            else:
                self.out.block("paragraph", text, meta=meta)
        self.after(boxes)

    def _numbered(self, ppr, sid: str, text: str) -> str:
        """``text`` behind its list or heading number, when numbering.xml gives it one."""
        numbered = self.numbering.resolve(ppr, self.styles.chain(sid))
        label = self.numbering.label(*numbered) if numbered else ""
        return f"{label} {text}" if label else text

    def after(self, boxes) -> None:
        """What belongs right after a paragraph or table: its text boxes, then the notes it cites."""
        for box in boxes:
            if docx_chart.is_chart(box.tag):
                self._chart(box.get(_R_ID) or "")
            else:
                self.blocks(box, "textbox")
        pending, self.pending = self.pending, []
        for kind, nid in pending:
            self._note(kind, nid)

    def inline(self, el) -> tuple[str, list]:
        """Visible text of a paragraph (runs at any depth: insertions, fields, hyperlinks, controls),
        with note markers; the text boxes met, to be written after it."""
        parts: list[str] = []
        boxes: list = []
        stack = [iter(el)]
        while stack:
            node = next(stack[-1], None)
            if node is None:
                stack.pop()
                continue
            tag = node.tag
            if not isinstance(tag, str) or tag in _SKIP:
                continue
            if tag == W + "t":
                parts.append(node.text or "")
            elif tag == W + "r" and _on(node.find(f"{W}rPr/{W}vanish")):
                self.hidden += sum(len(t.text or "") for t in node.iter(W + "t"))
                continue  # hidden text
            elif tag == W + "sdt" and (box := node.find(f"{W}sdtPr/{W14}checkbox")) is not None:
                parts.append("[x]" if _on14(box.find(W14 + "checked")) else "[ ]")  # its state, not a glyph
            elif tag == W + "txbxContent" or docx_chart.is_chart(tag):
                boxes.append(node)  # a text box or a chart: its blocks follow the paragraph
            elif is_math(tag):  # an equation: linear text in place (extract/omml.py)
                parts.append(linear(node))
            elif tag == W + "tab":
                parts.append("\t")
            elif tag in (W + "br", W + "cr"):
                if node.get(W + "type") not in ("page", "column"):
                    parts.append("\n")
            elif tag == W + "noBreakHyphen":
                parts.append("-")
            elif tag in _NOTE_KINDS:
                parts.append(self._reference(_NOTE_KINDS[tag], node.get(W + "id", "")))
            elif tag == W + "commentReference" and not self.in_note:
                if (cid := node.get(W + "id", "")) in self.comments and ("comment", cid) not in self.numbers:
                    self.numbers[("comment", cid)] = len(self.numbers)
                    self.pending.append(("comment", cid))
            elif tag != W + "p":  # a paragraph inside a run is a text box's, reached through it
                stack.append(iter(node))
        return "".join(parts), boxes

    def _chart(self, rid: str) -> None:
        """A chart's caption and data table (``extract/docx_chart.py``), ``role`` "chart"."""
        rel = self.rels.get(rid)
        if rel is None or rel.external:
            return
        found = docx_chart.read(self.pkg.xml(rel.target))
        if found is None:
            return
        caption, rows = found
        if caption:
            self.out.block("paragraph", caption, meta={"role": "chart"})
        start = len(self.out.blocks)
        self.out.table(rows)
        if len(self.out.blocks) > start:
            self.out.blocks[-1].meta["role"] = "chart"

    def _reference(self, kind: str, nid: str) -> str:
        if self.in_note or nid not in self.notes[kind]:
            if not self.in_note:
                self.warnings.append(f"{kind} {nid} is referred to but missing from the file")
            return ""
        key = (kind, nid)
        if key not in self.numbers:
            self.numbers[key] = 1 + sum(1 for k, _ in self.numbers if k == kind)
            self.pending.append(key)
        return _marker(kind, self.numbers[key])

    def _note(self, kind: str, nid: str) -> None:
        if kind == "comment":
            el = self.comments[nid]
            label = f"Comment ({el.get(W + 'author') or 'unknown author'}): "
        else:
            el = self.notes[kind][nid]
            if (kind, nid) not in self.numbers:
                self.numbers[(kind, nid)] = 1 + sum(1 for k, _ in self.numbers if k == kind)
            label = _marker(kind, self.numbers[(kind, nid)]) + ": "
        self.in_note = True
        texts, boxes = [], []
        for p in el.iter(W + "p"):
            raw, found = self.inline(p)
            boxes += found
            if raw.strip():
                texts.append(_WS.sub(" ", raw).strip())
        self.in_note = False
        if texts:
            self.out.block("paragraph", label + "\n".join(texts), meta={"role": kind, "id": nid})

    def _heading_level(self, ppr, sid: str, style: str) -> int:
        """Heading N / Title from the style name, else an outline level (own, then the style chain)."""
        if style == "Title":
            return 1
        if m := _HEADING_STYLE.match(style):
            return min(int(m.group(1)), 6)
        lvl = _val(ppr, W + "outlineLvl")
        for s in self.styles.chain(sid):
            if lvl is not None:
                break
            lvl = self.styles.outline.get(s)
        return min(int(lvl) + 1, 6) if lvl is not None and lvl.isdigit() and int(lvl) < 9 else 0

    def _is_list_item(self, ppr, sid: str, style: str) -> bool:
        if style.startswith("List") and not style.startswith("List Continue"):
            return True
        num = _val(ppr.find(W + "numPr") if ppr is not None else None, W + "numId")
        if num is not None:
            return num != "0"
        return any(s in self.styles.numbered for s in self.styles.chain(sid))

    @staticmethod
    def _list_level(ppr, style: str) -> int:
        """Nesting depth from 1: numbering ilvl when present, else the style's number ("List Bullet 2")."""
        ilvl = _val(ppr.find(W + "numPr") if ppr is not None else None, W + "ilvl")
        if ilvl is not None and ilvl.isdigit():
            return min(int(ilvl), 8) + 1
        m = _TRAILING_DIGIT.search(style)
        return int(m.group(1)) if m else 1

    # -- tables --------------------------------------------------------------------------------
    def table(self, tbl, role: str = "") -> None:
        """Rows of cell texts, one per grid column. A vertical merge repeats the text of the cell that
        starts it (a continuation with nothing above, as on a first row, is empty); a grid span
        repeats its text in each column it covers (as a vertical merge does down rows)."""
        rows: list[list[str]] = []
        above: dict[int, str] = {}
        boxes: list = []
        for tr in _children(tbl, W + "tr"):
            col = _count(_val(tr.find(W + "trPr"), W + "gridBefore"), 0)
            cells = [""] * col  # a row starting late keeps its cells under their columns
            for tc in _children(tr, W + "tc"):
                tcpr = tc.find(W + "tcPr")
                span = max(_count(_val(tcpr, W + "gridSpan"), 1), 1)
                merge = tcpr.find(W + "vMerge") if tcpr is not None else None
                if merge is not None and merge.get(W + "val", "continue") == "continue":
                    text = above.get(col, "")
                else:
                    text = self._cell(tc, boxes)
                    if merge is not None:
                        above[col] = text
                    else:
                        above.pop(col, None)
                cells += [text] * span
                col += span
            rows.append(cells)
        start = len(self.out.blocks)
        self.out.table(rows)
        if role and len(self.out.blocks) > start:
            self.out.blocks[-1].meta["role"] = role
        self.after(boxes)

    def _cell(self, tc, boxes: list) -> str:
        """A cell's text; a table nested in it is kept, marked, in place: ``[table: a | b ; c | d]``."""
        texts = []
        for node in _flat(tc):
            if node.tag == W + "tbl":
                rows = [" | ".join(self._cell(c, boxes) for c in _children(tr, W + "tc"))
                        for tr in _children(node, W + "tr")]
                texts.append("[table: " + " ; ".join(r for r in rows if r.strip(" |")) + "]")
                continue
            raw, found = self.inline(node)
            boxes += found
            if raw.strip():  # a numbered list in a cell keeps its numbers, as in the body
                ppr = node.find(W + "pPr")
                raw = self._numbered(ppr, _val(ppr, W + "pStyle") or self.styles.default, raw.strip())
            texts.append(raw)
        return _WS.sub(" ", " ".join(texts)).strip()


def _count(value: str | None, default: int) -> int:
    """A small non-negative count from an attribute; junk or absurd values fall back or are capped."""
    return min(int(value), _MAX_SPAN) if value is not None and value.isdigit() else default


def _marker(kind: str, n: int) -> str:
    return f"[^{n}]" if kind == "footnote" else f"[^e{n}]"


def _children(el, tag: str):
    """Children with ``tag``, entering content controls and custom XML wrappers."""
    stack = [iter(el)]
    while stack:
        node = next(stack[-1], None)
        if node is None:
            stack.pop()
        elif node.tag == tag:
            yield node
        elif node.tag in (W + "sdt", W + "sdtContent", W + "customXml"):
            stack.append(iter(node))


def _flat(container):
    """Paragraphs and tables in document order, entering content controls; no recursion."""
    stack = [iter(container)]
    while stack:
        node = next(stack[-1], None)
        if node is None:
            stack.pop()
        elif node.tag in (W + "p", W + "tbl"):
            yield node
        elif node.tag in (W + "sdt", W + "sdtContent", W + "customXml", W + "ins", W + "moveTo"):
            stack.append(iter(node))


def _sections(body):
    """``(elements, sectPr)`` per section: a paragraph holding a sectPr ends its section."""
    current: list = []
    for el in _flat(body):
        current.append(el)
        sect = el.find(f"{W}pPr/{W}sectPr") if el.tag == W + "p" else None
        if sect is not None:
            yield current, sect
            current = []
    yield current, body.find(W + "sectPr")


_CORE = {"title": "{http://purl.org/dc/elements/1.1/}title", "author": "{http://purl.org/dc/elements/1.1/}creator",
         "language": "{http://purl.org/dc/elements/1.1/}language"}


def _metadata(pkg: Package) -> dict:
    """Title, author, language and modification time (ISO) from the core properties, when present;
    a malformed part or date loses only the metadata."""
    name = pkg.related("", "core-properties") or "docProps/core.xml"
    try:
        root = pkg.xml(name)
    except InputError:  # a broken metadata part must not lose the text
        return {}
    if root is None:
        return {}
    meta = {}
    for key, tag in _CORE.items():
        el = root.find(tag)
        if el is not None and el.text and el.text.strip():
            meta[key] = el.text.strip()
    el = root.find("{http://purl.org/dc/terms/}modified")
    if el is not None and el.text:
        try:
            meta["updated_at"] = datetime.fromisoformat(el.text.strip().replace("Z", "+00:00")).isoformat()
        except ValueError:
            pass
    return meta
