"""Damage the audit reports per file (issue 27, item 6): each signal fires on damaged text, stays quiet
on sound text, and reaches ``audit`` as a warning with a hint."""
from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chunkwise.extract import damage
from chunkwise.extract.audit import audit_document
from chunkwise.extract.builder import pipe_table
from chunkwise.types import Block, Document, Page

SENTENCE = "the harbour ledger lists every ship that came in and every ship that left again"


def _doc(text: str, blocks=(), pages=(), media_type="text/plain") -> Document:
    return Document(doc_id="d", source="d.txt", media_type=media_type, text=text, blocks=tuple(blocks),
                    pages=tuple(pages))


def _paragraphs(lines_per_para: list[list[str]]) -> Document:
    text, blocks = "", []
    for lines in lines_per_para:
        if text:
            text += "\n\n"
        start = len(text)
        text += "\n".join(lines)
        blocks.append(Block("paragraph", start, len(text)))
    return _doc(text, blocks)


def test_lines_split_mid_way_are_counted_and_whole_wrapped_lines_are_not():
    whole = [[SENTENCE, SENTENCE, SENTENCE, "and the end."] for _ in range(8)]
    sound = damage.measure(_paragraphs(whole))
    assert sound.broken_lines == 0.0 and not sound.warnings()
    split = [["the harbour ledger lists", "every ship that came in and every ship that left again today",
              SENTENCE, "the clerks kept", "their ledgers in a careful round script for a hundred years", "end."]
             for _ in range(6)]
    broken = damage.measure(_paragraphs(split))
    assert broken.broken_lines == pytest.approx(12 / 30)
    assert any("split mid-way" in w for w in broken.warnings())


def test_too_few_lines_say_nothing():
    assert damage.measure(_paragraphs([["a b", "c d", "e f"]])).broken_lines is None


def test_mojibake_is_counted_only_where_re_encoding_gives_utf8():
    good = "Café, naïve, Zürich — “quoted” and it’s fine. Ã alone and Âge are words too."
    assert damage.measure(_doc(good)).mojibake == 0
    bad = good.encode("utf-8").decode("cp1252", errors="replace")
    measured = damage.measure(_doc(bad))
    assert measured.mojibake >= 5
    assert any("UTF-8 read as Windows-1252" in w for w in measured.warnings())


def test_glyphs_without_text_are_counted():
    measured = damage.measure(_doc("Blockchain \ue406\ue422\ue19e security \x10 and \x0e" * 5))
    assert measured.odd_glyphs == 25
    assert any("private-use or control" in w for w in measured.warnings())
    assert damage.measure(_doc("tab\tnew line\nform feed\f")).odd_glyphs == 0


PERSIAN = "در این گزارش به بررسی بازار از دید سرمایه گذاران که با شرکت کار می کنند است " * 3
HEBREW = "הספר של המורה נמצא על השולחן והוא לא יודע את זה כי הילדים שלום לכם " * 3


@pytest.mark.parametrize("logical", [PERSIAN, HEBREW])
def test_right_to_left_in_visual_order_is_seen(logical):
    sound = damage.measure(_doc(logical))
    assert sound.rtl_words > 20 and sound.rtl_reversed is not None and sound.rtl_reversed < 0.2
    assert not sound.warnings()
    reversed_words = " ".join(w[::-1] for w in logical.split())
    measured = damage.measure(_doc(reversed_words))
    assert measured.rtl_reversed > 0.8
    assert any("visual order" in w for w in measured.warnings())


def test_presentation_forms_are_visual_order():
    forms = "\ufe8d\ufedf\ufecc\ufeae\ufe91\ufef2 " * 3
    assert damage.measure(_doc(forms)).rtl_reversed == 1.0


