"""Signs that extraction damaged a file's text, measured on the Document alone (no second parse), so
``audit`` can say "warn" before anyone blames the chunker. Each signal has a warn threshold and a
hint that says what to do; none changes the text.

- broken lines: inside multi-line paragraphs, a short line that does not end a sentence and is
  continued in lower case on the next line — a line split in the middle (a PDF's text order broken);
- mojibake: UTF-8 read as Windows-1252/Latin-1 (``Ã©`` for ``é``, ``â€™`` for ``’``): a run counts
  only when re-encoding it gives valid UTF-8;
- glyphs without text: private-use characters (symbol fonts without a Unicode map) and control
  characters;
- right-to-left text in visual order: common function words spelled backwards (``رد`` for ``در``,
  ``לש`` for ``של``), Hebrew words that begin with a final letter form, Arabic words that end in a
  reversed article (``لا`` for ``ال``), presentation-form glyphs;
- words per page (PDF of two pages or more): a text layer too thin to be the page's text;
- tables (PDF, where the grid is guessed from the drawing; DOCX and HTML tables are authored as
  cells, and their empty spacer cells are real): digits split across cells or spaced out inside one
  (``0 3 / 2 5``), tables mostly empty.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from statistics import quantiles

from chunkwise.types import Document

BROKEN_LINE_WARN = 0.15  # share of a file's wrapped lines that are split mid-way
BROKEN_MIN_LINES = 20  # lines needed before the rate means anything
SHORT_LINE = 0.6  # a line under this share of its paragraph's usual length is short
MOJIBAKE_WARN = 3  # mis-decoded sequences
GLYPHS_WARN = 10  # private-use and control characters
RTL_REVERSED_WARN = 0.5  # share of right-to-left words whose letter order is visual, not logical
RTL_MIN_WORDS = 10
WORDS_PER_PAGE_WARN = 20  # fewer words per page than this (pages with text only)
WORDS_MIN_PAGES = 2  # a one-page file of a few words (a memo, a form) is short, not damaged
EMPTY_CELLS_WARN = 0.6  # a table with more of its cells empty than this is probably misaligned

_MOJI = re.compile("[\u00c2-\u00f4][\u0080-\u00bf\u0152\u0153\u0160\u0161\u0178\u017d\u017e\u0192\u02c6\u02dc"
                   "\u2013\u2014\u2018-\u201e\u2020-\u2022\u2026\u2030\u2039\u203a\u20ac\u2122]{1,3}")
_PUA = re.compile("[\ue000-\uf8ff]")
_CONTROL = re.compile("[\x00-\x08\x0b\x0e-\x1f\x7f]")
_HEBREW_WORD = re.compile("[\u05d0-\u05ea]{2,}")
_RTL_WORD = re.compile("[\u05d0-\u05ea\u0621-\u064a\u067e\u0686\u0698\u06a9\u06af\u06cc]{2,}")
# Frequent short words of Arabic, Persian and Hebrew whose reversal is not itself a frequent word.
_COMMON_RTL = frozenset("""في من على إلى عن هذا هذه التي الذي كان ذلك بين حتى عند بعد قبل لم لن
در به از که این را با است برای شده آن یا تا هم نیز بر شود می
של את על הוא לא עם זה גם כי אבל היא אני""".split())
_HEBREW_FINALS = "\u05da\u05dd\u05df\u05e3\u05e5"
_ARABIC_WORD = re.compile("[\u0621-\u064a]{3,}")
_ARABIC_FORMS = re.compile("[\ufb50-\ufdff\ufe70-\ufefc]")
_WORD = re.compile(r"\w+")
_SPACED_DIGITS = re.compile(r"\b\d \d\b")  # "0 3 / 2 5"; a thousands space ("1 000") does not match
_CELL_SPLIT = re.compile(r"(?<!\\)\|")
_SENTENCE_END = tuple(".:;!?)]\"'”’")
PDF = "application/pdf"


@dataclass(frozen=True)
class Damage:
    broken_lines: float | None = None  # rate, None when too few wrapped lines to say
    mojibake: int = 0
    odd_glyphs: int = 0  # private-use + control characters
    rtl_words: int = 0
    rtl_reversed: float | None = None  # share of right-to-left words in visual order
    words_per_page: float | None = None
    table_problems: int = 0  # tables with split digits or mostly empty cells

    def warnings(self) -> list[str]:
        out = []
        if self.broken_lines is not None and self.broken_lines >= BROKEN_LINE_WARN:
            out.append(f"{self.broken_lines:.0%} of wrapped lines are split mid-way (warn at {BROKEN_LINE_WARN:.0%}): "
                       "the text order is broken; check `chunkwise extract FILE`, or re-export the PDF")
        if self.mojibake >= MOJIBAKE_WARN:
            out.append(f"{self.mojibake} mis-decoded sequences like 'Ã©' (UTF-8 read as Windows-1252): "
                       "the source was converted twice; re-save or re-export it as UTF-8")
        if self.odd_glyphs >= GLYPHS_WARN:
            out.append(f"{self.odd_glyphs} private-use or control characters (glyphs without text): "
                       "a font lacks a Unicode map; OCR the pages or export the file again")
        if self.rtl_reversed is not None and self.rtl_reversed >= RTL_REVERSED_WARN:
            out.append(f"right-to-left text in visual order ({self.rtl_reversed:.0%} of {self.rtl_words} words "
                       "reversed): its words read backwards; export the source with a text layer in logical order")
        if self.words_per_page is not None and self.words_per_page < WORDS_PER_PAGE_WARN:
            out.append(f"{self.words_per_page:.0f} words per page (warn under {WORDS_PER_PAGE_WARN}): the text layer "
                       "looks thin; the pages may be images — install chunkwise[ocr] or check the source")
        if self.table_problems:
            out.append(f"{self.table_problems} table(s) look garbled (digits split across cells or mostly empty "
                       "cells); check them with `chunkwise extract FILE --json`")
        return out


def measure(doc: Document) -> Damage:
    text = doc.text[doc.body_start :]
    rtl_words, reversed_share = _rtl(text)
    pdf = doc.media_type == PDF
    return Damage(
        broken_lines=_broken_lines(doc),
        mojibake=_mojibake(text),
        odd_glyphs=len(_PUA.findall(text)) + len(_CONTROL.findall(text)),
        rtl_words=rtl_words,
        rtl_reversed=reversed_share,
        words_per_page=_words_per_page(doc) if pdf else None,
        table_problems=sum(_table_garbled(doc.text[b.start : b.end]) for b in doc.blocks if b.kind == "table" and pdf),
    )


def _broken_lines(doc: Document) -> float | None:
    lines = broken = 0
    for b in doc.blocks:
        if b.kind != "paragraph":
            continue
        rows = [r.strip() for r in doc.text[b.start : b.end].split("\n")]
        rows = [r for r in rows if r]
        if len(rows) < 3:
            continue
        usual = quantiles([len(r) for r in rows], n=4)[2]  # upper quartile: a full line
        for row, after in zip(rows, rows[1:]):
            lines += 1
            if len(row) < SHORT_LINE * usual and not row.endswith(_SENTENCE_END) and after[:1].islower():
                broken += 1
    return round(broken / lines, 4) if lines >= BROKEN_MIN_LINES else None


def _mojibake(text: str) -> int:
    count = 0
    for m in _MOJI.finditer(text):
        try:
            raw = bytes(_cp1252_byte(c) for c in m.group())
            fixed = raw.decode("utf-8")
        except (ValueError, UnicodeDecodeError):
            continue
        count += len(fixed) == 1 and ord(fixed) >= 0x80
    return count


def _cp1252_byte(c: str) -> int:
    """The byte that Windows-1252 (else Latin-1) maps to ``c``; ValueError when none does."""
    try:
        return c.encode("cp1252")[0]
    except UnicodeEncodeError:
        if ord(c) < 0x100:
            return ord(c)
        raise ValueError(c) from None


def _rtl(text: str) -> tuple[int, float | None]:
    hebrew = _HEBREW_WORD.findall(text)
    arabic = _ARABIC_WORD.findall(text)
    every = _RTL_WORD.findall(text)
    forms = len(_ARABIC_FORMS.findall(text))
    words = len(every) + forms
    backwards = (sum(w[0] in _HEBREW_FINALS for w in hebrew) + sum(w.endswith("\u0644\u0627") for w in arabic)
                 + sum(w[::-1] in _COMMON_RTL and w not in _COMMON_RTL for w in every))
    forwards = (sum(w[-1] in _HEBREW_FINALS for w in hebrew) + sum(w.startswith("\u0627\u0644") for w in arabic)
                + sum(w in _COMMON_RTL for w in every))
    if words < RTL_MIN_WORDS:
        return words, None
    if forms >= RTL_MIN_WORDS:  # glyph shapes, not letters: visual order whatever the letter counts say
        return words, 1.0
    marked = backwards + forwards
    return words, round(backwards / marked, 4) if marked >= RTL_MIN_WORDS // 2 else None


def _words_per_page(doc: Document) -> float | None:
    with_text = [p for p in doc.pages if p.end > p.start]
    if len(with_text) < WORDS_MIN_PAGES:
        return None
    words = sum(len(_WORD.findall(doc.text[p.start : p.end])) for p in with_text)
    return round(words / len(with_text), 1)


def table_cells(body: str) -> list[list[str]]:
    """A pipe table's rows of cells, the separator row left out."""
    rows = []
    for line in body.split("\n"):
        cells = [c.strip() for c in _CELL_SPLIT.split(line.strip().strip("|"))]
        if any(cells) and all(set(c) <= set("-: ") for c in cells):
            continue
        rows.append(cells)
    return rows


def _table_garbled(body: str) -> bool:
    rows = table_cells(body)
    cells = [c for r in rows for c in r]
    if not cells:
        return False
    if sum(not c for c in cells) > EMPTY_CELLS_WARN * len(cells):
        return True
    for row in rows:
        if any(_SPACED_DIGITS.search(c) for c in row):
            return True
        for left, right in zip(row, row[1:]):
            if re.fullmatch(r"\d{1,2}[/.:]", left) and re.fullmatch(r"\d{1,4}", right):
                return True
            if re.fullmatch(r"\d{1,2}", left) and re.fullmatch(r"[/.:]\d{1,4}", right):
                return True
    return False
