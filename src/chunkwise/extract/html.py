"""HTML → Document with selectolax's Lexbor backend: main content only, as a reader sees it.

Lexbor is a spec-conformant HTML5 parser (a tree as a browser builds it, so ``<template>``, unclosed
``<p>`` and stray tags land where a reader's browser puts them) and fast; lxml's libxml2 parser is
HTML4-era. The tree is never mutated: one iterative walk skips chrome (nav, header, footer, aside),
non-content (script, style, iframe, form, ...) and everything hidden (``hidden``, ``aria-hidden``,
``display:none``, ...), because hidden text is a classic prompt-injection carrier. No URL is fetched.
"""
from __future__ import annotations

import codecs
import hashlib
import re

from chunkwise.errors import DependencyError
from chunkwise.extract.builder import TextBuilder
from chunkwise.types import Document

MEDIA_TYPE = "text/html"
_NEVER = frozenset({"script", "style", "iframe", "noscript", "template", "svg", "head", "object",
                    "embed", "canvas", "button", "select", "textarea", "nav", "aside", "footer"})
_CHROME_ROLES = frozenset({"navigation", "banner", "contentinfo", "complementary", "search"})
_HEADINGS = {f"h{n}": n for n in range(1, 7)}
_BLOCKS = frozenset({"address", "article", "blockquote", "body", "dd", "details", "dialog", "div", "dl",
                     "dt", "fieldset", "figcaption", "figure", "header", "hr", "html", "li", "main", "ol",
                     "p", "section", "summary", "ul", "center", "hgroup"})
_HIDDEN_STYLE = re.compile(r"display\s*:\s*none|visibility\s*:\s*(?:hidden|collapse)"
                           r"|(?:opacity|font-size)\s*:\s*(?:0+(?:\.0*)?|\.0+)[a-z%]*\s*(?:;|!|$)",
                           re.I)
_WS = re.compile(r"[ \t\n\r\f]+")
_LANG_CLASS = re.compile(r"(?:^|\s)(?:language|lang)-([\w+#.-]+)")
_META_CHARSET = re.compile(rb"<meta[^>]+charset\s*=\s*[\"']?\s*([\w.:-]+)", re.I)
_PROSE = "p, h1, h2, h3, h4, h5, h6, article, main"
_EXIT = object()  # stack marker: leaving a block container


def extract(data: bytes, source: str) -> Document:
    """Extract the main content of one HTML file."""
    parser = _import_parser()
    html, warnings = _decode(data)
    tree = parser(html)
    out = TextBuilder()
    _Walker(out).run(_content_root(tree))
    if not out.pos:
        warnings.append("no visible main content")
    return Document(
        doc_id=source, source=source, media_type=MEDIA_TYPE, text=out.value(), blocks=tuple(out.blocks),
        metadata=_metadata(tree), sha256=hashlib.sha256(data).hexdigest(), warnings=tuple(warnings),
    )


def _import_parser():
    try:
        from selectolax.lexbor import LexborHTMLParser
    except ImportError as exc:  # an optional extra: say how to get it
        raise DependencyError("HTML extraction needs selectolax: pip install 'chunkwise[html]'") from exc
    return LexborHTMLParser


def _decode(data: bytes) -> tuple[str, list[str]]:
    """BOM, then <meta charset>, then UTF-8; undecodable bytes become U+FFFD with a warning."""
    for bom, enc in ((codecs.BOM_UTF8, "utf-8-sig"), (codecs.BOM_UTF16_LE, "utf-16"),
                     (codecs.BOM_UTF16_BE, "utf-16")):
        if data.startswith(bom):
            break
    else:
        m = _META_CHARSET.search(data[:4096])
        enc = m.group(1).decode("ascii", "replace") if m else "utf-8"
        try:
            enc = codecs.lookup(enc).name
        except LookupError:
            enc = "utf-8"
    try:
        return data.decode(enc), []
    except UnicodeDecodeError:
        text = data.decode(enc, "replace")
        return text, [f"invalid {enc} bytes replaced by U+FFFD ({text.count(chr(0xFFFD))} characters)"]


def _hidden(node) -> bool:
    attrs = node.attributes
    return ("hidden" in attrs or (attrs.get("aria-hidden") or "").strip().lower() == "true"
            or bool(_HIDDEN_STYLE.search(attrs.get("style") or "")))


def _skip(node, inside: bool) -> bool:
    """Never content, page chrome, or hidden. A <header> inside <article>/<main> holds its title; a
    <form> holding prose is a page-wide wrapper (ASP.NET WebForms), not a form to drop."""
    tag = node.tag
    if tag in _NEVER or (tag == "header" and not inside) or (tag == "dialog" and "open" not in node.attributes):
        return True
    if tag == "form" and node.css_first(_PROSE) is None:
        return True
    role = (node.attributes.get("role") or "").strip().lower()
    return role in _CHROME_ROLES or _hidden(node)


