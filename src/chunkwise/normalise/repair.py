"""Text repairs, one pure function each: ``step(text) -> Normalised`` (normalised text + map to ``text``).

Order matters and is fixed by ``STEPS``: invisible characters go first (a zero-width space between a
letter and its accent would otherwise block NFC composition), soft hyphens before NFC (removing one can
bring a letter and its combining mark together), NFC before hyphenation (so "é" is one lowercase letter),
ligatures folded before hyphenation (so "ﬁ" is two lowercase letters),
and whitespace last (earlier steps leave gaps). The composition is idempotent.
"""
from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

from chunkwise.normalise.offsets import Edit, Normalised, apply_edits

# Zero-width characters and bidirectional controls: they render as nothing (or reorder what a reader
# sees) while staying in the text an embedder reads, the classic way to hide text from reviewers.
# Note: ZWJ/ZWNJ (U+200D/U+200C) also shape emoji and Persian/Indic words; retrieval text loses that.
INVISIBLE = "\u200b\u200c\u200d\u2060\ufeff\u200e\u200f\u061c\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
_INVISIBLE_RE = re.compile(f"[{INVISIBLE}]+")

_NL_CHARS = "\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029"  # what str.splitlines() treats as a line break
_NL = r"(?:\r\n|[\n\r\v\f\x1c-\x1e\x85\u2028\u2029])"
_H = r"[^\S\n\r\v\f\x1c-\x1e\x85\u2028\u2029]"  # whitespace that is not a line break
_NL_RE = re.compile(_NL)
_SOFT_HYPHEN_RE = re.compile(rf"\u00ad+({_H}*{_NL}{_H}*)?")
_HYPHEN_BREAK_RE = re.compile(rf"[-\u2010](?<=\w.){_H}*{_NL}{_H}*(?=\w)")
_WS_RUN_RE = re.compile(r"\s\s+|[^\S \n]")  # only runs that may need a change: never a lone " " or "\n"
_NON_ASCII_RE = re.compile(r"[^\x00-\x7f]+")
_NFC_BLOCK = 4096


def remove_invisible(text: str) -> Normalised:
    """Drop zero-width characters and bidi controls (U+200B-D, U+2060, U+FEFF, U+200E/F, U+061C,
    U+202A-E, U+2066-9)."""
    if not any(ch in text for ch in INVISIBLE):  # substring scans in C beat one regex pass
        return Normalised.identity(text)
    return apply_edits(text, [(m.start(), m.end(), "") for m in _INVISIBLE_RE.finditer(text)])


def remove_soft_hyphens(text: str) -> Normalised:
    """Drop soft hyphens (U+00AD). One at a line end marks a word broken by layout, so the line break
    goes too when word characters stand on both sides: "immi\\u00ad\\ngration" -> "immigration"."""
    if "\u00ad" not in text:
        return Normalised.identity(text)
    edits: list[Edit] = []
    for m in _SOFT_HYPHEN_RE.finditer(text):
        s, e = m.span()
        if m.group(1) and not (s > 0 and e < len(text) and _is_word(text[s - 1]) and _is_word(text[e])):
            e = m.start(1)  # keep the line break: this is not a word broken in two
        edits.append((s, e, ""))
    return apply_edits(text, edits)


def nfc(text: str) -> Normalised:
    """Unicode NFC, edited cluster by cluster so the map stays exact. ASCII never changes and never
    merges with what precedes it, so only non-ASCII runs (with the ASCII letter before them, which an
    accent may join) are looked at; already-NFC text costs one C scan."""
    if text.isascii() or unicodedata.is_normalized("NFC", text):
        return Normalised.identity(text)
    edits: list[Edit] = []
    for m in _NON_ASCII_RE.finditer(text):
        s, e = m.span()
        s -= s > 0
        if unicodedata.is_normalized("NFC", text[s:e]):
            continue
        for bs, be in _safe_blocks(text, s, e, _NFC_BLOCK):  # a long CJK run: only its bad blocks
            if not unicodedata.is_normalized("NFC", text[bs:be]):
                edits.extend(_nfc_clusters(text, bs, be))
    return apply_edits(text, edits)


# Latin typographic ligatures (U+FB00-FB06) as PDFs emit them: "De\ufb01nition" must be found by
# "Definition". Python's casefold() folds them, SQLite FTS5's unicode61 tokenizer does not, so the two
# BM25 engines disagreed until the text itself was folded (queries are casefolded, which folds them too).
LIGATURES = {chr(c): unicodedata.normalize("NFKC", chr(c)) for c in range(0xFB00, 0xFB07)}
_LIGATURE_RE = re.compile(f"[{''.join(LIGATURES)}]")


