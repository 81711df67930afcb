"""Which PDF lines are headings, and at what level.

The outline (bookmarks), when the PDF has one, is the author's own table of contents: its titles,
found on their pages, are the headings and font sizes are not consulted. Otherwise font statistics:
lines clearly larger than the body size are headings ranked by size, and bold lines numbered like
sections ("2.1 Data") are headings at body size, as in most papers. What must not become a
heading: running heads (the same line on many pages), figure text (large labels with no body text
after them), page numbers and long banner lines. Rotated margin stamps never reach this module.
"""
from __future__ import annotations

import re
from collections import Counter

from chunkwise.extract.pdf_lines import Line

HEADING_RATIO = 1.15  # a line this much larger than the body size is a heading
MARKED_RATIO = 1.05  # ... or this much larger when it is bold or numbered ("(2) Scope", "3.1 Data")
MAX_BOLD_WORDS = 12  # a bold line at body size standing alone is a heading up to this many words
MAX_HEADING_CHARS = 150  # longer "large" lines are pull quotes or banners, not headings
MAX_HEADING_SHARE = 0.4  # when more lines than this look like headings, size says nothing
MAX_HEADING_LINES = 3  # a heading wraps over at most this many lines
ALONE_GAP = 1.4  # a gap this much wider than the page's usual line gap sets a line apart from the one above
RUN_ON_SHARE = 0.85  # a line at least this long relative to the next one, at the same x, opens a paragraph
RUNNING_SHARE = 0.5  # a line on this share of the pages (and at least two) is a running head/foot
_NUMBERED = re.compile(r"^(?:(\d{1,2}(?:\.\d{1,2}){0,4})\.?|([A-Z])\.|([IVX]{1,5})\.)\s+[A-Z][^\s]*")
_MARKED = re.compile(r"^(?:\(\d{1,2}\)|\d{1,2}(?:\.\d{1,2}){0,4}\.?|[A-Z]\.|[IVX]{1,5}\.)\s+\S")
_LIST_MARK = re.compile(r"^[•◦▪‣∙·*–—-]|^\(?[a-z0-9]\)\s")
_SENTENCE_END = re.compile(r"[.,;!?]$")
_DIGITS = re.compile(r"\d+")
_WS = re.compile(r"\s+")


def heading_shaped(text: str) -> bool:
    """Short and wordy: a large page number or a long banner line is not a heading."""
    return 0 < len(text) <= MAX_HEADING_CHARS and sum(ch.isalpha() for ch in text) >= 2


def running_lines(pages: list[list[Line]]) -> set[str]:
    """Lines (digits ignored) that recur on many pages: running heads and footers."""
    if len(pages) < 2:
        return set()
    seen = Counter()
    for lines in pages:
        seen.update({_key(ln.text) for ln in lines if ln.text})
    need = max(2, RUNNING_SHARE * len(pages))
    return {k for k, n in seen.items() if n >= need}


def _key(text: str) -> str:
    return _WS.sub(" ", _DIGITS.sub("#", text)).strip().casefold()


def font_levels(pages: list[list[Line]], running: set[str]) -> tuple[float, dict[float, int]]:
    """(body size, font size → heading level with the largest size = 1), or {} when size does not
    mark headings in this document."""
    lines = [ln for page in pages for ln in page if ln.text]
    body = Counter()
    for line in lines:
        if line.size:
            body[line.size] += len(line.text)
    if not body:
        return 0.0, {}
    body_size = body.most_common(1)[0][0]
    heads = [ln for ln in lines if _large(ln, body_size) and heading_shaped(ln.text) and _key(ln.text) not in running]
    if not heads or len(heads) > MAX_HEADING_SHARE * len(lines):
        return body_size, {}
    sizes = sorted({ln.size for ln in heads}, reverse=True)
    return body_size, {size: min(rank, 6) for rank, size in enumerate(sizes, 1)}


