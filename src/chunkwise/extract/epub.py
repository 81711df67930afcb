"""EPUB (2 and 3) -> Document: the chapters in spine order (the reading order the book declares), each
XHTML chapter read by the HTML extractor with every visible block kept, so chapter headings are
headings. The container is opened with ``ooxml``'s zip limits; ``META-INF/container.xml`` and the
package document (OPF) are parsed without DTDs or entities; nothing outside the book is fetched.
Items the spine marks ``linear="no"`` (pop-up notes, answer keys) follow the linear ones.
Title and author come from the OPF metadata. DRM-encrypted books are refused with a message.
"""
from __future__ import annotations

import posixpath
from urllib.parse import unquote

from chunkwise import ids
from chunkwise.errors import InputError
from chunkwise.extract.builder import TextBuilder
from chunkwise.extract.ooxml import corrupt, open_package, read_member
from chunkwise.types import Document

MEDIA_TYPE = "application/epub+zip"
OPF = "{http://www.idpf.org/2007/opf}"
DC = "{http://purl.org/dc/elements/1.1/}"
_CONTAINER = "{urn:oasis:names:tc:opendocument:xmlns:container}"
_XHTML = ("application/xhtml+xml", "text/html", "application/xml")
MAX_CHAPTERS = 5_000


def extract(data: bytes, source: str) -> Document:
    from chunkwise.extract import html

    pkg = open_package(data, source, "EPUB")
    if "META-INF/encryption.xml" in pkg.names and _drm(pkg):
        raise InputError(f"{source}: the e-book is DRM-encrypted; only DRM-free EPUB can be read")
    opf_name = _rootfile(pkg)
    opf = pkg.xml(opf_name)
    if opf is None:
        raise corrupt(source, ValueError(f"package document {opf_name or '(none)'} missing"), "EPUB")
    folder = posixpath.dirname(opf_name)
    items = {}
    for item in opf.iter(OPF + "item"):
        href = posixpath.normpath(posixpath.join(folder, unquote(item.get("href", "").split("#")[0])))
        items[item.get("id", "")] = (href, item.get("media-type", ""))
    spine = [(ref.get("idref", ""), ref.get("linear", "yes") != "no") for ref in opf.iter(OPF + "itemref")]
    order = [i for i, linear in spine if linear] + [i for i, linear in spine if not linear]
    out, warnings = TextBuilder(), []
    if len(order) > MAX_CHAPTERS:
        warnings.append(f"{len(order):,} spine items: only the first {MAX_CHAPTERS:,} read")
        order = order[:MAX_CHAPTERS]
    for idref in order:
        href, mtype = items.get(idref, ("", ""))
        if not href or href not in pkg.names:
            warnings.append(f"spine item {idref!r} missing from the book")
            continue
        if mtype and mtype not in _XHTML:
            continue
        chapter = html.extract(read_member(pkg, href), f"{source}/{href}", main_content=False)
        out.document(chapter, meta={"chapter": href})
    meta = _metadata(opf)
    if not out.pos:
        warnings.append("book has no text")
    return Document(doc_id=source, source=source, media_type=MEDIA_TYPE, text=out.value(), blocks=tuple(out.blocks),
                    metadata=meta, sha256=ids.bytes_sha256(data), warnings=tuple(dict.fromkeys(warnings + pkg.warnings)))


def _rootfile(pkg) -> str:
    container = pkg.xml("META-INF/container.xml")
    if container is not None:
        for rf in container.iter(_CONTAINER + "rootfile"):
            path = unquote(rf.get("full-path", "")).lstrip("/")
            if path in pkg.names:
                return path
    return next((n for n in sorted(pkg.names) if n.endswith(".opf")), "")


def _drm(pkg) -> bool:
    """Embedded fonts may be obfuscated (and listed in encryption.xml) in a DRM-free book: only an
    encrypted resource that is not a font means DRM."""
    root = pkg.xml("META-INF/encryption.xml")
    if root is None:
        return False
    uris = [el.get("URI", "") for el in root.iter() if isinstance(el.tag, str) and el.tag.endswith("CipherReference")]
    return any(not u.lower().endswith((".ttf", ".otf", ".woff", ".woff2")) for u in uris)


def _metadata(opf) -> dict:
    meta = {}
    for key, tag in (("title", DC + "title"), ("author", DC + "creator"), ("language", DC + "language")):
        el = next((e for e in opf.iter(tag) if (e.text or "").strip()), None)
        if el is not None:
            meta[key] = el.text.strip()
    return meta
