"""Small office, mail and e-book files made in memory for the format tests (nothing binary committed):
PPTX with python-pptx, XLSX with openpyxl, EML with the standard library, ODT/ODS/EPUB written as
zip files by hand (their XML is short), RTF as text."""
from __future__ import annotations

import datetime as dt
import io
import zipfile
from email.message import EmailMessage


def pptx_bytes() -> bytes:
    from pptx import Presentation
    from pptx.util import Inches

    prs = Presentation()
    s1 = prs.slides.add_slide(prs.slide_layouts[0])
    s1.shapes.title.text = "Quarterly Review"
    s1.placeholders[1].text = "Northern region results"
    s2 = prs.slides.add_slide(prs.slide_layouts[1])
    s2.shapes.title.text = "Highlights"
    body = s2.placeholders[1].text_frame
    body.text = "Revenue grew eleven percent"
    sub = body.add_paragraph()
    sub.text = "Mostly from the harbour stores"
    sub.level = 1
    s2.notes_slide.notes_text_frame.text = "Mention the lighthouse contract"
    s3 = prs.slides.add_slide(prs.slide_layouts[5])
    s3.shapes.title.text = "Figures"
    table = s3.shapes.add_table(3, 2, Inches(1), Inches(2), Inches(6), Inches(2)).table
    for r, row in enumerate([("Region", "Revenue"), ("North", "120"), ("South", "95")]):
        for c, value in enumerate(row):
            table.cell(r, c).text = value
    s4 = prs.slides.add_slide(prs.slide_layouts[6])  # blank: no title
    box = s4.shapes.add_textbox(Inches(1), Inches(1), Inches(4), Inches(1))
    box.text_frame.text = "A slide without a title"
    s5 = prs.slides.add_slide(prs.slide_layouts[6])
    s5.shapes.add_textbox(Inches(1), Inches(1), Inches(4), Inches(1)).text_frame.text = "Hidden draft text"
    s5._element.set("show", "0")
    out = io.BytesIO()
    prs.save(out)
    return out.getvalue()


def xlsx_bytes() -> bytes:
    from openpyxl import Workbook

    wb = Workbook()
    ws = wb.active
    ws.title = "Sales"
    ws.append(["Sales by region"])
    ws.append(["Region", "Date", "Share", "Revenue", "Units"])
    ws.append(["North", dt.datetime(2024, 3, 31), 0.125, 1234.5, 7])
    ws.append(["South", dt.datetime(2024, 6, 30), 0.5, 99.0, 0.1 + 0.2])
    for row in ws.iter_rows(min_row=3, max_row=4):
        row[2].number_format = "0.0%"
        row[3].number_format = '"$"#,##0.00'
    ws.append([])
    ws.append(["Notes", "Owner"])
    ws.append(["Audit due", "Kim"])
    ws2 = wb.create_sheet("Empty")
    ws2["A1"] = None
    ws3 = wb.create_sheet("Secret")
    ws3["A1"] = "hidden instructions"
    ws3.sheet_state = "hidden"
    out = io.BytesIO()
    wb.save(out)
    return out.getvalue()


def eml_bytes(nested: bytes | None = None) -> bytes:
    msg = EmailMessage()
    msg["From"] = "Ada Lovelace <ada@example.org>"
    msg["To"] = "Charles Babbage <charles@example.org>"
    msg["Cc"] = "Mary <mary@example.org>"
    msg["Subject"] = "Engine notes"
    msg["Date"] = "Tue, 02 Jan 2024 10:30:00 +0000"
    msg.set_content("Dear Charles,\n\nThe analytical engine needs more cards.\n\n- punch cards\n- gears\n")
    msg.add_alternative("<html><body><p>Dear Charles, HTML twin.</p></body></html>", subtype="html")
    msg.add_attachment(b"Attached plan: build the mill first.\n", maintype="text", subtype="plain",
                       filename="plan.txt")
    msg.add_attachment(b"\x89PNG\r\n\x1a\n" + b"\x00" * 20, maintype="image", subtype="png", filename="gear.png")
    if nested is not None:
        msg.add_attachment(nested, maintype="application", subtype="octet-stream", filename="forwarded.eml")
    return msg.as_bytes()


def html_only_eml() -> bytes:
    msg = EmailMessage()
    msg["From"] = "a@example.org"
    msg["Subject"] = "Only HTML"
    msg.set_content("<html><body><h1>Status</h1><p>All systems nominal.</p></body></html>", subtype="html")
    return msg.as_bytes()


def _zip(members: dict[str, bytes | str], first: tuple[str, bytes] | None = None) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zf:
        if first:
            zf.writestr(zipfile.ZipInfo(first[0]), first[1])  # stored, uncompressed: ODF/EPUB mimetype
        for name, data in members.items():
            zf.writestr(name, data)
    return out.getvalue()