def _large(line: Line, body: float) -> bool:
    """Larger than the body text by enough to mark a heading: clearly, or a little when bold or
    numbered like "(2) Scope" (a bold "2.1 Data" near body size takes its depth from its number)."""
    if line.size >= body * HEADING_RATIO:
        return True
    if _NUMBERED.match(line.text) and line.bold and line.size <= body * (1 + 0.15):
        return False
    return line.size >= body * MARKED_RATIO and (line.bold or bool(_MARKED.match(line.text)))


def font_headings(pages: list[list[Line]]) -> list[list[int]]:
    """Per page, the heading level of each line (0 = not a heading) from font statistics: sizes
    ranked (figure text and running heads left out), then bold numbered sections below them."""
    running = running_lines(pages)
    body, levels = font_levels(pages, running)
    sized = [_sized(lines, levels, running, body) for lines in pages]
    used = sorted({lv for page in sized for lv in page if lv})
    rank = {lv: i for i, lv in enumerate(used, 1)}  # sizes that only figures used leave no gap
    out = []
    for lines, page in zip(pages, sized):
        row = [rank.get(lv, 0) for lv in page]
        usual = usual_gap(lines)
        for i, line in enumerate(lines):
            if not row[i] and (depth := _numbered_depth(line, body, running)):
                row[i] = min(6, len(used) + depth)
            elif not row[i] and _bold_alone(lines, i, body, running, usual):
                row[i] = min(6, len(used) + 1)
        out.append(row)
    return out


def _sized(lines: list[Line], levels: dict[float, int], running: set[str], body: float) -> list[int]:
    out = [0] * len(lines)
    for i, line in enumerate(lines):
        if line.text and heading_shaped(line.text) and _key(line.text) not in running:
            out[i] = levels.get(line.size, 0)
    _drop_figure_text(lines, out, body)
    return out


def _numbered_depth(line: Line, body: float, running: set[str]) -> int:
    """"2.1 Data" set bold at body size is a section heading of depth 2; 0 when not such a line."""
    if not (line.bold and body and abs(line.size - body) <= 0.15 * body and heading_shaped(line.text)):
        return 0
    if _key(line.text) in running or len(line.text.split()) > 12 or not (m := _NUMBERED.match(line.text)):
        return 0
    return m.group(1).count(".") + 1 if m.group(1) else 1


def _bold_alone(lines: list[Line], i: int, body: float, running: set[str], usual: float = 0.0) -> bool:
    """A bold line at body size standing alone: a short title-like line (capital or digit first, no
    sentence punctuation at its end, no list marker, not as long as the line under it: that is a
    paragraph opening with a bold name, "Jim Bainbridge is a senior ...") after a paragraph break (a blank, a bold line,
    the page top, or a gap wider than the page's usual line gap) and before text that is not bold:
    "Key Features That Changed Word Processing" above its paragraph. An italic line counts too when
    its words are capitalised like a title ("Boots Self-Locking Nut" in a handbook set in roman)."""
    line = lines[i]  # a script without capitals (Arabic, Korean) passes the capital-first test
    text = line.text.strip()
    italic = line.italic and not line.bold and _title_case(text)
    if not ((line.bold or italic) and body and abs(line.size - body) <= 0.15 * body and heading_shaped(text)):
        return False
    if (len(text.split()) > MAX_BOLD_WORDS or _key(text) in running or _LIST_MARK.match(text)
            or _SENTENCE_END.search(text) or text[0].islower() or not (text[0].isalpha() or text[0].isdigit())):
        return False
    before = lines[i - 1] if i else None
    after = next((ln for ln in lines[i + 1:] if ln.text), None)
    gap = (before.y - line.y) if before is not None and before.y is not None and line.y is not None else 0.0
    alone_above = (before is None or not any(ch.isalnum() for ch in before.text) or (before.bold and not italic)
                   or (usual > 0 and gap > usual * ALONE_GAP))
    emphasised = (lambda ln: ln.italic) if italic else (lambda ln: ln.bold)
    runs_on = (after is not None and after.x == line.x and len(after.text) >= MAX_BOLD_WORDS
               and len(text) >= RUN_ON_SHARE * len(after.text))  # a drop cap ("T") is no line of text
    return alone_above and after is not None and not emphasised(after) and not runs_on


