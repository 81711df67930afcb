"""The HTML tree walk: visible elements → candidate blocks (headings, paragraphs, list items, code,
tables) in reading order, each with the share of its text that sits inside links.

Candidates are not yet text: ``html_main`` decides which of them are the page's main content and
``emit`` writes the kept ones, so every offset points into the text that is finally returned.
The walk skips non-content (script, style, forms, ...), page chrome and everything hidden, with an
explicit stack (deep nesting cannot overflow).
"""
from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field

from chunkwise.extract.builder import TextBuilder

NEVER = frozenset({"script", "style", "iframe", "noscript", "template", "svg", "head", "object",
                   "embed", "canvas", "button", "select", "textarea", "input", "math"})
CHROME = frozenset({"nav", "aside", "footer"})
_CHROME_ROLES = frozenset({"navigation", "banner", "contentinfo", "complementary", "search"})
HEADINGS = {f"h{n}": n for n in range(1, 7)}
_BLOCKS = frozenset({"address", "article", "blockquote", "body", "dd", "details", "dialog", "div", "dl",
                     "dt", "fieldset", "figcaption", "figure", "header", "hr", "html", "li", "main", "ol",
                     "p", "section", "summary", "ul", "center", "hgroup", "aside", "nav", "footer"})
# Hidden is anything a reader never sees: hidden text is a classic prompt-injection carrier.
_HIDDEN_STYLE = re.compile(
    r"display\s*:\s*none|visibility\s*:\s*(?:hidden|collapse)"
    r"|(?:opacity|font-size|line-height|max-height|max-width)\s*:\s*(?:0+(?:\.0*)?|\.0+)[a-z%]*\s*(?:;|!|$)"
    r"|font-size\s*:\s*(?:0*\.\d+|1)(?:px|pt)\s*(?:;|!|$)"  # 1px text is unreadable
    r"|(?:^|[;\s])(?:left|top|right|bottom|text-indent|margin-left|margin-top)\s*:\s*-\d{3,}"  # off-screen
    r"|(?:^|[;\s])(?:left|top)\s*:\s*\d{5,}"
    r"|clip\s*:\s*rect\(\s*0[a-z]*\s*,?\s*0[a-z]*\s*,?\s*0[a-z]*\s*,?\s*0[a-z]*\s*\)"
    r"|clip-path\s*:\s*inset\(\s*(?:50|100)%"
    r"|(?:^|[;\s])color\s*:\s*(?:transparent|rgba\([^)]*,\s*0(?:\.0*)?\s*\)|#[0-9a-f]{6}00\b|#[0-9a-f]{3}0\b)"
    r"|transform\s*:\s*scale\(\s*0(?:\.0*)?\s*\)",
    re.I)
_HIDDEN_CLASS = re.compile(r"(?:^|\s)(?:sr-only|visually-hidden|visuallyhidden|screen-reader-text"
                           r"|screen-reader-only|hidden|hide|d-none|invisible|offscreen)(?:\s|$)", re.I)
# Page furniture that sits *inside* articles: Wikipedia's "[edit]" links, share-button bars.
_FURNITURE_CLASS = re.compile(r"(?:^|\s)(?:mw-editsection|share|shares|sharing|share-buttons|social-share"
                              r"|social-sharing|sharedaddy|addtoany|a2a_kit|shariff|print-link)(?:\s|$)", re.I)
WRAPPER_PARAGRAPHS = 3  # an element of a furniture class holding this many <p> is content
_WS = re.compile(r"[ \t\n\r\f]+")
# A soft hyphen only marks where a browser may break a word; a reader sees the word whole (the judge,
# trafilatura, reads it whole too: kept in, a hyphenated page's words match neither it nor a search)
_UNSEEN = str.maketrans("", "", "\xad")
_LANG_CLASS = re.compile(r"(?:^|\s)(?:language|lang)-([\w+#.-]+)")
_PROSE = "p, h1, h2, h3, h4, h5, h6, article, main"
_MAIN = "article, main, [role=main]"
_EXIT = object()  # stack marker: leaving a block container
_GAP = object()  # stack marker: a space after a block's text
_SEPARATED = _BLOCKS | frozenset(HEADINGS) | frozenset({"td", "th", "tr", "table", "caption", "pre", "thead",
                                                        "tbody", "tfoot"})
FURNITURE = "furniture"  # the role of a page block that is not main content (see normalise.furniture)
_MAX_SPAN = 64  # colspan / rowspan beyond this are hostile or broken: capped
_MAX_SPANNED = 100_000  # cells a table's spans may cover; past it spans are ignored (no text amplification)


