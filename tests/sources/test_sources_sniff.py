"""Media type by suffix, confirmed by content."""
from __future__ import annotations

import io
import zipfile

import pytest

from chunkwise.sources import DOCX, HTML, MARKDOWN, PDF, PLAIN, SourceError, SourceFile, iter_sources
from chunkwise.sources.sniff import check_docx, check_head, media_type_for


@pytest.mark.parametrize(
    "name, expected",
    [("a.md", MARKDOWN), ("a.MARKDOWN", MARKDOWN), ("a.txt", PLAIN), ("a.htm", HTML), ("a.HTML", HTML),
     ("a.pdf", PDF), ("a.docx", DOCX), ("a.doc", None), ("a", None), ("a.md.bak", None)],
)
def test_media_type_by_suffix(name, expected):
    assert media_type_for(name) == expected


@pytest.mark.parametrize(
    "head",
    [b"plain ascii", "caf\u00e9".encode(), "\ufeffBOM".encode(), "utf16".encode("utf-16"),
     "utf16be".encode("utf-16-be").join([b"\xfe\xff", b""]), "utf32".encode("utf-32")],
)
def test_text_heads_accepted(head):
    assert check_head("f.txt", PLAIN, head) is None


@pytest.mark.parametrize(
    "head, word",
    [(b"%PDF-1.4\n", "PDF"), (b"\x89PNG\r\n\x1a\n\x00", "PNG"), (b"PK\x03\x04\x14\x00", "ZIP"),
     (b"\xff\xd8\xff\xe0", "JPEG"), (b"GIF89a", "GIF"), (b"text\x00with nul", "NUL bytes")],
)
def test_binary_heads_refused(head, word):
    msg = check_head("f.txt", PLAIN, head)
    assert msg and word in msg and "not decoded" in msg


def test_pdf_and_docx_heads():
    assert check_head("a.pdf", PDF, b"%PDF-1.7\n%\xe2\xe3") is None
    assert check_head("a.pdf", PDF, b"\r\n%PDF-1.7") is None  # readers allow a little junk first
    assert "not a PDF" in check_head("a.pdf", PDF, b"<html>")
    assert "not a .docx" in check_head("a.docx", DOCX, b"%PDF-1.4")
    assert check_head("a.docx", DOCX, b"PK\x03\x04") is None


def _zip(names: list[str]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for n in names:
            zf.writestr(n, "<x/>")
    return buf.getvalue()


def test_docx_must_hold_word_document(tmp_path):
    good, other, broken = tmp_path / "good.docx", tmp_path / "other.docx", tmp_path / "broken.docx"
    good.write_bytes(_zip(["[Content_Types].xml", "word/document.xml"]))
    other.write_bytes(_zip(["xl/workbook.xml"]))
    broken.write_bytes(_zip(["word/document.xml"])[:40])
    assert check_docx("good.docx", good) is None
    assert "no word/document.xml" in check_docx("other.docx", other)
    assert "damaged" in check_docx("broken.docx", broken)
    items = {x.doc_id: x for x in iter_sources([str(tmp_path)])}
    assert isinstance(items["good.docx"], SourceFile) and items["good.docx"].media_type == DOCX
    assert isinstance(items["other.docx"], SourceError) and isinstance(items["broken.docx"], SourceError)


def test_pdf_sniffed_in_walk(tmp_path):
    (tmp_path / "real.pdf").write_bytes(b"%PDF-1.4\n1 0 obj\n")
    (tmp_path / "fake.pdf").write_bytes(b"just text")
    items = {x.doc_id: x for x in iter_sources([str(tmp_path)])}
    assert items["real.pdf"].media_type == PDF
    assert "not a PDF" in items["fake.pdf"].error


@pytest.mark.parametrize("head, word", [
    (b"7z\xbc\xaf\x27\x1c\x00\x04" + bytes(24), "7Z"),  # no NUL in its signature: was decoded as text
    (b"RIFF\x24\x00\x00\x00WEBPVP8 ", "WEBP"),
    (b"SQLite format 3\x00\x10\x00\x01\x01", "SQLITE"),
])
def test_heads_are_identified_by_the_magic_number_library(head, word):
    """Formats the hand-written table did not know are named (filetype's magic numbers)."""
    msg = check_head("f.txt", PLAIN, head)
    assert msg and word in msg and "not decoded" in msg


@pytest.mark.parametrize("text", ["BMW owners' manual", "ID3 tags explained", "OggS is not a word", "MThd",
                                  "{\\rtf1 kept as text}", "!<arch> notes", "caf\u00e9 BM"])
def test_text_starting_like_a_signature_stays_text(text):
    """filetype alone takes these for BMP, MP3, OGG, MIDI, RTF, ar: only a suspect head is sniffed."""
    assert check_head("f.txt", PLAIN, text.encode()) is None
