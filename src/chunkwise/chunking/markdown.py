"""Markdown structure with character offsets, from markdown-it-py's source line maps.

Only top-level blocks start sections, so a ``#`` line inside fenced code, a list or a quote is never a
heading. YAML front matter is recognised (and excluded from chunk text) by the front-matter plugin.
"""
from __future__ import annotations

import importlib.util
import re
from dataclasses import dataclass, field
from functools import lru_cache

from chunkwise.normalise.headings import heading_label
from chunkwise.types import Block

_LINE_END = re.compile(r"\r\n|\r|\n")


@lru_cache(maxsize=1)
def _parser():
    from markdown_it import MarkdownIt
    from mdit_py_plugins.front_matter import front_matter_plugin

    return MarkdownIt("commonmark", {"maxNesting": 100}).enable("table").use(front_matter_plugin)


def line_starts(text: str) -> list[int]:
    return [0, *(m.end() for m in _LINE_END.finditer(text))]


@dataclass(frozen=True)
class Section:
    start: int
    end: int
    heading_path: tuple[str, ...]
    ordinal: int
    blocks: tuple[Block, ...] = field(default=())


@dataclass(frozen=True)
class MarkdownDoc:
    body_start: int
    front_matter: str
    title: str
    sections: tuple[Section, ...]
    blocks: tuple[Block, ...] = ()  # every top-level block, headings included, in order


def mask_front_matter(text: str, body_start: int) -> str:
    """``text`` with everything before ``body_start`` blanked (line ends kept, so every offset
    stays): front matter the parser would not recognise itself (after blank lines, indented,
    TOML) is then neither a block nor a heading."""
    if body_start <= 0:
        return text
    return re.sub(r"[^\r\n]", " ", text[:body_start]) + text[body_start:]


def _inline_text(tok) -> str:
    if tok.children:
        parts = [c.content for c in tok.children if c.type in ("text", "code_inline")]
        if parts:
            return "".join(parts).strip()
    return tok.content.strip()


@lru_cache(maxsize=1)
def markdown_backend() -> str:
    """The parser ``parse_markdown(text)`` uses on this machine, with its version. Part of every
    config fingerprint: the two backends disagree on a few inputs (a table under a lazy quote line),
    so a store built with one is re-chunked, not silently mixed, when the other takes over."""
    from importlib.metadata import PackageNotFoundError, version

    name = "markdown-it-pyrs" if importlib.util.find_spec("markdown_it_pyrs") is not None else "markdown-it-py"
    try:
        return f"{name}@{version(name)}"
    except PackageNotFoundError:  # pragma: no cover - importable but without metadata
        return name


def parse_markdown(text: str, backend: str = "auto", barrier: int | None = None) -> MarkdownDoc:
    """Sections and top-level blocks of a Markdown text, with character offsets. ``barrier``: an
    offset no empty heading folds across (see ``fold_empty_headings``).

    Uses markdown-it-pyrs (Rust; the same CommonMark rules) when installed — about ten times faster
    — and markdown-it-py otherwise. Both are checked to agree on the test corpora.
    """
    use_rs = backend == "rs" or (backend == "auto" and importlib.util.find_spec("markdown_it_pyrs") is not None)
    if not use_rs:
        return _sections(text, *_blocks_py(text), barrier=barrier)
    try:
        parsed = _blocks_rs(text)
    except BaseException as exc:  # a Rust panic is a BaseException: only that one is a parser bug
        if backend == "rs" or not _is_rust_panic(exc):
            raise
        parsed = _blocks_py(text)  # same CommonMark rules; deterministic for the same text
    return _sections(text, *parsed, barrier=barrier)


def _is_rust_panic(exc: BaseException) -> bool:
    """pyo3's PanicException (module ``pyo3_runtime``) cannot be imported, so it is named."""
    kind = type(exc)
    return kind.__name__ == "PanicException" and kind.__module__ == "pyo3_runtime"


