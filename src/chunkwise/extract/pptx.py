"""PPTX -> Document, read from the package XML with lxml (``ooxml``: zip limits before inflating, no
DTDs, external parts never fetched).

Each slide, in the presentation's order, is a section and a page (``pages`` carry slide numbers, so
a chunk cites "slide 4"): its title placeholder is a level-1 heading (a slide without a title gets
"Slide N", so its text does not join the slide before), then its shapes in the slide's order (groups
entered): text frames as paragraphs (indented or bulleted ones as list items), tables as tables (a
horizontally merged cell once, a vertically merged one repeated down its rows), and last the
speaker notes as a paragraph starting "Notes:" (``meta["role"] = "notes"``). Hidden slides are left
out with a warning; pictures, charts and SmartArt have no text here.
"""
from __future__ import annotations

from chunkwise import ids
from chunkwise.extract.builder import TextBuilder
from chunkwise.extract.ooxml import Package, corrupt, open_package
from chunkwise.types import Document, Page

MEDIA_TYPE = "application/vnd.openxmlformats-officedocument.presentationml.presentation"
P = "{http://schemas.openxmlformats.org/presentationml/2006/main}"
A = "{http://schemas.openxmlformats.org/drawingml/2006/main}"
_R_ID = "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}id"
_MC = "{http://schemas.openxmlformats.org/markup-compatibility/2006}"
_TITLES = ("title", "ctrTitle")
_FURNITURE = ("sldNum", "dt", "ftr", "hdr", "sldImg")
MAX_SLIDES = 5_000


def extract(data: bytes, source: str) -> Document:
    pkg = open_package(data, source, "PPTX")
    main = pkg.related("", "officeDocument") or "ppt/presentation.xml"
    root = pkg.xml(main)
    if root is None:
        raise corrupt(source, ValueError("no presentation part"), "PPTX")
    rels = pkg.rels(main)
    slides = [rels[el.get(_R_ID, "")].target for el in root.iter(P + "sldId") if el.get(_R_ID, "") in rels]
    warnings: list[str] = []
    if len(slides) > MAX_SLIDES:
        warnings.append(f"{len(slides):,} slides: only the first {MAX_SLIDES:,} read")
        slides = slides[:MAX_SLIDES]
    out, pages = TextBuilder(), []
    for number, part in enumerate(slides, 1):
        slide = pkg.xml(part)
        if slide is None:
            warnings.append(f"slide {number}: part {part} missing")
            continue
        if slide.get("show") in ("0", "false"):
            warnings.append(f"slide {number} is hidden; not read")
            continue
        start = _slide(out, pkg, part, slide, number)
        pages.append(Page(len(pages) + 1, start, out.pos, label=str(number)))
    if not out.pos:
        warnings.append("presentation has no text")
    return Document(doc_id=source, source=source, media_type=MEDIA_TYPE, text=out.value(),
                    blocks=tuple(out.blocks), pages=tuple(pages), metadata=_metadata(pkg),
                    sha256=ids.bytes_sha256(data), warnings=tuple(dict.fromkeys(warnings + pkg.warnings)))


def _slide(out: TextBuilder, pkg: Package, part: str, slide, number: int) -> int:
    tree = slide.find(f"{P}cSld/{P}spTree")
    shapes = list(_shapes(tree)) if tree is not None else []
    title = " ".join(t for kind, el in shapes if kind == "title" for t in [_frame_text(el)] if t)
    start = out.block("heading", title or f"Slide {number}", 1, title or f"Slide {number}", {"slide": number})
    for kind, el in shapes:
        if kind == "table":
            out.table(_table(el))
        elif kind == "text":
            for level, text in _paragraphs(el):
                if level:
                    out.block("list_item", text, level)
                else:
                    out.block("paragraph", text)
    notes = _notes(pkg, part)
    if notes:
        out.block("paragraph", "Notes: " + notes, meta={"role": "notes"})
    return start


def _shapes(tree):
    """(kind, element) in drawing order: "title" and "text" frames, "table" graphic frames."""
    for el in tree:
        tag = el.tag if isinstance(el.tag, str) else ""
        if tag == P + "sp":
            ph = el.find(f"{P}nvSpPr/{P}nvPr/{P}ph")
            kind = ph.get("type", "body") if ph is not None else ""
            body = el.find(P + "txBody")
            if kind in _FURNITURE or body is None:
                continue
            yield ("title" if kind in _TITLES else "text"), body
        elif tag == P + "graphicFrame":
            tbl = el.find(f"{A}graphic/{A}graphicData/{A}tbl")
            if tbl is not None:
                yield "table", tbl
        elif tag == P + "grpSp":
            yield from _shapes(el)
        elif tag == _MC + "AlternateContent":
            choice = el.find(_MC + "Choice")
            if choice is not None:
                yield from _shapes(choice)


def _paragraphs(body):
    """(list level, text) per non-empty paragraph; level 0 for plain text."""
    for p in body.iter(A + "p"):
        text = _para_text(p)
        if not text:
            continue
        ppr = p.find(A + "pPr")
        lvl = int(ppr.get("lvl", "0")) if ppr is not None and ppr.get("lvl", "0").isdigit() else 0
        bullet = ppr is not None and (ppr.find(A + "buChar") is not None or ppr.find(A + "buAutoNum") is not None)
        yield (min(lvl, 8) + 1 if lvl or bullet else 0), text


def _para_text(p) -> str:
    parts = []
    for el in p.iter(A + "t", A + "br"):
        parts.append("\n" if el.tag == A + "br" else (el.text or ""))
    return "".join(parts).strip()


def _frame_text(body) -> str:
    return " ".join(t for t in (_para_text(p) for p in body.iter(A + "p")) if t).replace("\n", " ")


def _table(tbl) -> list[list[str]]:
    rows: list[list[str]] = []
    for tr in tbl.iter(A + "tr"):
        row: list[str] = []
        for j, tc in enumerate(tc for tc in tr if tc.tag == A + "tc"):
            if tc.get("hMerge") in ("1", "true"):
                continue
            text = _frame_text(tc)
            if tc.get("vMerge") in ("1", "true") and rows and j < len(rows[-1]):
                text = rows[-1][j]
            row.append(text)
        rows.append(row)
    return rows


def _notes(pkg: Package, part: str) -> str:
    target = pkg.related(part, "notesSlide")
    notes = pkg.xml(target) if target else None
    tree = notes.find(f"{P}cSld/{P}spTree") if notes is not None else None
    if tree is None:
        return ""
    texts = [_frame_text(body) for kind, body in _shapes(tree) if kind == "text"]
    return "\n".join(t for t in texts if t)


def _metadata(pkg: Package) -> dict:
    core = pkg.xml("docProps/core.xml") if "docProps/core.xml" in pkg.names else None
    if core is None:
        return {}
    meta = {}
    for el in core:
        name = el.tag.rsplit("}", 1)[-1] if isinstance(el.tag, str) else ""
        if name in ("title", "creator") and (el.text or "").strip():
            meta["title" if name == "title" else "author"] = el.text.strip()
    return meta

