"""DOCX packages for the completeness and hostile-input tests, generated: python-docx makes a real
base package (styles, core properties, content types), then its XML is edited in the zip: a body of
our own, extra parts (footnotes, endnotes, comments, headers, footers) with their relationships and
content-type overrides, or deliberately broken variants (Strict namespaces, an external styles
relationship, no override for the main part)."""
from __future__ import annotations

import io
import re
import zipfile

W_URI = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
R_URI = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
NS = (f'xmlns:w="{W_URI}" xmlns:r="{R_URI}" '
      'xmlns:mc="http://schemas.openxmlformats.org/markup-compatibility/2006" '
      'xmlns:wps="http://schemas.microsoft.com/office/word/2010/wordprocessingShape" '
      'xmlns:wp="http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing" '
      'xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main" '
      'xmlns:v="urn:schemas-microsoft-com:vml" mc:Ignorable="wps"')
REL = "http://schemas.openxmlformats.org/officeDocument/2006/relationships/"
CT = "application/vnd.openxmlformats-officedocument.wordprocessingml."


def base_package() -> dict[str, bytes]:
    import docx

    doc = docx.Document()
    doc.core_properties.title = "Generated"
    buf = io.BytesIO()
    doc.save(buf)
    with zipfile.ZipFile(io.BytesIO(buf.getvalue())) as zf:
        return {n: zf.read(n) for n in zf.namelist()}


def p(text: str = "", style: str = "", extra: str = "", ppr: str = "") -> str:
    style_xml = f'<w:pStyle w:val="{style}"/>' if style else ""
    run = f'<w:r><w:t xml:space="preserve">{text}</w:t></w:r>' if text else ""
    props = f"<w:pPr>{style_xml}{ppr}</w:pPr>" if style_xml or ppr else ""
    return f"<w:p>{props}{run}{extra}</w:p>"


def note_ref(kind: str, nid: int) -> str:
    return f'<w:r><w:{kind}Reference w:id="{nid}"/></w:r>'


def notes_part(kind: str, notes: dict[int, str]) -> str:
    sep = (f'<w:{kind} w:type="separator" w:id="-1"><w:p><w:r><w:separator/></w:r></w:p></w:{kind}>'
           f'<w:{kind} w:type="continuationSeparator" w:id="0"><w:p><w:r><w:continuationSeparator/></w:r></w:p>'
           f'</w:{kind}>')
    body = "".join(f'<w:{kind} w:id="{i}"><w:p><w:r><w:{kind}Ref/></w:r><w:r><w:t xml:space="preserve"> {t}'
                   f'</w:t></w:r></w:p></w:{kind}>' for i, t in notes.items())
    return f'<w:{kind}s {NS}>{sep}{body}</w:{kind}s>'


def textbox(text: str) -> str:
    """A DrawingML text box with the VML fallback copy Word writes beside it."""
    inner = f"<w:txbxContent>{p(text)}</w:txbxContent>"
    return ('<w:r><mc:AlternateContent><mc:Choice Requires="wps"><w:drawing><wp:anchor><a:graphic>'
            '<a:graphicData><wps:wsp><wps:txbx>' + inner + '</wps:txbx></wps:wsp></a:graphicData></a:graphic>'
            '</wp:anchor></w:drawing></mc:Choice><mc:Fallback><w:pict><v:shape><v:textbox>' + inner +
            '</v:textbox></v:shape></w:pict></mc:Fallback></mc:AlternateContent></w:r>')


def sect(headers: dict[str, str] = (), footers: dict[str, str] = ()) -> str:
    refs = "".join(f'<w:headerReference w:type="{t}" r:id="{rid}"/>' for t, rid in dict(headers).items())
    refs += "".join(f'<w:footerReference w:type="{t}" r:id="{rid}"/>' for t, rid in dict(footers).items())
    return f"<w:sectPr>{refs}</w:sectPr>"


def build(body: str, parts: dict[str, tuple[str, str, str]] = (), *, body_sect: str = "",
          mutate=None) -> bytes:
    """A package whose document body is ``body``; ``parts`` maps rId -> (relationship type, part
    name, XML) — written with a relationship and a content-type override; ``mutate`` edits the
    final member dict."""
    files = base_package()
    files["word/document.xml"] = f'<?xml version="1.0" encoding="UTF-8"?><w:document {NS}><w:body>{body}' \
                                 f'{body_sect}</w:body></w:document>'.encode()
    rels = files["word/_rels/document.xml.rels"].decode()
    types = files["[Content_Types].xml"].decode()
    for rid, (kind, name, xml) in dict(parts).items():
        rels = rels.replace("</Relationships>", f'<Relationship Id="{rid}" Type="{REL}{kind}" '
                                                f'Target="{name.split("/", 1)[1]}"/></Relationships>')
        if f'PartName="/{name}"' not in types:
            types = types.replace("</Types>", f'<Override PartName="/{name}" ContentType="{CT}{kind}+xml"/></Types>')
        files[name] = f'<?xml version="1.0" encoding="UTF-8"?>{xml}'.encode()
    files["word/_rels/document.xml.rels"] = rels.encode()
    files["[Content_Types].xml"] = types.encode()
    if mutate:
        mutate(files)
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in files.items():
            zf.writestr(name, data)
    return buf.getvalue()


def hf_part(kind: str, text: str) -> str:
    tag = "hdr" if kind == "header" else "ftr"
    return f"<w:{tag} {NS}>{p(text)}</w:{tag}>"


def to_strict(files: dict[str, bytes]) -> None:
    """Rewrite every XML member with the Strict OOXML namespaces and relationship types."""
    for name, data in list(files.items()):
        if name.endswith((".xml", ".rels")):
            data = data.replace(W_URI.encode(), b"http://purl.oclc.org/ooxml/wordprocessingml/main")
            data = data.replace(REL.encode(), b"http://purl.oclc.org/ooxml/officeDocument/relationships/")
            data = data.replace(R_URI.encode(), b"http://purl.oclc.org/ooxml/officeDocument/relationships")
            files[name] = data


def external_styles(files: dict[str, bytes]) -> None:
    rels = files["word/_rels/document.xml.rels"].decode()
    rels = re.sub(r'(<Relationship [^>]*Type="[^"]*/styles"[^>]*?)Target="[^"]*"',
                  r'\1Target="file:///C:/Templates/Corporate.dotx" TargetMode="External"', rels)
    files["word/_rels/document.xml.rels"] = rels.encode()
    del files["word/styles.xml"]


def no_override(files: dict[str, bytes]) -> None:
    types = files["[Content_Types].xml"].decode()
    files["[Content_Types].xml"] = re.sub(r'<Override PartName="/word/document.xml"[^>]*/>', "", types).encode()
