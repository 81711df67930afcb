"""Structure of plain text, reStructuredText and Org: headings with levels, list items and
paragraphs, as blocks whose offsets point into the text itself (nothing is rewritten).

Headings in plain text, conservative so that prose gets none it does not have:
- numbered at the left margin: ``4.2.  Title``, ``4.2 Title``, ``A.1.  Title``, ``Appendix B.  Title``
  (level = number of parts). The title starts with a capital, has at most 14 words, no sentence
  punctuation at its end, no run of three spaces or dot leaders (a table of contents line or a page
  header); a one-part number (``3. Results``) counts only with two spaces after it (RFC style) or
  when a numbered sub-heading (``3.1``) exists, so a numbered list is not taken for headings;
- underlined: a line followed by a line of one repeated ``= - ~ ^ * # +`` at least as long as 60% of
  it; levels in order of first appearance (as reStructuredText does);
- a short ALL-CAPS line standing alone (``CHAPTER IV``), but not a line made only of names (``MARY``
  signing a letter, a speaker in a play) unless a heading is right above it (``CHAPTER I`` then
  ``MARY``): a word is a name when the text writes it capitalised inside a sentence (after a
  lower-case letter or a comma) and never in lower case;
- in a document whose paragraphs are indented (an RFC), a short line at the left margin standing
  alone (``Abstract``, ``Authors' Addresses``).
RFC 2616 style: after a multi-part number the title may start with a number (``10.1.1 100 Continue``),
and a one-part number with neither two spaces nor a sub-section (``11 Access Authentication``) counts
when it continues, written the same way, the sequence of accepted top-level numbers.
reStructuredText: section titles by underline (and optional overline), levels by order of
appearance. Org: ``*`` headings (level = stars). ``include`` directives are never followed.
"""
from __future__ import annotations

import re

from chunkwise.extract.builder import paragraph_spans
from chunkwise.types import Block

_LINE = re.compile(r"[^\n]*(?:\n|\Z)")
_NUMBERED = re.compile(r"(?:(?P<app>Appendix|Annex|Chapter|Section|Part)\s+)?(?P<num>(?:\d{1,3}|[A-Z])(?:\.\d{1,3})*)"
                       r"(?P<dot>\.?)(?P<gap>[ \t]+)(?P<title>\S.*?)\s*$")
_ADORN = re.compile(r"([=\-~^*#+`:'\"._])\1{2,}\s*$")
_CAPS = re.compile(r"[A-Z0-9][A-Z0-9 ,'&/()?:-]{2,78}[A-Z?)]\s*$")
_ORG_HEAD = re.compile(r"(\*+)[ \t]+(\S.*?)\s*$")
_BULLET = re.compile(r"[ \t]*(?:[-*+•◦▪o]|\(?\d{1,3}[.)]|\(?[a-z][.)])[ \t]+\S")
_BAD_END = (".", ",", ";", ":", "!")
_LEADERS = re.compile(r"\.{4,}|\s{3,}|\.\s\.\s\.")
_NUMBER_TITLE = re.compile(r"\d{1,4}[ \t]+\(?[A-Z]")
_WORDS = re.compile(r"[^\W\d_]+(?:'[^\W\d_]+)?")
_ROMAN = re.compile(r"M{0,4}(?:CM|CD|D?C{0,3})(?:XC|XL|L?X{0,3})(?:IX|IV|V?I{0,3})")


def lines(text: str, start: int = 0, end: int | None = None) -> list[tuple[int, str]]:
    """(offset, line without its newline) for each line of ``text[start:end]``."""
    end = len(text) if end is None else end
    out = []
    pos = start
    while pos < end:
        nl = text.find("\n", pos, end)
        stop = end if nl < 0 else nl
        out.append((pos, text[pos:stop].rstrip("\r")))
        pos = stop + 1
    return out


def blocks(text: str, flavour: str = "text", start: int = 0) -> list[Block]:
    """Heading, list item and paragraph blocks of ``text[start:]`` ("text", "rst" or "org")."""
    rows = lines(text, start)
    heads = _org_headings(rows) if flavour == "org" else _rst_headings(rows) if flavour == "rst" \
        else _text_headings(rows, text)
    out: list[Block] = []
    pos = start
    for a, b, level, title in heads:
        out += _body(text, pos, a)
        out.append(Block("heading", a, b, level, title))
        pos = b
    out += _body(text, pos, len(text))
    return out


def headings_of(text: str, flavour: str = "text") -> list[tuple[int, str]]:
    """(level, title) of each heading, for tests and benchmarks."""
    return [(b.level, b.text) for b in blocks(text, flavour) if b.kind == "heading"]


