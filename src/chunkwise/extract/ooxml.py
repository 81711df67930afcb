"""An Office Open XML package read defensively: zip limits checked before anything is inflated,
relationships followed by type (not by guessed file names, so a missing content-type override or an
unusual part name does not matter), external targets never fetched, Strict OOXML namespaces mapped to
the transitional ones, and XML parsed without entities, DTDs or network access.

Limits (the zip's central directory is read first; a member's declared size bounds what ``zipfile``
inflates, since it stops and fails the CRC check at that size):

- ``MAX_RATIO``: no member over 1 MiB may inflate to more than 100 times its compressed size;
- ``MAX_XML_BYTES``: the XML parts together inflate to at most 64 MiB;
- ``MAX_TOTAL_BYTES``: all members together (media included) to at most 256 MiB;
- ``MAX_MEMBERS``: at most 10,000 members.
A file over a limit is refused with a message saying which, before any XML is parsed.
"""
from __future__ import annotations

import io
import posixpath
import zipfile
import zlib
from dataclasses import dataclass, field

from chunkwise.errors import DependencyError, InputError

MAX_RATIO = 100
RATIO_FLOOR = 1 << 20  # small members may compress better than that (an empty-ish styles part)
MAX_XML_BYTES = 64 << 20
MAX_TOTAL_BYTES = 256 << 20
MAX_MEMBERS = 10_000

W_NS = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
R_NS = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
# Strict OOXML (ISO/IEC 29500 Strict) names the same vocabulary with other URIs.
_STRICT = (
    (b"http://purl.oclc.org/ooxml/wordprocessingml/main", W_NS.encode()),
    (b"http://purl.oclc.org/ooxml/officeDocument/relationships", R_NS.encode()),
    (b"http://purl.oclc.org/ooxml/drawingml/main", b"http://schemas.openxmlformats.org/drawingml/2006/main"),
    (b"http://purl.oclc.org/ooxml/drawingml/wordprocessingDrawing",
     b"http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing"),
)
_STRICT_MARK = b"http://purl.oclc.org/ooxml/"


@dataclass(frozen=True)
class Rel:
    type: str  # the last path segment of the relationship type: "styles", "footnotes", "header", ...
    target: str  # the part name inside the package ("word/styles.xml"), or the URL when external
    external: bool


@dataclass
class Package:
    """The members of one package by name, read lazily; ``strict`` when it uses Strict namespaces."""

    zf: zipfile.ZipFile
    source: str
    names: frozenset[str]
    strict: bool = False
    warnings: list[str] = field(default_factory=list)
    kind: str = "DOCX"  # the format named in error messages

    def xml(self, name: str):
        """The parsed root element of a part, or None when the package has no such part."""
        if name not in self.names:
            return None
        try:
            data = self.zf.read(name)
        except (zipfile.BadZipFile, zlib.error, EOFError, OSError, NotImplementedError) as exc:
            raise corrupt(self.source, exc, self.kind) from exc
        if self.strict or _STRICT_MARK in data[:4096]:
            self.strict = True
            for old, new in _STRICT:
                data = data.replace(old, new)
        return parse_xml(data, f"{self.source}: {name}")

    def rels(self, part: str) -> dict[str, Rel]:
        """Relationships of ``part`` ("" for the package itself) by id."""
        folder, base = posixpath.split(part)
        root = self.xml(posixpath.join(folder, "_rels", base + ".rels"))
        out: dict[str, Rel] = {}
        if root is None:
            return out
        for el in root:
            if not isinstance(el.tag, str) or not el.tag.endswith("}Relationship"):
                continue
            rid, kind, target = el.get("Id", ""), el.get("Type", ""), el.get("Target", "")
            external = el.get("TargetMode", "") == "External"
            if not external:
                target = target.lstrip("/") if target.startswith("/") else posixpath.normpath(
                    posixpath.join(folder, target))
            out[rid] = Rel(kind.rstrip("/").rsplit("/", 1)[-1], target, external)
        return out

    def related(self, part: str, kind: str) -> str | None:
        """The first internal part of relationship type ``kind``; an external one is reported, never read."""
        for rel in self.rels(part).values():
            if rel.type == kind:
                if rel.external:
                    self.warnings.append(f"the {kind} part is an external link ({rel.target[:80]}); not fetched")
                    continue
                return rel.target
        return None


