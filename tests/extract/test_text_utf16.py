"""UTF-16 text saved without a byte order mark (Notepad-era exports) is read, with a warning; UTF-32
without one and binaries with zero bytes are still refused as binary."""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chunkwise.errors import InputError
from chunkwise.extract.text import decode
from chunkwise.pipeline.documents import load_document
from chunkwise.sources.sniff import bomless_utf16

TEXT = "1. Scope\r\n\r\nThe harbour ledger lists every ship, café and quay by name.\r\n"


@pytest.mark.parametrize("codec", ["utf-16-le", "utf-16-be"])
def test_bomless_utf16_file_is_read_with_a_warning(tmp_path, codec):
    path = tmp_path / "notes.txt"
    path.write_bytes(TEXT.encode(codec))
    doc = load_document(path)  # the walk's content check and the decoder agree
    assert doc.text == TEXT
    assert any(f"read as {codec.upper()}" in w for w in doc.warnings)


def test_bomless_utf32_and_binaries_are_still_refused(tmp_path):
    (tmp_path / "wide.txt").write_bytes(TEXT.encode("utf-32-le"))
    (tmp_path / "blob.txt").write_bytes(b"\x7fELF\x02\x01\x01\x00" + bytes(range(256)) * 8)
    for name in ("wide.txt", "blob.txt"):
        with pytest.raises(InputError, match="binary content"):
            load_document(tmp_path / name)


def test_odd_length_utf16_names_the_byte():
    data = TEXT.encode("utf-16-le") + b"x"
    with pytest.raises(InputError, match=r"invalid UTF-16 at byte \d+"):
        decode(data, "cut.txt")


def test_utf8_text_is_never_guessed_as_utf16():
    assert bomless_utf16(TEXT.encode("utf-8")) is None
    assert decode(TEXT.encode("utf-8"), "a.txt") == (TEXT, [])


_LATIN = st.characters(min_codepoint=0x20, max_codepoint=0xFF, blacklist_categories=("Cc", "Cs"))  # text, not controls


@settings(max_examples=150, deadline=None)
@given(st.text(_LATIN | st.sampled_from("\n\t\r"), min_size=4, max_size=300), st.sampled_from(["utf-16-le", "utf-16-be"]))
def test_latin_text_round_trips_without_a_bom(text, codec):
    decoded, warnings = decode(text.encode(codec), "t.txt")
    assert decoded == text and len(warnings) == 1


@pytest.mark.parametrize("head", [b"abc\x00def", b"text\x00with nul", b"\x01\x00\x02\x00\x03\x00\x04\x00\x05\x00"])
def test_short_or_control_heavy_heads_are_not_utf16(head):
    assert bomless_utf16(head) is None