def _content_root(tree):
    """<main> (or role=main) when present, else a lone <article>, else <body>."""
    for node in (tree.css_first("main"), tree.css_first("[role=main]")):
        if node is not None and not _hidden(node):
            return node
    articles = [a for a in tree.css("article") if not _hidden(a)]
    if len(articles) == 1:
        return articles[0]
    return tree.body or tree.root


def _children(node):
    return list(node.iter(include_text=True))


def _text_of(node, inside: bool, keep_space: bool = False) -> str:
    """Visible text under ``node``; whitespace collapsed unless ``keep_space`` (for <pre>)."""
    parts: list[str] = []
    stack = list(reversed(_children(node)))
    while stack:
        n = stack.pop()
        if n.is_text_node:
            parts.append(n.text_content or "")
        elif n.is_element_node and not _skip(n, inside):
            if n.tag == "br":
                parts.append("\n")
            stack.extend(reversed(_children(n)))
    text = "".join(parts)
    return text if keep_space else _WS.sub(" ", text).strip()


class _Walker:
    """Depth-first over the content root with an explicit stack (deep nesting cannot overflow)."""

    def __init__(self, out: TextBuilder) -> None:
        self.out = out
        self.buf: list[str] = []
        self.ctx: list[tuple[str, int]] = [("paragraph", 0)]

    def run(self, root) -> None:
        inside = root.tag in ("main", "article") or (root.attributes.get("role") or "") == "main"
        stack: list = [(c, 0, inside) for c in reversed(_children(root))]
        while stack:
            item = stack.pop()
            if item is _EXIT:
                self.flush()
                self.ctx.pop()
                continue
            node, depth, inside = item
            if node.is_text_node:
                self.buf.append(node.text_content or "")
            elif node.is_element_node and not _skip(node, inside):
                self.element(node, depth, inside, stack)
        self.flush()

    def element(self, node, depth: int, inside: bool, stack: list) -> None:
        tag = node.tag
        if tag in _HEADINGS or tag in ("pre", "table"):
            self.flush()
            self.atom(node, inside)
            return
        if tag == "br":
            self.buf.append(" ")
            return
        if tag in _BLOCKS:
            self.flush()
            self.ctx.append(("list_item", max(depth, 1)) if tag == "li" else self.ctx[-1])
            stack.append(_EXIT)
        depth += tag in ("ul", "ol")
        inside = inside or tag in ("main", "article")
        stack.extend((c, depth, inside) for c in reversed(_children(node)))

    def flush(self) -> None:
        """Inline text gathered so far becomes one paragraph or list item."""
        text = _WS.sub(" ", "".join(self.buf)).strip()
        self.buf.clear()
        if text:
            kind, level = self.ctx[-1]
            self.out.block(kind, text, level)

    def atom(self, node, inside: bool) -> None:
        if node.tag in _HEADINGS:
            if title := _text_of(node, inside):
                self.out.block("heading", title, _HEADINGS[node.tag], title)
        elif node.tag == "pre":
            _code(node, inside, self.out)
        else:
            _table(node, inside, self.out)


def _code(pre, inside: bool, out: TextBuilder) -> None:
    """A fenced block; the fence outgrows any backtick run inside the code."""
    code = _text_of(pre, inside, keep_space=True).strip("\n").rstrip()
    if not code.strip():
        return
    lang = ""
    for node in (pre, pre.css_first("code")):
        if node is not None and (m := _LANG_CLASS.search(node.attributes.get("class") or "")):
            lang = m.group(1)
            break
    fence = "`" * max(3, 1 + max((len(r) for r in re.findall(r"`+", code)), default=0))
    out.block("code", f"{fence}{lang}\n{code}\n{fence}", meta={"lang": lang})


def _rows(table, inside: bool) -> list[list[str]]:
    """This table's own rows (not a nested table's), as cell texts."""
    trs = []
    for child in _children(table):
        if child.tag == "tr":
            trs.append(child)
        elif child.tag in ("thead", "tbody", "tfoot") and not _skip(child, inside):
            trs += [c for c in _children(child) if c.tag == "tr"]
    rows = []
    for tr in trs:
        if _skip(tr, inside):
            continue
        cells = [_text_of(c, inside) for c in _children(tr) if c.tag in ("th", "td") and not _skip(c, inside)]
        if any(cells):
            rows.append(cells)
    return rows


def _table(table, inside: bool, out: TextBuilder) -> None:
    """Pipe rows: header (th row or first row), separator, one line per row; meta has row spans."""
    caption = table.css_first("caption")
    if caption is not None and not _skip(caption, inside) and (text := _text_of(caption, inside)):
        out.block("paragraph", text)
    out.table(_rows(table, inside))


def _metadata(tree) -> dict:
    meta = {}
    head = tree.head
    title = head.css_first("title") if head is not None else None
    if title is not None and (text := _WS.sub(" ", title.text()).strip()):
        meta["title"] = text
    html = tree.css_first("html")
    if html is not None and (lang := (html.attributes.get("lang") or "").strip()):
        meta["language"] = lang
    return meta
