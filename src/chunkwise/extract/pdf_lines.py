"""One PDF page → text lines in reading order, each with font size, boldness and position.

pypdf's plain mode gives text in content-stream order; its ``visitor_text`` reports every piece of
that text with its font and matrices, and the pieces concatenate to the page text, so every
character gets a size, a font and a position without matching strings. Only upright text is read
(``orientations=(0,)``): a rotated margin stamp such as "arXiv:2004.04906v3 [cs.CL]" is not page
content. Two columns written a line at a time (left line, right line, ...) share a stream line;
such lines are split where the text jumps across the page middle, and the page is re-ordered left
column first. A page written a column at a time is already in reading order and stays as it is.
"""
from __future__ import annotations

import math
import re
from collections import Counter
from typing import NamedTuple

BOLD_MARKS = ("bold", "black", "heavy", "semibold", "demi", "cmbx", "cmb10", "-bd", "bd-")
# TeX's bold extended faces (CMBX, SFBX, LMRomanBX...: "bx" then the design size) and URW's "Medi"
_BOLD_FACE = re.compile(r"bx\d|bx$|-medi$|-medi[,-]")
INVISIBLE_MODES = (3, 7)  # text render modes that paint nothing: neither fill nor stroke
COLUMN_MIN_LINES = 3  # right-column segments needed before a page counts as two columns
CHAR_WIDTH_EM = 0.45  # a rough average glyph width, to tell a column jump from a word gap
# A broken ToUnicode map can yield half a surrogate pair: no encoder accepts it (JSON, SQLite, UTF-8
# files), so it becomes U+FFFD, one character for one, and is counted with the replacement characters.
_SURROGATE = re.compile("[\ud800-\udfff]")


class Line(NamedTuple):
    text: str
    size: float  # dominant effective font size in points, 0 when unknown
    y: float | None  # baseline, PDF user space (larger is higher on the page)
    x: float | None  # left edge of the first glyph
    bold: bool = False
    italic: bool = False
    # (x0, y low, x1, y high) in PDF user space: from glyph origins and the font size, without font
    # metrics (the right edge is an estimate, ``GLYPH_EM`` a glyph); None when positions are unknown
    box: tuple[float, float, float, float] | None = None


class _Char(NamedTuple):
    size: float
    x: float | None
    y: float | None
    bold: bool
    italic: bool = False
    advance: float = 0.0  # the piece's mean glyph advance, user space (0: unknown, ``GLYPH_EM`` is used)


_UNKNOWN = _Char(0.0, None, None, False)
ITALIC_MARKS = ("italic", "oblique", "-it", "cmti", "slanted")
COLUMN_ALIGN = 3.0  # points: right-column lines of a real second column start this close to each other
GLYPH_EM = 0.5  # a line box's estimated glyph width (ems), from the last glyph origin known to its right edge
ASCENT, DESCENT = 0.8, 0.25  # ems above and below the baseline that a line box covers


def page_lines(pypdf, page, width: float, stats: dict | None = None) -> tuple[list[Line], int]:
    """The page's lines in reading order and its count of drawn rules (``re``/``l`` operators: a
    ruled table has many). Raises pypdf's errors for a broken content stream. ``stats``, when given,
    receives ``chars`` and ``hidden``: characters drawn, and of them those drawn invisible (text
    render mode 3 or 7), which are read like any text but which nobody looking at the page sees."""
    pieces: list[tuple[str, _Char]] = []
    rules = [0]
    mode, saved = [0], []
    drawn = {"chars": 0, "hidden": 0}

    def count(op, args, cm, tm):  # noqa: ARG001 - pypdf's visitor signature
        if op in (b"re", b"l"):
            rules[0] += 1
        elif op == b"Tr" and args:
            try:
                mode[0] = int(args[0])
            except (TypeError, ValueError):
                pass
        elif op == b"q":
            saved.append(mode[0])
        elif op == b"Q" and saved:
            mode[0] = saved.pop()

    fonts: dict[int, object] = {}

    def visit(text, cm, tm, font_dict, font_size):  # noqa: ARG001 - pypdf's visitor signature
        visible = len(text.strip()) if text else 0
        drawn["chars"] += visible
        drawn["hidden"] += visible if mode[0] in INVISIBLE_MODES else 0
        if text:
            m = _times(tm, cm)
            name = str((font_dict or {}).get("/BaseFont", "")).lower()
            size = abs(float(font_size or 0)) * math.hypot(m[2], m[3])
            bold = any(b in name for b in BOLD_MARKS) or bool(_BOLD_FACE.search(name))
            italic = any(i in name for i in ITALIC_MARKS)
            em = _em(fonts, font_dict, text) * abs(float(font_size or 0)) * math.hypot(m[0], m[1])
            pieces.append((text, _Char(size, m[4], m[5], bold, italic, em)))

    raw = page.extract_text(visitor_text=visit, visitor_operand_before=count, orientations=(0,))
    if not raw.strip() and pieces:  # only rotated text (a landscape page set sideways): read it all
        pieces.clear()
        drawn.update(chars=0, hidden=0)
        mode[0], saved[:] = 0, []
        raw = page.extract_text(visitor_text=visit, visitor_operand_before=count)
        rules[0] //= 2  # counted on both passes
    if stats is not None:
        stats.update(drawn)
    chars = _char_props(raw, pieces)
    rows: list[list[Line]] = []
    pos = 0
    for part in raw.split("\n"):
        rows.append(_segments(part, chars[pos : pos + len(part)], width))
        pos += len(part) + 1
    lines = _reading_order(rows, width)
    while lines and not lines[-1].text:
        lines.pop()
    while lines and not lines[0].text:
        lines.pop(0)
    return lines, rules[0]