def test_thin_text_layer_per_page():
    pages_text = ["Figure 1", "Figure 2", "Figure 3"]
    text = "\n\n".join(pages_text)
    pages, pos = [], 0
    for i, t in enumerate(pages_text, 1):
        pages.append(Page(i, pos, pos + len(t)))
        pos += len(t) + 2
    measured = damage.measure(_doc(text, pages=pages, media_type="application/pdf"))
    assert measured.words_per_page == 2.0
    assert any("words per page" in w for w in measured.warnings())
    body = SENTENCE * 3
    full = _doc(body + "\n\n" + body, pages=[Page(1, 0, len(body)), Page(2, len(body) + 2, 2 * len(body) + 2)],
                media_type="application/pdf")
    assert damage.measure(full).words_per_page >= damage.WORDS_PER_PAGE_WARN
    slides = _doc(text, pages=pages, media_type="application/vnd.openxmlformats-officedocument.presentationml"
                                                ".presentation")
    assert damage.measure(slides).words_per_page is None  # a slide of two words is no damage


def _table_doc(rows, media_type="application/pdf"):
    body, _, _ = pipe_table(rows)
    return _doc(body, [Block("table", 0, len(body))], media_type=media_type)


def test_garbled_tables_are_counted():
    sound = [["Date", "Ships", "Keeper"], ["03/25", "1 000", "Ada"], ["04/25", "7", "Grace"]]
    assert damage.measure(_table_doc(sound)).table_problems == 0
    spaced = [["Date", "Ships"], ["0 3 / 2 5", "12"], ["0 4 / 2 5", "7"]]
    split = [["Date", "", "Ships"], ["03/", "25", "12"], ["04/", "25", "7"]]
    empty = [["A", "B", "C", "D", "E"], *([["x", "", "", "", ""], ["", "", "y", "", ""]] * 2)]
    for rows in (spaced, split, empty):
        assert damage.measure(_table_doc(rows)).table_problems == 1, rows
        assert damage.measure(_table_doc(rows, "text/html")).table_problems == 0  # authored cells


def test_audit_row_has_the_signals_and_their_warnings():
    bad = _doc(("Café " * 10).encode("utf-8").decode("cp1252"))
    row = audit_document(bad)
    assert row.mojibake == 10 and row.status == "warn"
    assert any("Windows-1252" in w for w in row.warnings)
    assert row.to_dict()["mojibake"] == 10
    clean = audit_document(_doc("Café " * 10))
    assert clean.mojibake == 0 and clean.status == "ok"


def test_half_a_surrogate_pair_from_a_pdf_font_becomes_a_replacement_character():
    from chunkwise.extract.pdf_lines import _UNKNOWN, _line

    line = _line("bad \udb62 glyph", [_UNKNOWN] * 14)
    assert line.text == "bad \ufffd glyph"
    assert line.text.encode("utf-8")  # before: UnicodeEncodeError in langid, JSON and SQLite


DOCLING = Path(__file__).resolve().parents[3] / "shared" / "data" / "docling" / "pdf" / "sources"


@pytest.mark.skipif(not (DOCLING / "skipped_1page.pdf").is_file(), reason="../shared/data/docling is absent")
def test_audit_reads_the_korean_pdf_with_a_broken_font_map():
    from chunkwise.api import audit

    (row,) = audit([DOCLING / "skipped_1page.pdf"])
    assert row.status == "warn" and row.odd_glyphs >= damage.GLYPHS_WARN and row.replacement_chars >= 1


def test_a_one_page_pdf_of_few_words_is_short_not_damaged():
    memo = _doc("Memo: lunch at noon", pages=[Page(1, 0, 19)], media_type="application/pdf")
    assert damage.measure(memo).words_per_page is None


@settings(max_examples=150, deadline=None)
@given(st.text(st.characters(blacklist_categories=("Cs",)), max_size=400), st.booleans())
def test_measure_takes_any_text(text, as_pdf):
    """No text makes the audit fail: every signal is a count or a share in [0, 1]."""
    blocks = [Block("paragraph", 0, len(text)), Block("table", 0, len(text))]
    pages = [Page(1, 0, len(text) // 2), Page(2, len(text) // 2, len(text))]
    got = damage.measure(_doc(text, blocks, pages, "application/pdf" if as_pdf else "text/plain"))
    assert got.mojibake >= 0 and got.odd_glyphs >= 0 and got.table_problems in (0, 1)
    for share in (got.broken_lines, got.rtl_reversed):
        assert share is None or 0 <= share <= 1
    assert isinstance(got.warnings(), list)