_ODF_NS = ('xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" '
           'xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" '
           'xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0" '
           'xmlns:dc="http://purl.org/dc/elements/1.1/" '
           'xmlns:meta="urn:oasis:names:tc:opendocument:xmlns:meta:1.0"')


def odt_bytes() -> bytes:
    body = """<office:text>
      <text:h text:outline-level="1">Field Guide</text:h>
      <text:p>Birds of the <text:span>northern</text:span><text:s text:c="2"/>coast.<text:note text:note-class="footnote"><text:note-citation>1</text:note-citation><text:note-body><text:p>Seen in 2023.</text:p></text:note-body></text:note></text:p>
      <text:h text:outline-level="2">Gulls</text:h>
      <text:list><text:list-item><text:p>Herring gull</text:p>
        <text:list><text:list-item><text:p>Juvenile plumage</text:p></text:list-item></text:list>
      </text:list-item></text:list>
      <table:table table:name="T1"><table:table-row><table:table-cell><text:p>Bird</text:p></table:table-cell>
        <table:table-cell><text:p>Count</text:p></table:table-cell></table:table-row>
        <table:table-row><table:table-cell><text:p>Gull</text:p></table:table-cell>
        <table:table-cell><text:p>12</text:p></table:table-cell></table:table-row></table:table>
    </office:text>"""
    return _odf("application/vnd.oasis.opendocument.text", body, "Field Guide Title")


def ods_bytes(repeat_rows: int = 1_048_000) -> bytes:
    body = f"""<office:spreadsheet><table:table table:name="Counts">
      <table:table-row><table:table-cell><text:p>Bird</text:p></table:table-cell>
        <table:table-cell><text:p>Count</text:p></table:table-cell>
        <table:table-cell table:number-columns-repeated="16000"/></table:table-row>
      <table:table-row><table:table-cell office:value-type="string"><text:p>Gull</text:p></table:table-cell>
        <table:table-cell office:value-type="float" office:value="12.5"><text:p>12.50</text:p></table:table-cell></table:table-row>
      <table:table-row table:number-rows-repeated="{repeat_rows}"><table:table-cell table:number-columns-repeated="1024"/></table:table-row>
    </table:table></office:spreadsheet>"""
    return _odf("application/vnd.oasis.opendocument.spreadsheet", body, "")


def _odf(mime: str, body: str, title: str) -> bytes:
    content = f'<?xml version="1.0"?><office:document-content {_ODF_NS}><office:body>{body}</office:body></office:document-content>'
    meta = (f'<?xml version="1.0"?><office:document-meta {_ODF_NS}><office:meta><dc:title>{title}</dc:title>'
            "</office:meta></office:document-meta>")
    return _zip({"content.xml": content, "meta.xml": meta}, first=("mimetype", mime.encode()))


def epub_bytes() -> bytes:
    container = ('<?xml version="1.0"?><container version="1.0" xmlns="urn:oasis:names:tc:opendocument:xmlns:container">'
                 '<rootfiles><rootfile full-path="OEBPS/content.opf" media-type="application/oebps-package+xml"/>'
                 "</rootfiles></container>")
    opf = """<?xml version="1.0"?><package xmlns="http://www.idpf.org/2007/opf" version="3.0">
      <metadata xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:title>Tide Tables</dc:title><dc:creator>R. Nolan</dc:creator></metadata>
      <manifest><item id="c2" href="text/ch2.xhtml" media-type="application/xhtml+xml"/>
        <item id="c1" href="text/ch1.xhtml" media-type="application/xhtml+xml"/>
        <item id="n" href="text/notes.xhtml" media-type="application/xhtml+xml"/></manifest>
      <spine><itemref idref="n" linear="no"/><itemref idref="c1"/><itemref idref="c2"/></spine></package>"""
    page = ('<?xml version="1.0"?><html xmlns="http://www.w3.org/1999/xhtml"><head><title>x</title></head><body>'
            "<h1>{h}</h1><p>{p}</p></body></html>")
    return _zip({
        "META-INF/container.xml": container, "OEBPS/content.opf": opf,
        "OEBPS/text/ch1.xhtml": page.format(h="Chapter One", p="The tide rose at dawn."),
        "OEBPS/text/ch2.xhtml": page.format(h="Chapter Two", p="The tide fell at dusk."),
        "OEBPS/text/notes.xhtml": page.format(h="Notes", p="An endnote."),
    }, first=("mimetype", b"application/epub+zip"))


RTF = (rb"{\rtf1\ansi\ansicpg1252\deff0{\fonttbl{\f0 Arial;}}"
       rb"{\pard\b Harbour Report\par}{\pard\par}{\pard Caf\'e9 sales rose. \u8364? prices held.\par}}")