def _em(fonts: dict, font_dict, text: str) -> float:
    """The mean advance of ``text``'s glyphs in ems, from the font's widths (its /Widths, or the
    standard 14 fonts' metrics pypdf knows); 0 when unknown. Only simple fonts: a composite font's
    widths are by glyph id, which the decoded text does not give."""
    key = id(font_dict)
    if key not in fonts:
        fonts[key] = None
        try:
            if font_dict is not None and font_dict.get("/Subtype") != "/Type0":
                fonts[key] = _unicode_widths(font_dict)
        except Exception:  # noqa: BLE001 - a font pypdf cannot measure: the estimate stands
            fonts[key] = None
    widths = fonts[key]
    if not widths or not text:
        return 0.0
    default = widths.get("default", 500)
    return sum(widths.get(ch, default) for ch in text) / 1000 / len(text)


def _unicode_widths(font_dict) -> dict[str, float]:
    """A simple font's glyph widths (thousandths of an em) by the character the text decodes to:
    pypdf keeps them by character code, which is the character only in a standard encoding (a
    subset font numbers its glyphs 33, 34, ...: its ToUnicode map says what each code reads as)."""
    from pypdf.generic._font import Font

    font = Font.from_font_resource(font_dict)
    widths = font.character_widths
    out = {"default": widths.get("default", 500)}
    if font.character_map:
        pairs = font.character_map.items()
    elif isinstance(font.encoding, dict):
        pairs = ((chr(code), uni) for code, uni in font.encoding.items() if isinstance(code, int))
    else:
        return widths
    for code, uni in pairs:
        if code in widths and isinstance(uni, str) and len(uni) == 1:
            out.setdefault(uni, widths[code])
    return out


def _times(a, b) -> list[float]:
    """PDF matrix product a × b for [a b c d e f] matrices (text matrix then CTM)."""
    a, b = [float(v) for v in a], [float(v) for v in b]
    return [a[0] * b[0] + a[1] * b[2], a[0] * b[1] + a[1] * b[3],
            a[2] * b[0] + a[3] * b[2], a[2] * b[1] + a[3] * b[3],
            a[4] * b[0] + a[5] * b[2] + b[4], a[4] * b[1] + a[5] * b[3] + b[5]]


def _char_props(raw: str, pieces: list[tuple[str, _Char]]) -> list[_Char]:
    """Per-character properties; all unknown when the pieces do not spell the page text."""
    if "".join(p[0] for p in pieces) != raw:
        return [_UNKNOWN] * len(raw)
    out: list[_Char] = []
    for text, props in pieces:
        out += [props] * len(text)
    return out


