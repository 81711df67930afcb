"""Office, mail, e-book and marked-up text formats: structure, metadata and offsets on files made here
(format_fixtures), and hostile input (zip bombs, DTDs, malformed files) failing that file only."""
from __future__ import annotations

import io
import zipfile

import pytest

from chunkwise.errors import InputError
from chunkwise.extract import (CSV, EML, EPUB, ODS, ODT, ORG, PPTX, RST, RTF, TEXT, TSV, XLSX, extract_bytes)
from format_fixtures import (RTF as RTF_DATA, eml_bytes, epub_bytes, html_only_eml, ods_bytes, odt_bytes, pptx_bytes,
                             xlsx_bytes)


def heads(doc):
    return [(b.level, b.text) for b in doc.blocks if b.kind == "heading"]


def tables(doc):
    return [doc.text[b.start:b.end] for b in doc.blocks if b.kind == "table"]


def check_offsets(doc):
    for b in doc.blocks:
        assert 0 <= b.start <= b.end <= len(doc.text)
        if b.kind == "heading" and doc.media_type not in (RST, ORG, TEXT):
            assert doc.text[b.start:b.end] == b.text
        for a, z in b.meta.get("rows", ()):
            assert b.start <= a <= z <= b.end and "\n" not in doc.text[a:z]


def test_pptx_slides_titles_tables_notes():
    pytest.importorskip("pptx")
    doc = extract_bytes(pptx_bytes(), "deck.pptx", PPTX)
    check_offsets(doc)
    assert heads(doc) == [(1, "Quarterly Review"), (1, "Highlights"), (1, "Figures"), (1, "Slide 4")]
    assert [p.label for p in doc.pages] == ["1", "2", "3", "4"]  # the hidden slide 5 is left out
    assert "Hidden draft text" not in doc.text and any("slide 5 is hidden" in w for w in doc.warnings)
    items = [(b.level, doc.text[b.start:b.end]) for b in doc.blocks if b.kind == "list_item"]
    assert (2, "Mostly from the harbour stores") in items
    notes = [doc.text[b.start:b.end] for b in doc.blocks if b.meta.get("role") == "notes"]
    assert notes == ["Notes: Mention the lighthouse contract"]
    assert doc.text[doc.pages[1].start:doc.pages[1].end].count("lighthouse") == 1
    assert tables(doc) == ["| Region | Revenue |\n| --- | --- |\n| North | 120 |\n| South | 95 |"]


def test_xlsx_sheets_tables_display_and_hidden_sheet():
    pytest.importorskip("openpyxl")
    doc = extract_bytes(xlsx_bytes(), "book.xlsx", XLSX)
    check_offsets(doc)
    assert heads(doc) == [(1, "Sales")]  # the empty sheet adds nothing, the hidden one is not read
    assert "hidden instructions" not in doc.text and any("Secret" in w for w in doc.warnings)
    first, second = tables(doc)
    assert first.splitlines()[0] == "| Region | Date | Share | Revenue | Units |"  # the title row is a caption
    assert "| North | 2024-03-31 | 12.5% | $1,234.50 | 7 |" in first
    assert "| South | 2024-06-30 | 50.0% | $99.00 | 0.3 |" in first
    assert second.splitlines()[0] == "| Notes | Owner |"  # a blank row starts a new table
    assert any(b.meta.get("role") == "caption" and b.text == "" and doc.text[b.start:b.end] == "Sales by region"
               for b in doc.blocks)


@pytest.mark.parametrize("media_type, data", [
    (CSV, b'name;note\nAda;"semi; colon"\nBob;"two\nlines"\n'),
    (TSV, b"name\tnote\nAda\tsemi; colon\nBob\ttwo lines\n"),
])
def test_csv_and_tsv(media_type, data):
    doc = extract_bytes(data, "t.csv", media_type)
    check_offsets(doc)
    (table,) = tables(doc)
    assert table.splitlines()[0] == "| name | note |"
    assert "| Ada | semi; colon |" in table and "| Bob | two lines |" in table
    assert doc.blocks[0].meta["header"] == ["name", "note"]