@lru_cache(maxsize=1)
def _parser_rs():
    from markdown_it_pyrs import MarkdownIt

    return MarkdownIt("commonmark").enable_many(["table", "front_matter"])


def _byte_to_char(text: str, offsets: set[int]) -> dict[int, int]:
    """UTF-8 byte offsets -> character offsets, in one pass over the bytes."""
    if text.isascii():
        return {b: b for b in offsets}
    data = text.encode("utf-8")
    out: dict[int, int] = {}
    prev_b, prev_c = 0, 0
    for b in sorted(offsets):
        # characters in data[prev_b:b] = bytes that are not UTF-8 continuation bytes
        prev_c += len(data[prev_b:b].translate(None, _CONTINUATION))
        prev_b = b
        out[b] = prev_c
    return out


_CONTINUATION = bytes(range(0x80, 0xC0))


def _blocks_rs(text: str) -> tuple[int, str, list[Block]]:
    root = _parser_rs().tree(text)
    nodes = root.children
    raw: list[tuple] = []
    offsets: set[int] = set()

    def items_of(node) -> list[tuple[int, int]]:
        """List items at every depth, without recursion (lists can nest thousands deep)."""
        found = []
        stack = [(node, 1)]
        while stack:
            lst, depth = stack.pop()
            for item in lst.children:
                if item.name == "list_item" and item.srcmap:
                    found.append((item.srcmap[0], depth))
                    offsets.add(item.srcmap[0])
                    stack.extend((sub, depth + 1) for sub in item.children
                                 if sub.name in ("bullet_list", "ordered_list"))
        found.sort()
        return found

    for node in nodes:
        if not node.srcmap or node.name == "definition":  # link definitions are not content blocks
            continue
        a, b = node.srcmap
        offsets.update((a, b))
        raw.append((node, a, b, items_of(node) if node.name in ("bullet_list", "ordered_list") else ()))
    conv = _byte_to_char(text, offsets)
    body_start, front_matter = 0, ""
    blocks: list[Block] = []
    for node, a, b, items in raw:
        a, b = conv[a], conv[b]
        a = text.rfind("\n", 0, a) + 1  # blocks start at their line start, as line maps give them
        while b > a and text[b - 1].isspace():
            b -= 1
        name = node.name
        if name == "front_matter":
            body_start, front_matter = _line_after(text, b), node.meta.get("content", "")
        elif name in ("heading", "lheading"):
            blocks.append(Block("heading", a, b, int(node.meta.get("level", 1)), _text_rs(node)))
        elif name == "paragraph":
            blocks.append(Block("paragraph", a, b))
        elif name in ("fence", "code_block"):
            blocks.append(Block("code", a, b, meta={"lang": str(node.meta.get("info", "")).strip()}))
        elif name == "table":
            blocks.append(Block("table", a, b))
        elif name in ("bullet_list", "ordered_list"):
            blocks.append(Block("list", a, b, meta={"items": [(text.rfind("\n", 0, conv[p]) + 1, d) for p, d in items],
                                                     "ordered": name == "ordered_list"}))
        else:
            blocks.append(Block(name, a, b))
    return body_start, front_matter, blocks


def _line_after(text: str, pos: int) -> int:
    nl = text.find("\n", pos)
    return len(text) if nl < 0 else nl + 1


def _text_rs(node) -> str:
    parts = [d.meta.get("content", "") for d in node.walk() if d.name in ("text", "code_inline")]
    return "".join(parts).strip()