def _segments(part: str, chars: list[_Char], width: float) -> list[Line]:
    """One stream line, split where a new piece starts across the page middle after the previous
    piece ended (a left-column line and a right-column line on one baseline)."""
    cuts = [0]
    middle = width * 0.45
    for i in range(1, len(part)):
        a, b = chars[i - 1], chars[i]
        if b is a or b.x is None or a.x is None or not width:
            continue  # the same piece (or unknown positions): never a cut
        start = chars[cuts[-1]].x
        run = i - cuts[-1]
        est_end = (start or 0.0) + run * a.size * CHAR_WIDTH_EM
        if start is not None and start < middle <= b.x and est_end <= b.x + a.size:
            cuts.append(i)
    cuts.append(len(part))
    return [_line(part[s:e], chars[s:e]) for s, e in zip(cuts, cuts[1:])] or [_line("", [])]


def _line(part: str, chars: list[_Char]) -> Line:
    text = _SURROGATE.sub("\ufffd", part.strip())
    if not text:
        return Line("", 0.0, None, None)
    counts = Counter(round(c.size * 2) / 2 for ch, c in zip(part, chars) if not ch.isspace())
    first = len(part) - len(part.lstrip())
    visible = [c for ch, c in zip(part, chars) if not ch.isspace()]
    bold = sum(c.bold for c in visible) >= 0.8 * len(visible)
    italic = sum(c.italic for c in visible) >= 0.8 * len(visible)
    return Line(text, counts.most_common(1)[0][0], chars[first].y, chars[first].x, bold, italic, _box(part, chars))


def _box(part: str, chars: list[_Char]) -> tuple[float, float, float, float] | None:
    """A line's box: every run of characters drawn by one text piece starts at the piece's origin and
    runs the piece's mean glyph advance per character (``GLYPH_EM`` when the font's widths are
    unknown); the height is ``ASCENT`` over and ``DESCENT`` under the baseline. Why estimates: pypdf
    reports where a piece starts, not where each glyph is."""
    x0 = x1 = lo = hi = None
    i = 0
    while i < len(part):
        c, j = chars[i], i
        while j < len(part) and chars[j] is c:
            j += 1
        run = part[i:j]
        seen = len(run.rstrip())
        if c.x is not None and c.y is not None and seen:
            end = c.x + seen * (c.advance or c.size * GLYPH_EM)
            x0 = c.x if x0 is None else min(x0, c.x)
            x1 = end if x1 is None else max(x1, end)
            lo = c.y - DESCENT * c.size if lo is None else min(lo, c.y - DESCENT * c.size)
            hi = c.y + ASCENT * c.size if hi is None else max(hi, c.y + ASCENT * c.size)
        i = j
    return None if x0 is None else (x0, lo, x1, hi)


def union(boxes) -> tuple[float, float, float, float] | None:
    """The smallest box around the given ones (None entries skipped; None when there are none)."""
    known = [b for b in boxes if b is not None]
    if not known:
        return None
    return (min(b[0] for b in known), min(b[1] for b in known), max(b[2] for b in known), max(b[3] for b in known))


def _reading_order(rows: list[list[Line]], width: float) -> list[Line]:
    """Left column before right column where stream lines hold both; else stream order."""
    right = [i for i, segs in enumerate(rows) if len(segs) > 1]
    if len(right) < COLUMN_MIN_LINES or not _column_edge(rows, right):
        return [s for segs in rows for s in _merge(segs)]
    first, last = right[0], right[-1]
    middle = width * 0.45
    left_col, right_col = [], []
    for segs in rows[first : last + 1]:
        for s in segs:
            (right_col if s.x is not None and s.x >= middle else left_col).append(s)
    before = [s for segs in rows[:first] for s in _merge(segs)]
    after = [s for segs in rows[last + 1 :] for s in _merge(segs)]
    return before + left_col + [Line("", 0.0, None, None)] + right_col + after


def _column_edge(rows: list[list[Line]], right: list[int]) -> bool:
    """Whether the text cut off across the page middle starts at one left edge on enough lines to be
    a second column. A long line in one column (a bold heading whose end is estimated short, "The
    Birth of Word Processing (1960s - 1970s)") is cut at some x of its own, and is no column."""
    starts = sorted(s.x for i in right for s in rows[i][1:2] if s.x is not None)
    best = 0
    for k, x in enumerate(starts):
        best = max(best, sum(1 for y in starts[k:] if y - x <= COLUMN_ALIGN))
    return best >= COLUMN_MIN_LINES


def _merge(segs: list[Line]) -> list[Line]:
    """Outside the two-column band a split line is one line again."""
    if len(segs) == 1:
        return segs
    first = segs[0]
    return [first._replace(text=" ".join(s.text for s in segs if s.text), box=union(s.box for s in segs))]
