"""Which access tags each chunk gets, failing closed on anything that cannot be read.

A document's tags: front matter ``acl`` first, then the first matching glob of the ``--acl-map``,
then the ``--acl`` default. A Markdown section may carry its own tags in a comment that is the first
block right under its heading, ``<!-- acl: finance, sre -->``; they apply to that section and its
subsections, and chunks never cross such a boundary (the chunker is given them as hard cuts).

Fail closed: invalid front matter, an ``acl`` of the wrong type or with a bad tag, and a marker
written where it is not honoured (on the heading line, after a paragraph, inside a quote or a list,
indented, malformed) make the whole document ``review`` with reason ``unreadable_acl`` and a problem
reported for the file. Markers inside code blocks or inline code are text, not markers.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Mapping, Sequence

from chunkwise.access import AccessTagError, AccessTags, map_tags
from chunkwise.chunking.markdown import parse_markdown
from chunkwise.types import Document

_MARKER = re.compile(r"<!--\s*acl\s*:\s*(.*?)\s*-->", re.I | re.S)
_ANY_MARKER = re.compile(r"<!--\s*acl\s*:", re.I)
UNREADABLE = "unreadable_acl"

Region = tuple[int, int, AccessTags]


@dataclass(frozen=True)
class AccessPlan:
    """The tags of a document and of its marked sections; ``problems`` non-empty means nothing of the
    document may be served (every chunk is stored as ``review``, reason ``unreadable_acl``)."""

    default: AccessTags
    regions: tuple[Region, ...] = ()
    problems: tuple[str, ...] = ()
    paths: tuple[tuple[str, ...], ...] = ()  # heading path of each region's section

    def visible_path(self, path: tuple[str, ...], start: int, end: int) -> tuple[str, ...]:
        """``path`` less every heading whose own section some reader of ``[start, end)`` may not
        read: a restricted parent's heading never reaches a more widely readable child's chunks."""
        tags = set(self.tags_for(start, end).tags)
        if not tags or not self.regions:
            return path
        inside = [(p, set(t.tags)) for (a, b, t), p in zip(self.regions, self.paths) if a <= start and end <= b]
        out = []
        for depth in range(1, len(path) + 1):
            governing = set(self.default.tags)
            for p, t in inside:  # outermost first: the innermost region over this heading wins
                if len(p) <= depth and path[: len(p)] == p:
                    governing = t
            if tags <= governing:
                out.append(path[depth - 1])
        return tuple(out)

    def tags_for(self, start: int, end: int) -> AccessTags:
        """The tags of the innermost region holding ``[start, end)``; the document's otherwise."""
        if self.problems:
            return AccessTags()
        return tags_for(start, end, self.regions, self.default)

    @property
    def boundaries(self) -> list[int]:
        return [p for a, b, _ in self.regions for p in (a, b)]


def plan_access(doc: Document, default: AccessTags, acl_map: Mapping[str, AccessTags] | None = None) -> AccessPlan:
    """Resolve a document's tags (front matter, map, default) and its section markers."""
    meta = doc.metadata or {}
    problems: list[str] = []
    if meta.get("acl_error"):
        problems.append(str(meta["acl_error"]))
    front = meta.get("acl")
    if isinstance(front, AccessTags):
        tags = front
    elif front is not None:  # a caller built the Document by hand: same grammar
        try:
            tags = AccessTags.parse(front, f"{doc.source}: front matter acl")
        except AccessTagError as exc:
            problems.append(str(exc))
            tags = AccessTags()
    else:
        mapped = map_tags(doc.source, acl_map)  # globs are relative to the root: the document's path
        if mapped is None:
            mapped = map_tags(doc.doc_id, acl_map)
        tags = mapped if mapped is not None else AccessTags.parse(default)
    regions, marker_problems, paths = _regions(doc)
    problems.extend(marker_problems)
    return AccessPlan(tags, tuple(regions), tuple(problems), tuple(paths))


def _regions(doc: Document):
    if doc.media_type != "text/markdown" or not _ANY_MARKER.search(doc.text, doc.body_start):
        return [], [], []
    text = doc.text
    parsed = parse_markdown(text)
    sections = parsed.sections
    out: list[Region] = []
    paths: list[tuple[str, ...]] = []
    problems: list[str] = []
    honoured: set[int] = set()
    literal: list[tuple[int, int]] = []
    for sec in sections:
        literal.extend((b.start, b.end) for b in sec.blocks if b.kind == "code")
    for i, sec in enumerate(sections):
        blocks = [b for b in sec.blocks if b.kind != "heading"]
        if not blocks or blocks[0].kind != "html_block":
            continue
        m = _MARKER.fullmatch(text[blocks[0].start : blocks[0].end].strip())
        if not m:
            continue
        honoured.add(blocks[0].start)
        where = f"{doc.source} line {text.count(chr(10), 0, blocks[0].start) + 1}: section marker"
        try:
            tags = AccessTags.parse(m.group(1), where)
        except AccessTagError as exc:
            problems.append(str(exc))
            continue
        if not tags:
            problems.append(f"{where} names no tags")
            continue
        depth = len(sec.heading_path)
        end = len(text)
        for later in sections[i + 1 :]:
            if len(later.heading_path) <= depth:
                end = later.start
                break
        out.append((sec.start, end, tags))
        paths.append(tuple(sec.heading_path))
    for m in _ANY_MARKER.finditer(text, doc.body_start):
        at = m.start()
        if at in honoured or any(a <= at < b for a, b in literal) or _in_inline_code(text, at):
            continue
        line = text.count("\n", 0, at) + 1
        problems.append(f"{doc.source} line {line}: access marker not honoured here (it must be the first line "
                        "under a heading, on its own, not in a quote or list); the document is held for review")
    return out, problems, paths


def _in_inline_code(text: str, at: int) -> bool:
    """An odd number of backticks before ``at`` on its line: the marker is inside a code span."""
    line_start = text.rfind("\n", 0, at) + 1
    return text.count("`", line_start, at) % 2 == 1


def tags_for(start: int, end: int, regions: Sequence[Region], default: AccessTags) -> AccessTags:
    """The tags of the innermost region holding ``[start, end)``; ``default`` otherwise."""
    tags = default
    for a, b, t in regions:
        if a <= start and end <= b:
            tags = t
    return tags