def test_csv_cell_budget_is_reported(monkeypatch):
    from chunkwise.extract import sheets

    monkeypatch.setattr(sheets, "MAX_CELLS", 10)
    doc = extract_bytes(b"a,b\n" * 20, "big.csv", CSV)
    assert any("over 10 cells" in w for w in doc.warnings)
    assert tables(doc)[0].count("\n") < 10


def test_eml_headers_body_and_attachments():
    inner = eml_bytes()
    doc = extract_bytes(eml_bytes(nested=inner), "mail.eml", EML)
    check_offsets(doc)
    m = doc.metadata
    assert m["subject"] == m["title"] == "Engine notes"
    assert m["from"] == "Ada Lovelace <ada@example.org>" and "charles@example.org" in m["to"] and m["cc"]
    assert m["date"] == "2024-01-02T10:30:00+00:00"
    assert "The analytical engine needs more cards." in doc.text
    assert "HTML twin" not in doc.text  # the plain alternative is the body
    assert heads(doc)[:3] == [(1, "Engine notes"), (2, "Attachment: plan.txt"), (2, "Attachment: forwarded.eml")]
    assert (3, "Engine notes") in heads(doc)  # the forwarded message, one level deeper
    assert "build the mill first" in doc.text
    listed = {a["name"]: a for a in m["attachments"]}
    assert listed["plan.txt"]["read"] and not listed["gear.png"]["read"] and listed["gear.png"]["reason"]
    assert any(b.kind == "list_item" and doc.text[b.start:b.end] == "- gears" for b in doc.blocks)


def test_eml_html_only_body_and_nesting_bound(monkeypatch):
    pytest.importorskip("selectolax")
    doc = extract_bytes(html_only_eml(), "h.eml", EML)
    assert (2, "Status") in heads(doc) and "All systems nominal." in doc.text
    from chunkwise.extract import eml

    monkeypatch.setattr(eml, "MAX_DEPTH", 1)
    doc = extract_bytes(eml_bytes(nested=eml_bytes()), "n.eml", EML)
    listed = {a["name"]: a for a in doc.metadata["attachments"]}
    assert not listed["forwarded.eml"]["read"] and "deep" in listed["forwarded.eml"]["reason"]


def test_odt_headings_lists_tables_notes():
    pytest.importorskip("lxml")
    doc = extract_bytes(odt_bytes(), "guide.odt", ODT)
    check_offsets(doc)
    assert heads(doc) == [(1, "Field Guide"), (2, "Gulls")]
    assert doc.metadata["title"] == "Field Guide Title"
    assert "Birds of the northern  coast." in doc.text
    assert [(b.level, doc.text[b.start:b.end]) for b in doc.blocks if b.kind == "list_item"] == [
        (1, "Herring gull"), (2, "Juvenile plumage")]
    assert any(b.meta.get("role") == "footnote" and "Seen in 2023." in doc.text[b.start:b.end] for b in doc.blocks)
    assert tables(doc) == ["| Bird | Count |\n| --- | --- |\n| Gull | 12 |"]


def test_ods_displayed_cells_and_repeats_bounded():
    pytest.importorskip("lxml")
    doc = extract_bytes(ods_bytes(), "counts.ods", ODS)
    assert heads(doc) == [(1, "Counts")]
    assert tables(doc) == ["| Bird | Count |\n| --- | --- |\n| Gull | 12.50 |"]


def test_epub_spine_order_and_metadata():
    pytest.importorskip("selectolax")
    doc = extract_bytes(epub_bytes(), "book.epub", EPUB)
    check_offsets(doc)
    assert [t for _, t in heads(doc)] == ["Chapter One", "Chapter Two", "Notes"]  # spine, non-linear last
    assert doc.metadata["title"] == "Tide Tables" and doc.metadata["author"] == "R. Nolan"
    assert doc.text.index("rose at dawn") < doc.text.index("fell at dusk")