@dataclass
class Candidate:
    kind: str  # heading | paragraph | list_item | code | table | caption
    body: str = ""
    level: int = 0
    title: str = ""
    meta: dict = field(default_factory=dict)
    rows: list[list[str]] | None = None  # a table's cell texts
    links: float = 0.0  # share of the text inside <a>
    chrome: bool = False  # found inside nav/aside/footer/a page header (walked only when judged)
    marker: str = ""  # an ordered list item's number as the reader sees it ("3."); not judged, written
    box: int = 0  # the block container (div, section, ul, ...) its element sits in: which blocks are siblings

    @property
    def plain(self) -> str:
        if self.rows is not None:  # a table: its cells once each (spans repeat them in ``rows``)
            return self.title or " ".join(c for r in self.rows for c in r)
        return self.body


def seen(text_node) -> str:
    """A text node's text as a reader sees it: soft hyphens out, and composed (NFC). A page written in
    decomposed form (``u`` + U+0308 for ``ü``) looks the same, but its words would match neither the
    judge's text (trafilatura composes its output) nor a search for the word."""
    text = (text_node.text_content or "").translate(_UNSEEN)
    return text if unicodedata.is_normalized("NFC", text) else unicodedata.normalize("NFC", text)


def hidden(node) -> bool:
    attrs = node.attributes
    return ("hidden" in attrs or (attrs.get("aria-hidden") or "").strip().lower() == "true"
            or bool(_HIDDEN_STYLE.search(attrs.get("style") or ""))
            or bool(_HIDDEN_CLASS.search(attrs.get("class") or "")))


def holds_main(node) -> bool:
    """Chrome that wraps an article (an article inside <aside>) is the article's container, not chrome."""
    return node.css_first(_MAIN) is not None


def non_content(node) -> bool:
    """Never content, whatever the page: scripts, widgets, closed dialogs, hidden elements."""
    tag = node.tag
    if tag in NEVER or (tag == "dialog" and "open" not in node.attributes):
        return True
    if tag == "form" and node.css_first(_PROSE) is None:  # a page-wide ASP.NET form wraps prose
        return True
    if hidden(node):
        return True
    return bool(_FURNITURE_CLASS.search(node.attributes.get("class") or "")) and not _holds_prose(node)


def _holds_prose(node) -> bool:
    """Several paragraphs: an article wrapper, though a theme marks it like a share bar (WordPress's
    Hueman puts the whole post in ``<div class="entry share">``). Only asked of furniture classes."""
    return len(node.css("p")) >= WRAPPER_PARAGRAPHS


def skip(node, inside: bool, chrome_too: bool = True) -> bool:
    """Non-content, or (``chrome_too``) page chrome (nav, aside, footer, a header outside the
    article) that holds no article. A <header> inside <article>/<main> holds its title."""
    if non_content(node):
        return True
    if not chrome_too:
        return False
    return chrome(node, inside) and not holds_main(node)


def chrome(node, inside: bool) -> bool:
    tag = node.tag
    role = (node.attributes.get("role") or "").strip().lower()
    return tag in CHROME or (tag == "header" and not inside) or role in _CHROME_ROLES


def _children(node):
    return list(node.iter(include_text=True))


def ol_labels(ol) -> dict[int, str]:
    """The numbers a browser draws before an ``<ol>``'s items ("1.", "2.", ...; ``start``,
    ``reversed`` and an item's ``value`` honoured; decimal whatever the ``type``), by item node id.
    Removed (hidden) items are not counted, as a browser does not count undisplayed ones."""
    items = [c for c in _children(ol) if c.tag == "li"]
    step = -1 if "reversed" in ol.attributes else 1
    n = _int(ol.attributes.get("start"), len(items) if step < 0 else 1)
    out = {}
    for li in items:
        n = _int(li.attributes.get("value"), n)
        out[li.mem_id] = f"{n}."
        n += step
    return out


def _int(value, default: int) -> int:
    """An HTML integer attribute; absent, malformed or absurd (over 9 digits) gives ``default``."""
    v = (value or "").strip()
    return int(v) if v.lstrip("-").isdigit() and len(v) <= 10 else default