def fold_ligatures(text: str) -> Normalised:
    """ﬀ ﬁ ﬂ ﬃ ﬄ ﬅ ﬆ -> ff fi fl ffi ffl st st; the letters of one ligature map to its position."""
    if text.isascii() or not any(ch in text for ch in LIGATURES):  # 7 substring scans in C beat one regex pass
        return Normalised.identity(text)
    return apply_edits(text, [(m.start(), m.end(), LIGATURES[m.group()]) for m in _LIGATURE_RE.finditer(text)])


def repair_hyphenation(text: str) -> Normalised:
    """Join a word hyphenated across a line break ("immi-\\ngration" -> "immigration") when both sides
    are lowercase letters; "well-\\nKnown" or "2024-\\n25" stay as they are."""
    edits = [
        (m.start(), m.end(), "")
        for m in _HYPHEN_BREAK_RE.finditer(text)
        if text[m.start() - 1].islower() and text[m.end()].islower()
    ]
    return apply_edits(text, edits)


def collapse_whitespace(text: str) -> Normalised:
    """Runs of spaces/tabs (and other horizontal spaces) -> one space; whitespace around a line break is
    dropped; CR LF / CR / other line separators -> LF; 3+ line breaks -> 2, so paragraph breaks survive.
    Edits keep a real space or LF where there is one, so most characters still map to themselves."""
    edits: list[Edit] = []
    add = edits.append
    for m in _WS_RUN_RE.finditer(text):
        s, e = m.span()
        run = m.group()
        if e - s == 1:  # a lone tab, CR, NBSP, ...
            add((s, e, "\n" if run in _NL_CHARS else " "))
        elif run == "\r\n":
            add((s, s + 1, ""))
        elif run == "\n\n":
            continue
        elif not run.strip(" "):
            add((s + 1, e, ""))
        else:
            _collapse_run(text, s, e, add)
    return apply_edits(text, edits)


def _collapse_run(text: str, s: int, e: int, add) -> None:
    breaks = [b.span() for b in _NL_RE.finditer(text, s, e)][:2]
    if not breaks:
        add((s + 1, e, "") if text[s] == " " else (s, e, " "))
        return
    pos = s
    for bs, be in breaks:
        if text[be - 1] == "\n":  # keep this LF (dropping a CR in front of it)
            bs, be = be - 1, be
        if bs > pos:
            add((pos, bs, ""))
        if text[bs:be] != "\n":
            add((bs, be, "\n"))
        pos = be
    if e > pos:
        add((pos, e, ""))


# Character repairs only: safe on Markdown and text, whose syntax (line breaks, spacing) must survive.
CHARACTER_STEPS = (remove_invisible, remove_soft_hyphens, nfc, fold_ligatures)
STEPS = (*CHARACTER_STEPS, repair_hyphenation, collapse_whitespace)


def _is_word(ch: str) -> bool:
    return ch.isalnum() or ch == "_"


@lru_cache(maxsize=1)
def _joins_previous() -> frozenset[str]:
    """Starters (ccc 0) that NFC may still merge with what precedes them: second halves of canonical
    compositions, Hangul vowel/trailing jamo, and characters whose decomposition begins with a mark.
    Computed once, lazily (about 0.25 s), only when non-NFC text is met."""
    out = {chr(c) for c in (*range(0x1161, 0x1176), *range(0x11A8, 0x11C3))}
    for cp in range(0x110000):
        d = unicodedata.decomposition(chr(cp))
        if not d or d.startswith("<"):
            continue
        parts = [chr(int(h, 16)) for h in d.split()]
        if len(parts) == 2:
            out.add(parts[1])
        if unicodedata.combining(parts[0]):
            out.add(chr(cp))
    return frozenset(c for c in out if not unicodedata.combining(c))


def _starts_cluster(ch: str) -> bool:
    """NFC never merges ``ch`` with the text before it, so the text may be normalised in two halves."""
    return ch < "\x80" or (not unicodedata.combining(ch) and ch not in _joins_previous())


def _safe_blocks(text: str, start: int, stop: int, size: int):
    """Cut ``text[start:stop]`` into blocks of about ``size`` at points where NFC may work on each alone."""
    s = start
    while s < stop:
        e = min(s + size, stop)
        while e < stop and not _starts_cluster(text[e]):
            e += 1
        yield s, e
        s = e


def _nfc_clusters(text: str, s: int, e: int) -> list[Edit]:
    edits: list[Edit] = []
    start = s
    for i in range(s + 1, e + 1):
        if i == e or _starts_cluster(text[i]):
            cluster = text[start:i]
            fixed = unicodedata.normalize("NFC", cluster)
            if fixed != cluster:
                edits.append((start, i, fixed))
            start = i
    return edits