def test_rtf_text_and_code_page():
    pytest.importorskip("striprtf")
    doc = extract_bytes(RTF_DATA, "r.rtf", RTF)
    assert "Harbour Report" in doc.text and "Café sales rose. € prices held." in doc.text


def test_rst_and_org_headings():
    rst = "=====\nTitle\n=====\n\nIntro text.\n\nSection A\n---------\n\nBody.\n\n::\n\n  code\n  ----\n\nSub\n~~~\n\nMore.\n"
    doc = extract_bytes(rst.encode(), "r.rst", RST)
    assert heads(doc) == [(1, "Title"), (2, "Section A"), (3, "Sub")] and doc.text == rst
    assert doc.metadata["title"] == "Title"
    org = "#+TITLE: Notes\n* Top\ntext\n** Child\n#+BEGIN_SRC sh\n* not a heading\n#+END_SRC\n*** Deep\n"
    doc = extract_bytes(org.encode(), "o.org", ORG)
    assert heads(doc) == [(1, "Top"), (2, "Child"), (3, "Deep")] and doc.metadata["title"] == "Notes"


RFC_LIKE = """Network Working Group                                        A. Author
Request for Comments: 9999                                     June 2024

                         A Protocol for Tests

Abstract

   This document describes a protocol.

Table of Contents

   1.  Introduction  . . . . . . . . . . . . . . . . . . . . . . .   2
     1.1.  Terms . . . . . . . . . . . . . . . . . . . . . . . . .   2
   2.  Protocol  . . . . . . . . . . . . . . . . . . . . . . . . .   3

1.  Introduction

   Text of the introduction.  It has several sentences.  See
   section 2.  The introduction goes on for a while, as RFC
   introductions do, explaining the problem this protocol
   solves and who should read the rest of the document.

1.1.  Terms

   The key words are defined here.  They are the usual ones,
   and they mean what they always mean in these documents.

Author, et al.            Standards Track                    [Page 2]
\f
RFC 9999                    A Protocol                     June 2024

2.  Protocol

   The protocol has these steps:

   1.  Connect.

   2.  Send data.

2.1.1.  Deep Detail

   Details.

Appendix A.  Examples

   An example.

A.1.  First Example

   Example text.

Author's Address

   A. Author
"""


def test_plain_text_rfc_headings_with_levels():
    doc = extract_bytes(RFC_LIKE.encode(), "rfc.txt", TEXT)
    got = [(lvl, t.split("  ")[0]) for lvl, t in heads(doc)]
    assert got == [(1, "Abstract"), (1, "Table of Contents"), (1, "1."), (2, "1.1."), (1, "2."), (3, "2.1.1."),
                   (1, "Appendix A."), (2, "A.1."), (1, "Author's Address")]
    assert doc.text == RFC_LIKE  # offsets index the file itself


def test_plain_text_underlined_and_prose_without_headings():
    text = "Release Notes\n=============\n\nSome text.\n\nFixes\n-----\n\nMore text.\n"
    assert heads(extract_bytes(text.encode(), "n.txt", TEXT)) == [(1, "Release Notes"), (2, "Fixes")]
    prose = ("Dear Sir,\n\nI write to you about the matter.\n\n1. We met on Monday.\n\n2. You agreed to pay.\n\n"
             "Yours faithfully,\nJohn Smith\n")
    doc = extract_bytes(prose.encode(), "letter.txt", TEXT)
    assert heads(doc) == [] and doc.blocks == ()


# -- hostile input ---------------------------------------------------------------------------------------
def _bomb(member: str) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr(member, b"<a>" + b" " * (30 << 20) + b"</a>")
    return out.getvalue()