def text_of(node, inside: bool, keep_space: bool = False) -> str:
    """Visible text under ``node``; whitespace collapsed unless ``keep_space`` (for <pre>)."""
    parts: list[str] = []
    labels: dict[int, str] = {}
    stack = list(reversed(_children(node)))
    while stack:
        n = stack.pop()
        if n is _GAP:
            parts.append(" ")
        elif n.is_text_node:
            parts.append(seen(n))
        elif n.is_element_node and not skip(n, inside):
            if n.tag == "br":
                parts.append("\n")
            elif n.tag in _SEPARATED:  # cells, list items, paragraphs inside: words never run together
                parts.append(" ")
                stack.append(_GAP)
                if n.tag == "ol":
                    labels.update(ol_labels(n))
                elif n.tag == "li" and n.mem_id in labels:
                    parts.append(labels[n.mem_id] + " ")
            stack.extend(reversed(_children(n)))
    text = "".join(parts)
    return text if keep_space else _WS.sub(" ", text).strip()


def candidates(root, chrome_too: bool = True) -> list[Candidate]:
    """Every visible block under ``root``, in document order; page chrome skipped unless
    ``chrome_too`` is False (when a judge decides what is content)."""
    walker = _Walker(chrome_too)
    walker.run(root)
    return walker.out


class _Walker:
    def __init__(self, chrome_too: bool) -> None:
        self.chrome_too = chrome_too
        self.out: list[Candidate] = []
        self.buf: list[str] = []
        self.link_chars = 0
        self.ctx: list[tuple[str, int]] = [("paragraph", 0)]
        self.chrome_ctx: list[bool] = [False]
        self.boxes: list[int] = [0]  # the block containers entered, innermost last
        self.labels: dict[int, str] = {}  # ordered list items' numbers, filled as each <ol> is entered
        self.marker = ""  # the number of the list item whose text is being gathered

    def run(self, root) -> None:
        inside = root.tag in ("main", "article") or (root.attributes.get("role") or "") == "main"
        stack: list = [(c, 0, inside, False, False) for c in reversed(_children(root))]
        while stack:
            item = stack.pop()
            if item is _EXIT:
                self.flush()
                self.ctx.pop()
                self.chrome_ctx.pop()
                self.boxes.pop()
                continue
            node, depth, inside, link, in_chrome = item
            if node.is_text_node:
                text = seen(node)
                self.buf.append(text)
                self.link_chars += len(text.strip()) if link else 0
            elif node.is_element_node and not skip(node, inside, self.chrome_too):
                self.element(node, depth, inside, link, in_chrome, stack)
        self.flush()

    def element(self, node, depth: int, inside: bool, link: bool, in_chrome: bool, stack: list) -> None:
        tag = node.tag
        if tag in HEADINGS or tag in ("pre", "table"):
            self.flush()
            self.atom(node, inside, in_chrome)
            return
        if tag == "br":
            self.buf.append(" ")
            return
        if tag in _BLOCKS:
            self.flush()
            self.ctx.append(("list_item", max(depth, 1)) if tag == "li" else self.ctx[-1])
            stack.append(_EXIT)
            if tag == "ol":
                self.labels.update(ol_labels(node))
            elif tag == "li":
                self.marker = self.labels.pop(node.mem_id, "")
        depth += tag in ("ul", "ol")
        inside = inside or tag in ("main", "article")
        link = link or tag == "a"
        in_chrome = in_chrome or (chrome(node, inside) and not holds_main(node))
        if tag in _BLOCKS:
            self.chrome_ctx.append(in_chrome)
            self.boxes.append(node.mem_id)
        stack.extend((c, depth, inside, link, in_chrome) for c in reversed(_children(node)))

    def flush(self) -> None:
        """Inline text gathered so far becomes one paragraph or list item."""
        text = _WS.sub(" ", "".join(self.buf)).strip()
        links, self.link_chars = self.link_chars, 0
        self.buf.clear()
        if text:
            kind, level = self.ctx[-1]
            share = min(1.0, links / max(1, len(text.replace(" ", ""))))
            marker = self.marker if kind == "list_item" else ""
            # the text is the innermost open block's (a <p>, an <li>, a <div>'s own text): its container
            # is the one that block sits in, as for a heading or a table
            self.out.append(Candidate(kind, text, level, links=share, chrome=self.chrome_ctx[-1], marker=marker,
                                      box=self.boxes[-2] if len(self.boxes) > 1 else 0))
            self.marker = ""  # an item's number goes before its first text only

    def atom(self, node, inside: bool, in_chrome: bool) -> None:
        found: list[Candidate] = []
        if node.tag in HEADINGS:
            if title := text_of(node, inside):
                found.append(Candidate("heading", title, HEADINGS[node.tag], title))
        elif node.tag == "pre":
            if code := _code(node, inside):
                found.append(code)
        else:
            caption = node.css_first("caption")
            if caption is not None and not skip(caption, inside) and (text := text_of(caption, inside)):
                found.append(Candidate("caption", text))
            own: list[str] = []
            if rows := _rows(node, inside, own):
                found.append(Candidate("table", rows=rows, title=" ".join(own)))
        for c in found:
            c.chrome = in_chrome
            c.box = self.boxes[-1]
        self.out.extend(found)