def _body(text: str, a: int, b: int) -> list[Block]:
    out = []
    for s, e in paragraph_spans(text, a, b):
        para = lines(text, s, e)
        if len(para) > 1 and all(_BULLET.match(line) for _, line in para[:1]) and \
                sum(bool(_BULLET.match(line)) for _, line in para) * 2 >= len(para):
            out += _items(text, para, e)
        elif _BULLET.match(para[0][1]):
            out.append(Block("list_item", s, e, _indent_level(para[0][1])))
        else:
            out.append(Block("paragraph", s, e))
    return out


def _items(text: str, para: list[tuple[int, str]], end: int) -> list[Block]:
    starts = [(o, line) for o, line in para if _BULLET.match(line)]
    out = []
    for n, (o, line) in enumerate(starts):
        stop = starts[n + 1][0] if n + 1 < len(starts) else end
        s = o + len(line) - len(line.lstrip())
        e = len(text[:stop].rstrip())
        out.append(Block("list_item", s, max(e, s), _indent_level(line)))
    return out


def _indent_level(line: str) -> int:
    return min(1 + (len(line) - len(line.lstrip(" \t"))) // 2, 6)


# -- plain text ----------------------------------------------------------------------------------------
def _text_headings(rows: list[tuple[int, str]], text: str) -> list[tuple[int, int, int, str]]:
    found: dict[int, tuple[int, int, int, str]] = {}
    names = _Names(text)
    numbered = []
    indented = _mostly_indented(rows)
    adorn_rank: dict[str, int] = {}
    for i, (off, line) in enumerate(rows):
        if not line.strip() or not _alone_before(rows, i):
            continue
        nxt = rows[i + 1][1] if i + 1 < len(rows) else ""
        under = _ADORN.match(nxt.strip()) if nxt.strip() and line[:1] not in " \t" else None
        if under and len(nxt.strip()) >= max(3, 0.6 * len(line.strip())) and len(line.strip()) <= 100 \
                and not _ADORN.match(line.strip()) and _alone_after(rows, i + 1):
            rank = adorn_rank.setdefault(under.group(1), len(adorn_rank) + 1)
            found[i] = (off, rows[i + 1][0] + len(nxt), min(rank, 6), line.strip())
            continue
        if not _alone_after(rows, i) and not _next_is_body(rows, i, indented):
            continue
        m = _NUMBERED.match(line) if line[:1] not in " \t" else None
        if m and _title_ok(m.group("title"), digits="." in m.group("num")):
            parts = m.group("num").split(".")
            if parts[0].isalpha() and len(parts) == 1 and not m.group("app"):
                continue  # "A. Smith" is a name, not appendix A
            numbered.append((i, off, line, m, parts))
            continue
        stripped = line.strip()
        if _CAPS.fullmatch(stripped) and len(stripped.split()) <= 10 and _alone_after(rows, i) \
                and (_after_heading(rows, i, found) or not names.only_names(stripped)):
            found[i] = (off, off + len(line), 1, stripped)
        elif indented and line[:1] not in " \t" and _title_ok(stripped) and len(stripped) <= 60 \
                and _alone_after(rows, i) and stripped[:1].isupper():
            found[i] = (off, off + len(line), 1, stripped)
    for i, off, line, m, parts in _numbered_headings(numbered):
        found[i] = (off, off + len(line), min(len(parts), 6), line.strip())
    return [found[i] for i in sorted(found)]


def _numbered_headings(numbered: list) -> list:
    """The numbered candidates that are headings. A one-part number (``3. Results``) may be a list
    item: it counts with two spaces after it (RFC style), with a sub-section (``3.1``), or when it
    continues, written the same way, the sequence of accepted top-level numbers in a document that
    has sub-sections (RFC 2616's ``10``, ``11 Access Authentication``, ``12``, where 11 has none)."""
    multi = {p[0] for *_, p in numbered if len(p) > 1}
    ok = [len(p) > 1 or m.group("app") or len(m.group("gap")) >= 2 or p[0] in multi for _, _, _, m, p in numbered]
    top = {(p[0], m.group("dot")) for (*_, m, p), y in zip(numbered, ok) if y and len(p) == 1 and p[0].isdigit()}
    grew = bool(multi)
    while grew:
        grew = False
        for n, (*_, m, p) in enumerate(numbered):
            if not ok[n] and p[0].isdigit() and not m.group("app") and \
                    any((str(int(p[0]) + d), m.group("dot")) in top for d in (-1, 1)):
                ok[n] = grew = True
                top.add((p[0], m.group("dot")))
    return [c for c, y in zip(numbered, ok) if y]


def _title_ok(title: str, digits: bool = False) -> bool:
    """A title: capitalised, short, no sentence end, no leaders. ``digits``: it may start with a number
    followed by a capitalised word (``100 Continue``, under a multi-part section number)."""
    t = title.strip()
    if not t or len(t.split()) > 14 or len(t) > 100 or _LEADERS.search(t):
        return False
    if not (t[:1].isupper() or (digits and _NUMBER_TITLE.match(t))):
        return False
    return not t.endswith(_BAD_END)


class _Names:
    """Which capitalised words of a text are names: written capitalised after a lower-case letter or a
    comma (inside a sentence) and never in lower case. A short line of names alone (``MARY`` under a
    letter, ``HAMLET`` above a speech) signs or labels text; it does not title a section. Each word
    costs one scan of the text, so at most ``LIMIT`` distinct words are looked up per document (past
    that a line is taken as a title, as before this rule)."""

    LIMIT = 64

    def __init__(self, text: str):
        self.text = text
        self.seen: dict[str, bool] = {}

    def only_names(self, line: str) -> bool:
        words = [w for w in _WORDS.findall(line) if len(w) > 1 and not _ROMAN.fullmatch(w.upper())]
        return 0 < len(words) <= 3 and all(self.is_name(w) for w in words)

    def is_name(self, word: str) -> bool:
        w = word.lower()
        if w not in self.seen:
            if len(self.seen) >= self.LIMIT:
                return False
            self.seen[w] = self._scan(w)
        return self.seen[w]

    def _scan(self, w: str) -> bool:
        text, name = self.text, False
        for m in re.finditer(f"(?:{re.escape(w)}|{re.escape(w[:1].upper() + w[1:])})(?![^\\W_])", text):
            s = m.start()
            if s and (text[s - 1].isalnum() or text[s - 1] == "_"):
                continue  # inside a longer word
            if m.group()[0].islower():
                return False
            k = s - 1
            while not name and k >= 0 and text[k].isspace():
                k -= 1
            name = name or (k >= 0 and k < s - 1 and (text[k] in ",;" or text[k].islower()))
        return name


def _after_heading(rows, i: int, found: dict) -> bool:
    """The nearest line above with text is a heading (``CHAPTER I`` above a title that is a name)."""
    j = i - 1
    while j >= 0 and not rows[j][1].strip():
        j -= 1
    return j in found


def _alone_before(rows, i: int) -> bool:
    return i == 0 or not rows[i - 1][1].strip() or rows[i - 1][1].startswith("\f")


def _alone_after(rows, i: int) -> bool:
    return i + 1 >= len(rows) or not rows[i + 1][1].strip()


def _next_is_body(rows, i: int, indented: bool) -> bool:
    """RFC headings may be followed directly by indented body text."""
    return indented and i + 1 < len(rows) and rows[i + 1][1][:1] in (" ", "\t")


def _mostly_indented(rows) -> bool:
    text_lines = [line for _, line in rows if line.strip()]
    if len(text_lines) < 8:
        return False
    return sum(line[:1] in " \t" for line in text_lines) >= 0.5 * len(text_lines)


# -- reStructuredText and Org -----------------------------------------------------------------------------
def _rst_headings(rows: list[tuple[int, str]]) -> list[tuple[int, int, int, str]]:
    out = []
    styles: dict[tuple[str, bool], int] = {}
    i, n = 0, len(rows)
    in_literal = False
    while i < n:
        off, line = rows[i]
        if line.rstrip().endswith("::") or line.startswith(".. code"):
            in_literal = True
        elif line.strip() and line[:1] not in " \t":
            in_literal = False
        over = _ADORN.fullmatch(line) if not in_literal else None
        if over and i + 2 < n and rows[i + 1][1].strip() and _ADORN.fullmatch(rows[i + 2][1]) \
                and rows[i + 2][1][0] == line[0] and _alone_before(rows, i):
            key = (line[0], True)
            title = rows[i + 1][1].strip()
            out.append((off, rows[i + 2][0] + len(rows[i + 2][1]), key, title))
            i += 3
            continue
        if not in_literal and line.strip() and line[:1] not in " \t" and i + 1 < n and _alone_before(rows, i):
            under = rows[i + 1][1]
            if _ADORN.fullmatch(under) and len(under.rstrip()) >= len(line.rstrip()) and not _ADORN.fullmatch(line):
                out.append((off, rows[i + 1][0] + len(under), (under[0], False), line.strip()))
                i += 2
                continue
        i += 1
    result = []
    for a, b, key, title in out:
        result.append((a, b, min(styles.setdefault(key, len(styles) + 1), 6), title))
    return result


def _org_headings(rows: list[tuple[int, str]]) -> list[tuple[int, int, int, str]]:
    out = []
    in_block = False
    for off, line in rows:
        low = line.lstrip().lower()
        if low.startswith("#+begin_"):
            in_block = True
        elif low.startswith("#+end_"):
            in_block = False
        elif not in_block and (m := _ORG_HEAD.match(line)):
            out.append((off, off + len(line), min(len(m.group(1)), 6), m.group(2)))
    return out


def org_title(text: str) -> str:
    m = re.search(r"^#\+TITLE:[ \t]*(\S.*?)\s*$", text[:4096], re.M | re.I)
    return m.group(1) if m else ""
