"""Document text under construction, shared by the extractors that build text from a tree (DOCX,
HTML): blocks joined by a blank line, every span recorded as it is written, tables as pipe rows."""
from __future__ import annotations

import re

from chunkwise.types import Block

_PARA = re.compile(r"\S(?:.*\S)?(?:\n[^\S\n]*\S.*)*(?<=\S)")


class TextBuilder:
    def __init__(self) -> None:
        self.parts: list[str] = []
        self.pos = 0
        self.blocks: list[Block] = []

    def block(self, kind: str, body: str, level: int = 0, text: str = "", meta: dict | None = None) -> int:
        if self.pos:
            self._put("\n\n")
        start = self.pos
        self._put(body)
        self.blocks.append(Block(kind, start, self.pos, level, text, meta or {}))
        return start

    def mark(self, kind: str, meta: dict | None = None) -> None:
        """A zero-width block (a page break) at the current end."""
        self.blocks.append(Block(kind, self.pos, self.pos, meta=meta or {}))

    def table(self, rows: list[list[str]]) -> None:
        """Pipe rows — header (first row), a separator, one line per row — so the chunker can repeat
        the header; ``meta`` holds the header cells and each row's span."""
        table = pipe_table(rows)
        if table is None:
            return
        body, header, spans = table
        start = self.block("table", body, meta={"header": header})
        self.blocks[-1].meta["rows"] = [(start + a, start + b) for a, b in spans]

    def document(self, doc, shift: int = 0, meta: dict | None = None) -> None:
        """Append another extracted Document (an e-mail body, an attachment, an e-book chapter) with its
        blocks moved along and its heading levels deepened by ``shift``; a document without blocks
        (plain text) gets one paragraph block per blank-line-separated stretch."""
        text = doc.text[doc.body_start :].strip()
        if not text:
            return
        lead = doc.text.index(text[0], doc.body_start)
        if self.pos:
            self._put("\n\n")
        base = self.pos - lead
        self._put(text)
        end = lead + len(text)
        blocks = [b for b in doc.blocks if lead <= b.start and b.end <= end and b.kind != "page_break"]
        if not blocks:
            blocks = [Block("paragraph", a, b) for a, b in paragraph_spans(doc.text, lead, end)]
        for b in blocks:
            level = min(b.level + shift, 6) if b.kind == "heading" else b.level
            extra = {**b.meta, **(meta or {})}
            if "rows" in extra:
                extra["rows"] = [(x + base, y + base) for x, y in extra["rows"]]
            self.blocks.append(Block(b.kind, b.start + base, b.end + base, level, b.text, extra))

    def _put(self, s: str) -> None:
        self.parts.append(s)
        self.pos += len(s)

    def value(self) -> str:
        return "".join(self.parts)


def paragraph_spans(text: str, start: int = 0, end: int | None = None) -> list[tuple[int, int]]:
    """Spans of the blank-line-separated stretches of ``text[start:end]``, whitespace trimmed."""
    end = len(text) if end is None else end
    out = []
    for m in _PARA.finditer(text, start, end):
        a, b = m.start(), m.end()
        out.append((a, b))
    return out


def pipe_table(rows: list[list[str]]) -> tuple[str, list[str], list[tuple[int, int]]] | None:
    """(text, header cells, body row spans relative to the text), or None for a table of no text."""
    rows = [r for r in rows if any(r)]
    if not rows:
        return None
    width = max(len(r) for r in rows)
    rows = [r + [""] * (width - len(r)) for r in rows]
    lines = [_pipe(rows[0]), "| " + " | ".join(["---"] * width) + " |", *(_pipe(r) for r in rows[1:])]
    spans, pos = [], len(lines[0]) + len(lines[1]) + 2
    for line in lines[2:]:
        spans.append((pos, pos + len(line)))
        pos += len(line) + 1
    return "\n".join(lines), rows[0], spans


def _pipe(cells: list[str]) -> str:
    return "| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |"


_CELL_EDGE = re.compile(r"(?<!\\) \| ")


def table_cells(text: str, block: Block) -> list[list[str]]:
    """The cells of a table block written by ``pipe_table``, header row first: the inverse of
    ``_pipe`` over the block's row spans (``meta["rows"]``), so a reader (``extract --json``) gets
    cells, not pipe syntax. A cell ending in a backslash before its separator is not told apart."""
    header = list(block.meta.get("header") or [])
    rows = [header] if header else []
    for start, end in block.meta.get("rows") or ():
        line = text[start:end].strip()
        inner = line[2:-2] if line.startswith("| ") and line.endswith(" |") else line.strip("|").strip()
        rows.append([c.replace("\\|", "|") for c in _CELL_EDGE.split(inner)])
    return rows
