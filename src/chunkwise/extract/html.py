"""HTML → Document: main content only, as a reader sees it, with chunkwise's own structure.

Parsing is selectolax's Lexbor backend: a spec-conformant HTML5 parser (a tree as a browser builds
it, so ``<template>``, unclosed ``<p>`` and stray tags land where a reader's browser puts them).
Three steps: (1) non-content and everything hidden (``hidden``, ``aria-hidden``, ``display:none``,
zero or 1px fonts, off-screen positioning, ``clip``, ``sr-only`` classes, transparent text) is
removed from the tree, because hidden text is a classic prompt-injection carrier; (2) trafilatura
judges which of the remaining blocks are the article (``html_main``); (3) the kept blocks are
written by ``html_walk.emit``, so every offset points into the returned text; the rest of the visible
page (menus, sidebars, related links, footers) is written in place as ``role: furniture`` blocks,
which ``chunkwise extract`` reports and normalisation removes before chunking (``normalise.furniture``). Without trafilatura,
or on pages too small for its statistics, tag rules pick the content (``<main>``, a lone
``<article>``, else ``<body>`` minus nav/aside/footer/header). No URL is fetched.
"""
from __future__ import annotations

import codecs
import re
import unicodedata

from chunkwise import ids
from chunkwise.errors import DependencyError
from chunkwise.extract.html_main import main_text, select
from chunkwise.extract.html_walk import CHROME, candidates, emit, holds_main, non_content
from chunkwise.types import Document

MEDIA_TYPE = "text/html"
_META_CHARSET = re.compile(rb"<meta[^>]+charset\s*=\s*[\"']?\s*([\w.:-]+)", re.I)
_WS = re.compile(r"[ \t\n\r\f]+")
_NOSCRIPT = re.compile(r"<noscript(?=[\s/>])", re.I)
_NOSCRIPT_END = re.compile(r"</noscript\s*>", re.I)
_SUMMARY_KEYS = frozenset({"description", "og:description", "twitter:description"})
MIN_JUDGED_CHARS = 200  # below this trafilatura has fallen back to "all text"; tag rules do better
MAX_JUDGED_BYTES = 8_000_000  # larger pages skip trafilatura (lxml trees of that size cost seconds)


def extract(data: bytes, source: str, main_content: bool = True) -> Document:
    """Extract the main content of one HTML file (``main_content=False``: every visible block)."""
    parser = _import_parser()
    html, warnings = _decode(data)
    tree = parser(_without_noscript(html))
    metadata = _metadata(tree)
    summaries = _summaries(tree)  # read before sanitising, which removes <head>
    _sanitise(tree)
    judged = _main_blocks(tree, summaries, warnings) if main_content else None
    if judged is None:  # no judge, or it found no article: the page's own main region, chrome dropped
        out = emit(candidates(_content_root(tree)))
    else:  # the article, and the rest of the page in place as furniture (never chunked)
        out = emit(*judged)
    if not out.pos:
        warnings.append("no visible main content")
    return Document(
        doc_id=source, source=source, media_type=MEDIA_TYPE, text=out.value(), blocks=tuple(out.blocks),
        metadata=metadata, sha256=ids.bytes_sha256(data), warnings=tuple(warnings),
    )


def _main_blocks(tree, summaries: tuple[str, ...], warnings: list[str]):
    """(main content, every visible block) of the page, trafilatura judging; None when it cannot."""
    page = tree.html or ""
    if len(page) > MAX_JUDGED_BYTES:
        warnings.append(f"page over {MAX_JUDGED_BYTES // 1_000_000} MB: main content not judged, "
                        "every visible block outside page chrome kept")
        return None
    try:
        judged = main_text(page)
    except ImportError:
        warnings.append("trafilatura is not installed (pip install 'chunkwise[html]'): page chrome "
                        "dropped by tag only, boilerplate inside the article kept")
        return None
    except (ValueError, TypeError, RecursionError, MemoryError) as exc:  # lxml on a hostile tree
        warnings.append(f"main-content detection failed ({type(exc).__name__}); every visible block kept")
        return None
    if len(judged.strip()) < MIN_JUDGED_CHARS:  # too little for its statistics: it kept everything
        return None
    every = candidates(tree.body or tree.root, chrome_too=False)
    kept = select(every, judged, summaries)
    return (kept, every) if kept else None


def _without_noscript(html: str) -> str:
    """The page with its ``<noscript>`` elements cut out, as a browser running scripts reads them (raw
    text, never shown). The parser builds its tree with scripting off, where a ``<div>`` opened in a
    ``<noscript>`` and closed after it puts the whole page inside the noscript, which is never read
    (one page of trafilatura's evaluation set came out empty). Linear: each search starts where the
    last ended, and an unclosed ``<noscript>`` ends the cutting."""
    if "noscript" not in html and "NOSCRIPT" not in html and not _NOSCRIPT.search(html):
        return html
    out, pos = [], 0
    while (start := _NOSCRIPT.search(html, pos)) is not None:
        end = _NOSCRIPT_END.search(html, start.end())
        if end is None:
            break
        out.append(html[pos:start.start()])
        pos = end.end()
    out.append(html[pos:])
    return "".join(out)


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


def _sanitise(tree) -> None:
    """Remove non-content and hidden elements from the tree (so neither our walk nor trafilatura ever
    sees them) and unwrap chrome that holds an article, which trafilatura would otherwise drop whole."""
    doomed, unwrap = [], []
    stack = [tree.root] if tree.root is not None else []
    while stack:
        node = stack.pop()
        for child in node.iter(include_text=False):
            if non_content(child):
                doomed.append(child)  # not descended into: no node is removed twice
            else:
                if child.tag in CHROME and holds_main(child):
                    unwrap.append(child)
                stack.append(child)
    for node in doomed:
        node.decompose()
    for node in reversed(unwrap):  # innermost first
        node.unwrap()


def _content_root(tree):
    """<main> (or role=main) when present, else a lone <article>, else <body>."""
    for node in (tree.css_first("main"), tree.css_first("[role=main]")):
        if node is not None:
            return node
    articles = tree.css("article")
    if len(articles) == 1:
        return articles[0]
    return tree.body or tree.root


def _summaries(tree) -> tuple[str, ...]:
    """The page's descriptions of itself (``<meta name=description>``, Open Graph, Twitter card):
    they name its standfirst for ``html_main``. Read, never written as text."""
    head = tree.head
    if head is None:
        return ()
    out = []
    for meta in head.css("meta"):
        attrs = meta.attributes
        key = (attrs.get("name") or attrs.get("property") or "").strip().lower()
        if key in _SUMMARY_KEYS and (text := _WS.sub(" ", attrs.get("content") or "").strip()):
            text = unicodedata.normalize("NFC", text)  # compared with the walk's text, which is composed
            out.append(text)
    return tuple(dict.fromkeys(out))


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