def _blocks_py(text: str) -> tuple[int, str, list[Block]]:
    tokens = _parser().parse(text)
    starts = line_starts(text)
    n_lines = len(starts)

    def at(line: int) -> int:
        return starts[line] if line < n_lines else len(text)

    def span(m: list[int]) -> tuple[int, int]:
        a, b = at(m[0]), at(m[1])
        while b > a and text[b - 1].isspace():
            b -= 1
        return a, b

    body_start, front_matter = 0, ""
    blocks: list[Block] = []
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        if tok.level != 0 or tok.map is None:
            i += 1
            continue
        a, b = span(tok.map)
        if tok.type == "front_matter":
            body_start, front_matter = at(tok.map[1]), tok.content
        elif tok.type == "heading_open":
            blocks.append(Block("heading", a, b, int(tok.tag[1:]), _inline_text(tokens[i + 1])))
        elif tok.type == "paragraph_open":
            blocks.append(Block("paragraph", a, b))
        elif tok.type in ("fence", "code_block"):
            blocks.append(Block("code", a, b, meta={"lang": tok.info.strip()}))
        elif tok.type == "table_open":
            blocks.append(Block("table", a, b))
        elif tok.type in ("bullet_list_open", "ordered_list_open"):
            items = []
            j = i + 1
            while j < len(tokens) and not (tokens[j].level == 0 and tokens[j].type == tok.type.replace("open", "close")):
                t = tokens[j]
                if t.type == "list_item_open" and t.map is not None:
                    items.append((at(t.map[0]), (t.level + 1) // 2))  # nesting depth from 1
                j += 1
            blocks.append(Block("list", a, b, meta={"items": items, "ordered": tok.type.startswith("ordered")}))
        else:  # blockquote, html_block, hr: kept as opaque blocks
            blocks.append(Block(tok.type.replace("_open", ""), a, b))
        i += 1
    return body_start, front_matter, blocks


def sections_from_blocks(text: str, blocks: list[Block], body_start: int = 0, title: str = "") -> MarkdownDoc:
    """Sections for an extracted document (PDF, DOCX, HTML) from its heading and content blocks."""
    return _sections(text, body_start, "", [b for b in blocks if b.kind != "page_break"], title)


def _sections(text: str, body_start: int, front_matter: str, blocks: list[Block], title: str = "",
              barrier: int | None = None) -> MarkdownDoc:
    sections: list[Section] = []
    stack: list[tuple[int, str]] = []
    cur_start, cur_path, cur_blocks = body_start, (), []

    def close(end: int) -> None:
        if cur_blocks or text[cur_start:end].strip():
            sections.append(Section(cur_start, end, cur_path, len(sections), tuple(cur_blocks)))

    for blk in blocks:
        if blk.kind == "heading":
            close(blk.start)
            while stack and stack[-1][0] >= blk.level:
                stack.pop()
            stack.append((blk.level, heading_label(blk.text)))
            if not title and blk.level == 1:
                title = blk.text
            cur_start, cur_path, cur_blocks = blk.start, tuple(t for _, t in stack), [blk]
        else:
            cur_blocks.append(blk)
    close(len(text))
    return MarkdownDoc(body_start, front_matter, title, tuple(fold_empty_headings(sections, barrier)), tuple(blocks))


def fold_empty_headings(sections: list[Section], barrier: int | None = None) -> list[Section]:
    """A section that is only its heading (say "## Triage" straight before "### First steps") joins
    the section after it, so no chunk is a bare heading and the heading text is still covered. Never
    across ``barrier`` (where access tags change): headings before it stay on their side."""
    out: list[Section] = []
    pending: list[Section] = []

    def flush() -> None:
        last = pending[-1]
        out.append(Section(pending[0].start, last.end, last.heading_path, len(out), last.blocks))
        pending.clear()

    for n, sec in enumerate(sections):
        if pending and barrier is not None and pending[0].start < barrier <= sec.start:
            flush()
        if all(b.kind == "heading" for b in sec.blocks) and n + 1 < len(sections):
            pending.append(sec)
            continue
        start = pending[0].start if pending else sec.start
        pending.clear()
        out.append(Section(start, sec.end, sec.heading_path, len(out), sec.blocks))
    return out


def front_matter_title(front_matter: str) -> str:
    """The ``title:`` of YAML front matter, without a YAML dependency (full parsing is the extractor's job)."""
    m = re.search(r"^title:\s*(.+?)\s*$", front_matter, re.M)
    return m.group(1).strip("'\"") if m else ""