@pytest.mark.parametrize("media_type, member", [
    (PPTX, "ppt/presentation.xml"), (XLSX, "xl/workbook.xml"), (EPUB, "META-INF/container.xml"),
    (ODT, "content.xml"), (ODS, "content.xml"),
])
def test_zip_bombs_refused_before_inflating(media_type, member):
    pytest.importorskip("lxml")
    with pytest.raises(InputError, match="bomb|refused"):
        extract_bytes(_bomb(member), "bomb", media_type)


@pytest.mark.parametrize("media_type", [PPTX, XLSX, EPUB, ODT, ODS, EML, CSV, RTF])
def test_malformed_files_fail_with_one_line(media_type):
    pytest.importorskip("lxml")
    bad = {EML: b"words without any header line\n", CSV: b"caf\xe9;not utf-8\n", RTF: b"plain words, no rtf header"}.get(
        media_type, b"PK\x03\x04 truncated")
    with pytest.raises(InputError) as err:
        extract_bytes(bad, "bad.file", media_type)
    assert "\n" not in str(err.value) and str(err.value).startswith("bad.file")


def test_xlsx_with_dtd_refused():
    pytest.importorskip("openpyxl")
    data = xlsx_bytes()
    src = zipfile.ZipFile(io.BytesIO(data))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as zf:
        for info in src.infolist():
            body = src.read(info)
            if info.filename == "xl/workbook.xml":
                body = b'<!DOCTYPE x [<!ENTITY a "aaaa">]>' + body.split(b"?>", 1)[-1]
            zf.writestr(info, body)
    with pytest.raises(InputError, match="DTD"):
        extract_bytes(out.getvalue(), "dtd.xlsx", XLSX)


def test_legacy_types_skipped_with_a_hint(tmp_path):
    from chunkwise.sources import SourceError, iter_sources

    for name in ("a.doc", "b.ppt", "c.xls"):
        (tmp_path / name).write_bytes(b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\x00" * 100)
    found = list(iter_sources([tmp_path]))
    assert all(isinstance(s, SourceError) and s.skipped for s in found)
    assert ["save it as .docx" in found[0].error, "save it as .pptx" in found[1].error,
            "save it as .xlsx" in found[2].error] == [True, True, True]


def _mail_with(attachments: list[tuple[str, bytes]]) -> bytes:
    from email.message import EmailMessage

    msg = EmailMessage()
    msg["From"], msg["Subject"] = "a@example.org", "Bundle"
    msg.set_content("See the attached pages.\n")
    for name, data in attachments:
        msg.add_attachment(data, maintype="text", subtype="html", filename=name)
    return msg.as_bytes()


def test_eml_attachments_bounded_by_decoded_bytes_and_count_with_a_message(monkeypatch):
    """Issue 27, "Bad input": attachments are bounded in count and expanded size, refused past the
    bound with a message. The byte budget counts what is decoded (markup included), not the text
    kept, so pages heavy in markup cannot pass far more bytes than the bound."""
    pytest.importorskip("selectolax")
    from chunkwise.extract import eml

    page = b"<html><body><p>Harbour page %d.</p><!--" + b"x" * 2000 + b"--></body></html>"
    monkeypatch.setattr(eml, "MAX_ATTACHMENT_BYTES", 3000)
    doc = extract_bytes(_mail_with([(f"p{i}.html", page % i) for i in range(3)]), "m.eml", EML)
    read = [a["read"] for a in doc.metadata["attachments"]]
    assert read == [True, False, False] and "Harbour page 0." in doc.text and "Harbour page 1." not in doc.text
    assert sum("attachment budget" in w for w in doc.warnings) == 2, doc.warnings

    monkeypatch.setattr(eml, "MAX_ATTACHMENT_BYTES", 50_000_000)
    monkeypatch.setattr(eml, "MAX_ATTACHMENTS", 2)
    doc = extract_bytes(_mail_with([(f"p{i}.html", page % i) for i in range(3)]), "m.eml", EML)
    assert [a["read"] for a in doc.metadata["attachments"]] == [True, True, False]
    assert any("over 2 attachments" in w for w in doc.warnings), doc.warnings
