"""Access tags per section: a Markdown section may carry its own tags in a comment right under its
heading, ``<!-- acl: finance, sre -->``; they apply to that section and its subsections. Chunks never
cross such a boundary (the chunker is given the boundaries as hard cuts)."""
from __future__ import annotations

import re

from chunkwise.chunking.markdown import parse_markdown
from chunkwise.types import Document

_MARKER = re.compile(r"<!--\s*acl\s*:\s*(.*?)\s*-->", re.I | re.S)


def acl_regions(doc: Document) -> list[tuple[int, int, tuple[str, ...]]]:
    """``(start, end, tags)`` for every section that declares tags, innermost last."""
    if doc.media_type != "text/markdown" or "acl" not in doc.text:
        return []
    sections = parse_markdown(doc.text).sections
    out = []
    for i, sec in enumerate(sections):
        blocks = [b for b in sec.blocks if b.kind != "heading"]
        if not blocks or blocks[0].kind != "html_block":
            continue
        m = _MARKER.fullmatch(doc.text[blocks[0].start : blocks[0].end].strip())
        if not m:
            continue
        tags = tuple(sorted({t.strip() for t in m.group(1).split(",") if t.strip()}))
        depth = len(sec.heading_path)
        end = doc.text.__len__()
        for later in sections[i + 1 :]:
            if len(later.heading_path) <= depth:
                end = later.start
                break
        out.append((sec.start, end, tags))
    return out


def tags_for(start: int, end: int, regions, default: tuple[str, ...]) -> tuple[str, ...]:
    """The tags of the innermost region holding ``[start, end)``; the document's otherwise."""
    tags = default
    for a, b, t in regions:
        if a <= start and end <= b:
            tags = t
    return tags