def _title_case(text: str) -> bool:
    """Every word of four letters or more starts with a capital, and there are two such words."""
    long_words = [w for w in re.findall(r"[^\W\d_][\w'’-]*", text) if len(w) >= 4]
    return len(long_words) >= 2 and all(w[0].isupper() for w in long_words)


def usual_gap(lines: list[Line]) -> float:
    """The page's most common distance between one line's baseline and the next's."""
    gaps = Counter(round(a.y - b.y) for a, b in zip(lines, lines[1:])
                   if a.y is not None and b.y is not None and a.y > b.y)
    return float(gaps.most_common(1)[0][0]) if gaps else 0.0


def _drop_figure_text(lines: list[Line], out: list[int], body_size: float) -> None:
    """A run of heading lines must be followed by body-sized text, another heading, or the page
    end; large labels followed by more non-body fragments (axis labels, ticks) are figure text."""
    i = 0
    while i < len(lines):
        if not out[i]:
            i += 1
            continue
        j = i
        while j + 1 < len(lines) and out[j + 1] == out[i] and lines[j + 1].text and lines[j + 1].size == lines[i].size:
            j += 1
        nxt = next((k for k in range(j + 1, len(lines)) if lines[k].text), None)
        body_next = nxt is None or out[nxt] or not lines[nxt].size or not body_size or (
            abs(lines[nxt].size - body_size) <= 0.15 * body_size)
        if j - i + 1 > MAX_HEADING_LINES or not body_next:
            for k in range(i, j + 1):
                out[k] = 0
        i = j + 1


def respace(text: str, words: list[str]) -> str:
    """``text`` cut into ``words`` (the words found on its row by position) and joined by single
    spaces, so two words it glued together are apart again; ``text`` unchanged unless every part of
    it is one of the words."""
    pool = Counter(w for w in words if w)
    parts: list[str] = []
    i = 0
    while i < len(text):
        if text[i].isspace():
            i += 1
            continue
        word = max((w for w, n in pool.items() if n and text.startswith(w, i)), key=len, default=None)
        if word is None:
            return text
        pool[word] -= 1
        parts.append(word)
        i += len(word)
    return " ".join(parts)


def outline_entries(pypdf, reader) -> list[tuple[str, int, int]]:
    """(title, 0-based page index, level) for every bookmark that points at a page."""
    try:
        outline = reader.outline
    except (pypdf.errors.PyPdfError, KeyError, ValueError, TypeError, AttributeError, RecursionError):
        return []
    out: list[tuple[str, int, int]] = []
    stack = [(item, 1) for item in reversed(list(outline or []))]
    while stack and len(out) < 10_000:
        item, level = stack.pop()
        if isinstance(item, list):
            # a nested list holds the children of the entry before it
            stack.extend((child, level + 1) for child in reversed(item))
            continue
        try:
            page = reader.get_destination_page_number(item)
            title = _WS.sub(" ", str(item.title or "")).strip()
        except (pypdf.errors.PyPdfError, KeyError, ValueError, TypeError, AttributeError):
            continue
        if title and page is not None and page >= 0:
            out.append((title, page, min(level, 6)))
    return out


def outline_headings(lines: list[Line], entries: list[tuple[str, int]]) -> list[int]:
    """Heading level per line from this page's bookmarks: a line that reads as the title."""
    out = [0] * len(lines)
    for title, level in entries:
        want = _WS.sub(" ", title).casefold()
        for i, line in enumerate(lines):
            if not out[i] and line.text and _WS.sub(" ", line.text).casefold() in (want, want.rstrip(".")):
                out[i] = level
                break
    return out