def _code(pre, inside: bool) -> Candidate | None:
    """A fenced block; the fence outgrows any backtick run inside the code."""
    code = text_of(pre, inside, keep_space=True).strip("\n").rstrip()
    if not code.strip():
        return None
    lang = ""
    for node in (pre, pre.css_first("code")):
        if node is not None and (m := _LANG_CLASS.search(node.attributes.get("class") or "")):
            lang = m.group(1)
            break
    fence = "`" * max(3, 1 + max((len(r) for r in re.findall(r"`+", code)), default=0))
    return Candidate("code", f"{fence}{lang}\n{code}\n{fence}", meta={"lang": lang}, title=code)


def _rows(table, inside: bool, own: list[str] | None = None) -> list[list[str]]:
    """This table's own rows (not a nested table's), as cell texts, one per grid column: a
    ``colspan`` repeats its text across the columns it covers, a ``rowspan`` down the rows."""
    trs = []
    for child in _children(table):
        if child.tag == "tr":
            trs.append(child)
        elif child.tag in ("thead", "tbody", "tfoot") and not skip(child, inside):
            trs += [c for c in _children(child) if c.tag == "tr"]
    rows = []
    carried: dict[int, tuple[int, str]] = {}  # column -> (rows still covered, text) of a rowspan above
    budget = _MAX_SPANNED
    for tr in trs:
        if skip(tr, inside):
            continue
        cells: list[str] = []
        for c in _children(tr):
            if c.tag not in ("th", "td") or skip(c, inside):
                continue
            _carry(cells, carried)
            text = text_of(c, inside)
            if own is not None and text:
                own.append(text)  # each cell once, as the page (and the judge) reads it
            span, down = (_span(c, "colspan"), _span(c, "rowspan")) if budget > 0 else (1, 1)
            budget -= span * down  # spans copy text: a table's copies are bounded, then cells count once
            for _ in range(span):
                if down > 1:
                    carried[len(cells)] = (down - 1, text)
                cells.append(text)
        _carry(cells, carried, to_end=True)
        if any(cells):
            rows.append(cells)
    return rows


def _carry(cells: list[str], carried: dict, to_end: bool = False) -> None:
    """Fill the columns a rowspan from above covers at this point of the row (every remaining one
    at the row's end): the text repeats, so each row reads alone and its cells stay in their columns."""
    while len(cells) in carried or (to_end and carried and len(cells) <= max(carried)):
        left, text = carried.pop(len(cells), (0, ""))
        if left > 1:
            carried[len(cells)] = (left - 1, text)
        cells.append(text)


def _span(cell, name: str) -> int:
    value = (cell.attributes.get(name) or "1").strip()
    return min(int(value), _MAX_SPAN) if value.isdigit() and int(value) > 0 else 1


def emit(kept: list[Candidate], furniture: list[Candidate] | None = None) -> TextBuilder:
    """The kept candidates as document text: blocks joined by a blank line, tables as pipe rows.
    With ``furniture`` (every candidate of the page, in order), the ones not kept are written too,
    in place, as ``role: furniture`` blocks (a heading among them as a paragraph: it heads no part of
    the article), which normalisation removes before chunking."""
    out = TextBuilder()
    main = {id(c) for c in kept}
    for c in kept if furniture is None else furniture:
        aside = id(c) not in main
        n = len(out.blocks)
        if c.kind == "table":
            out.table(c.rows or [])
        elif c.kind == "heading" and not aside:
            out.block("heading", c.body, c.level, c.title)
        elif c.kind == "code":
            out.block("code", c.body, meta=dict(c.meta))
        elif c.marker:
            out.block(c.kind, f"{c.marker} {c.body}", c.level)
        else:
            out.block("paragraph" if c.kind in ("caption", "heading") else c.kind, c.body, c.level)
        if aside:
            for b in out.blocks[n:]:
                b.meta["role"] = FURNITURE
    return out