def open_package(data: bytes, source: str, kind: str = "DOCX") -> Package:
    """Open a zip container (DOCX, PPTX, XLSX, ODF, EPUB) after checking the limits above;
    InputError for anything unreadable."""
    _etree(kind)
    try:
        zf = zipfile.ZipFile(io.BytesIO(data))
        infos = zf.infolist()
    except (zipfile.BadZipFile, zipfile.LargeZipFile, ValueError, EOFError, OSError) as exc:
        raise corrupt(source, exc, kind) from exc
    if len(infos) > MAX_MEMBERS:
        raise InputError(f"{source}: refused: the zip holds {len(infos):,} members, over the {MAX_MEMBERS:,} limit "
                         "(a decompression bomb or not a document)")
    total = xml = 0
    for info in infos:
        size, packed = info.file_size, max(info.compress_size, 1)
        if size > RATIO_FLOOR and size > MAX_RATIO * packed:
            raise InputError(f"{source}: refused before decompressing: {info.filename} would inflate "
                             f"{size / packed:,.0f}-fold ({packed:,} -> {size:,} bytes), over the {MAX_RATIO}:1 "
                             "limit (a decompression bomb)")
        total += size
        if info.filename.endswith((".xml", ".rels")):
            xml += size
    if xml > MAX_XML_BYTES or total > MAX_TOTAL_BYTES:
        what, limit = ("its XML parts", MAX_XML_BYTES) if xml > MAX_XML_BYTES else ("its members", MAX_TOTAL_BYTES)
        raise InputError(f"{source}: refused before decompressing: {what} would inflate to "
                         f"{max(xml, total) / 2**20:,.0f} MiB, over the {limit >> 20} MiB limit")
    return Package(zf, source, frozenset(i.filename for i in infos), kind=kind)


def parse_xml(data: bytes, where: str):
    """lxml with entities, DTDs and the network off (XXE, billion laughs) and its default depth limit."""
    etree = _etree()
    parser = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False, remove_comments=True,
                             remove_pis=True)
    try:
        return etree.fromstring(data, parser)
    except etree.XMLSyntaxError as exc:
        raise InputError(f"{where}: not well-formed XML ({exc}); the file is corrupt or truncated") from exc


def _etree(kind: str = "DOCX"):
    try:
        from lxml import etree
    except ImportError as exc:  # an optional extra: say how to get it
        extra = "docx" if kind == "DOCX" else "office"
        raise DependencyError(f"{kind} extraction needs lxml: pip install 'chunkwise[{extra}]'") from exc
    return etree


_LEGACY_HINT = {"DOCX": " (legacy .doc must be saved as .docx first)", "PPTX": " (legacy .ppt must be saved as .pptx first)",
                "XLSX": " (legacy .xls must be saved as .xlsx first)"}


def corrupt(source: str, exc: BaseException, kind: str = "DOCX") -> InputError:
    return InputError(f"{source}: not a readable {kind} ({exc or type(exc).__name__}); the file is corrupt, "
                      f"truncated or another format{_LEGACY_HINT.get(kind, '')}")


def refuse_dtd(pkg: Package) -> None:
    """Refuse a package whose XML declares a DTD (the carrier of entity bombs and external entities),
    for parts handed to a library that parses them itself (openpyxl). A DTD can only stand before
    the root element, so the first KiB of each part is enough."""
    for name in pkg.names:
        if name.endswith((".xml", ".rels")):
            try:
                with pkg.zf.open(name) as fh:
                    head = fh.read(1024)
            except (zipfile.BadZipFile, zlib.error, EOFError, OSError, NotImplementedError) as exc:
                raise corrupt(pkg.source, exc, pkg.kind) from exc
            if b"<!DOCTYPE" in head or b"<!ENTITY" in head:
                raise InputError(f"{pkg.source}: refused: {name} declares a DTD (entities are not allowed in "
                                 "Office XML; a crafted file)")


def read_member(pkg: Package, name: str, limit: int = MAX_XML_BYTES) -> bytes:
    """The bytes of one member (its declared size already checked by ``open_package``)."""
    try:
        with pkg.zf.open(name) as fh:
            data = fh.read(limit + 1)
    except (KeyError, zipfile.BadZipFile, zlib.error, EOFError, OSError, NotImplementedError) as exc:
        raise corrupt(pkg.source, exc, pkg.kind) from exc
    if len(data) > limit:
        raise InputError(f"{pkg.source}: refused: {name} inflates past {limit >> 20} MiB")
    return data
