"""Which access tags each chunk gets, failing closed on anything that cannot be read.

**A document's tags**: its front matter ``acl`` (grammar in ``extract/text.py``), else the first
matching glob of the ``--acl-map``, else the ``--acl`` default.

**Section markers** (Markdown). A marker is an HTML comment that is the first block right under a
heading, on a line of its own::

    ## Payroll
    <!-- acl: finance, hr -->

Strictly: ``<!--``, optional spaces, ``acl`` (any case), optional spaces, an ASCII ``:``, the tags
(comma-separated, the grammar of ``chunkwise.access``), optional spaces, ``-->``, nothing else on the
line; the tags may not contain ``--`` and the character before ``-->`` may not be ``-``.

**Scope is the heading tree.** A marker under a heading of level *n* covers that heading, its
section and every section below it, and ends at the next heading of level *n* or higher (lower
number), whatever lies between (empty sections, sub-headings, code, markers). It *replaces* the tags
its section would otherwise have, the document's included: a staff handbook can hold a finance-only
section. A marker inside another marked section may only name a subset of that section's tags (a
wider subsection inside a restricted one is almost always a mistake): one that names another tag
fails closed, its subsection (with everything below it) is stored as ``review`` with reason
``acl_not_subset`` and the run reports it; the rest of the document is served. Chunks never cross
a scope's edge (the chunker is given them as hard cuts).

**Fail closed** (the whole document ``review``, reason ``unreadable_acl``, a problem reported for
the file): front matter whose access cannot be read, a marker whose tags do not parse or that names
none, anything that tries to be a marker and is not one (``<!--- acl:``, ``acl finance`` without a
colon, a fullwidth colon, ``--->``, a marker spread over lines) and a marker written where it is not
honoured (on the heading line, after a paragraph, before the first heading, inside a quote or a
list, indented). A comment *tries to be a marker* when its text, after dashes and spaces, begins
with the word ``acl`` in any case or width. Markers inside code blocks or inline code are text; in
plain text, reStructuredText and Org a line that tries to be a marker fails closed (markers are
read only in Markdown).
"""
from __future__ import annotations

import re
import unicodedata
from bisect import bisect_right
from dataclasses import dataclass
from functools import cached_property
from typing import Mapping, Sequence

from chunkwise.access import AccessTagError, AccessTags, map_tags
from chunkwise.chunking.markdown import mask_front_matter, parse_markdown
from chunkwise.types import Document

_STRICT = re.compile(r"<!--[ \t]*acl[ \t]*:(?P<tags>[^\n]*?)-->", re.I)
_COMMENT_OPEN = "<!--"
_TRIES = re.compile(r"acl(?![\w])")
UNREADABLE = "unreadable_acl"
NOT_SUBSET = "acl_not_subset"
_TEXT_TYPES = ("text/plain", "text/x-rst", "text/x-org")

Region = tuple[int, int, AccessTags]


@dataclass(frozen=True)
class AccessPlan:
    """The tags of a document and of its marked sections. ``problems`` non-empty means nothing of
    the document may be served (every chunk is stored as ``review``, reason ``unreadable_acl``);
    ``section_problems`` name subsections held for review (``refused``) while the rest is served."""

    default: AccessTags
    regions: tuple[Region, ...] = ()  # outermost first; a refused region has no tags
    problems: tuple[str, ...] = ()
    section_problems: tuple[str, ...] = ()
    refused: tuple[tuple[int, int], ...] = ()
    headings: tuple[tuple[tuple[str, ...], int], ...] = ()  # (heading path, start) of every heading
    title_at: int | None = None  # the first level-1 heading (a title when front matter names none)
    title_text: str = ""

    @property
    def reported(self) -> tuple[str, ...]:
        """Everything the run reports for this file."""
        return self.problems + self.section_problems

    def tags_for(self, start: int, end: int) -> AccessTags:
        """The tags of the innermost region holding ``[start, end)``; the document's otherwise."""
        if self.problems:
            return AccessTags()
        return tags_for(start, end, self.regions, self.default)

    def missing_reason(self, start: int, end: int) -> str:
        """Why a chunk over ``[start, end)`` has no tags."""
        inner = None
        for a, b, _ in self.regions:
            if a <= start and end <= b:
                inner = (a, b)
        return NOT_SUBSET if inner is not None and inner in self.refused else "missing_acl"

    def visible_path(self, path: tuple[str, ...], start: int, end: int) -> tuple[str, ...]:
        """``path`` less every heading that some reader of ``[start, end)`` may not read: each entry
        is the last heading with that path starting before ``end``, read under the tags at its own
        line. An entry matching no heading is dropped (nothing vouches for it)."""
        tags = set(self.tags_for(start, end).tags)
        if not tags or not self.regions:
            return path
        starts = self._heading_starts
        out = []
        for depth in range(1, len(path) + 1):
            found = starts.get(tuple(path[:depth]), [])
            before = [at for at in found if at < end]
            if before and tags <= set(self.tags_for(before[-1], before[-1] + 1).tags):
                out.append(path[depth - 1])
        return tuple(out)

    @cached_property
    def _heading_starts(self) -> dict[tuple[str, ...], list[int]]:
        starts: dict[tuple[str, ...], list[int]] = {}
        for p, at in self.headings:
            starts.setdefault(p, []).append(at)
        return starts

    def readable_at(self, tags: AccessTags, pos: int | None) -> bool:
        """Whether every reader of ``tags`` may read what stands at ``pos`` (None: the front matter,
        under the document's tags)."""
        if not tags or self.problems:
            return True  # served to nobody
        where = self.default if pos is None else self.tags_for(pos, pos + 1)
        return set(tags.tags) <= set(where.tags)

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
    scan = _scan(doc)
    problems.extend(scan.problems)
    return AccessPlan(tags, scan.regions, tuple(problems), scan.section_problems, scan.refused, scan.headings,
                      scan.title_at, scan.title_text)


def access_problems(doc: Document) -> tuple[str, ...]:
    """What the access rules report for ``doc`` (front matter and markers), without any defaults:
    for ``audit``."""
    return plan_access(doc, AccessTags()).reported


@dataclass(frozen=True)
class _Scan:
    regions: tuple[Region, ...] = ()
    problems: tuple[str, ...] = ()
    section_problems: tuple[str, ...] = ()
    refused: tuple[tuple[int, int], ...] = ()
    headings: tuple[tuple[tuple[str, ...], int], ...] = ()
    title_at: int | None = None
    title_text: str = ""


def marker_tags(raw: str) -> str | None:
    """The tag text of a well-formed marker (the whole of ``raw``, stripped), or None."""
    m = _STRICT.fullmatch(raw.strip())
    if not m:
        return None
    tags = m.group("tags")
    if "--" in tags or tags.endswith("-"):
        return None
    return tags.strip()


def _tries(text: str, at: int) -> bool:
    """Whether the comment opening at ``at`` tries to be a marker."""
    head = unicodedata.normalize("NFKC", text[at + len(_COMMENT_OPEN) : at + len(_COMMENT_OPEN) + 80]).casefold()
    return bool(_TRIES.match(head.lstrip("- \t\r\n")))


def _line(text: str, at: int) -> int:
    return text.count("\n", 0, at) + 1


def _scan(doc: Document) -> _Scan:
    text = doc.text
    if _COMMENT_OPEN not in text[doc.body_start :]:
        return _Scan()
    if doc.media_type in _TEXT_TYPES:
        return _Scan(problems=tuple(_text_markers(doc)))
    if doc.media_type != "text/markdown":
        return _Scan()
    parsed = parse_markdown(mask_front_matter(text, doc.body_start))
    blocks = [b for b in parsed.blocks if b.start >= doc.body_start]
    headings = _headings(text, blocks)
    problems: list[str] = []
    honoured: dict[int, str] = {}  # block start -> tag text, for markers in their place
    for i, blk in enumerate(blocks[:-1]):
        nxt = blocks[i + 1]
        if blk.kind == "heading" and nxt.kind == "html_block":
            tags = marker_tags(text[nxt.start : nxt.end])
            if tags is not None:
                honoured[nxt.start] = tags
    literal = [(b.start, b.end) for b in blocks if b.kind == "code"]
    at = text.find(_COMMENT_OPEN, doc.body_start)
    while at >= 0:
        if at not in honoured and _tries(text, at) and not any(a <= at < b for a, b in literal) \
                and not _in_inline_code(text, at):
            line_end = text.find("\n", at)
            raw = text[at : line_end if line_end >= 0 else len(text)]
            if marker_tags(raw.split("-->")[0] + "-->" if "-->" in raw else raw) is None:
                problems.append(f"{doc.source} line {_line(text, at)}: malformed access marker "
                                f"{raw.strip()[:60]!r}; write <!-- acl: tag, tag --> on its own line right under "
                                "the heading (the document is held for review)")
            else:
                problems.append(f"{doc.source} line {_line(text, at)}: access marker not honoured here (it must be "
                                "the first line under a heading, on its own, not in a quote or list); the document "
                                "is held for review")
        at = text.find(_COMMENT_OPEN, at + len(_COMMENT_OPEN))
    regions: list[Region] = []
    refused: list[tuple[int, int]] = []
    section_problems: list[str] = []
    open_regions: list[tuple[int, int, AccessTags, bool]] = []  # enclosing marked sections
    for (start, end, level, path), marker in _marked(headings, blocks, honoured):
        if marker is None:
            continue
        marker_at, raw = marker
        where = f"{doc.source} line {_line(text, marker_at)}: section marker"
        try:
            tags = AccessTags.parse(raw, where)
        except AccessTagError as exc:
            problems.append(str(exc))
            continue
        if not tags:
            problems.append(f"{where} names no tags")
            continue
        while open_regions and open_regions[-1][1] <= start:
            open_regions.pop()
        failed = False
        if open_regions:
            _, _, outer, outer_failed = open_regions[-1]
            extra = sorted(set(tags.tags) - set(outer.tags))
            if outer_failed or extra:
                failed = True
                why = ("it lies inside a subsection already held for review" if outer_failed else
                       f"it names {', '.join(extra)}, outside the enclosing marked section's tags ({outer})")
                section_problems.append(f"{where} under {' > '.join(path)!r}: {why}; a nested marker may only "
                                        "narrow its section's tags, so this subsection is held for review")
        regions.append((start, end, AccessTags() if failed else tags))
        if failed:
            refused.append((start, end))
        open_regions.append((start, end, tags, failed))
    first = next((b for b in blocks if b.kind == "heading" and b.level == 1), None)
    return _Scan(tuple(regions), tuple(problems), tuple(section_problems), tuple(refused),
                 tuple((path, start) for start, _, _, path in headings),
                 first.start if first is not None else None, first.text if first is not None else "")


def _headings(text: str, blocks) -> list[tuple[int, int, int, tuple[str, ...]]]:
    """``(start, end, level, path)`` of every heading: its section runs to the next heading of the
    same or a higher level."""
    from chunkwise.normalise.headings import heading_label

    heads = [b for b in blocks if b.kind == "heading"]
    out = []
    stack: list[tuple[int, str]] = []
    for i, h in enumerate(heads):
        while stack and stack[-1][0] >= h.level:
            stack.pop()
        stack.append((h.level, heading_label(h.text)))
        end = next((later.start for later in heads[i + 1 :] if later.level <= h.level), len(text))
        out.append((h.start, end, h.level, tuple(t for _, t in stack)))
    return out


def _marked(headings, blocks, honoured):
    """Each heading with its honoured marker ``(marker start, tag text)`` or None."""
    starts = [b.start for b in blocks]
    for head in headings:
        i = bisect_right(starts, head[0])  # the block after the heading
        marker = None
        if i < len(blocks) and blocks[i].start in honoured:
            marker = (blocks[i].start, honoured[blocks[i].start])
        yield head, marker


def _text_markers(doc: Document) -> list[str]:
    """Plain text, reST, Org: a line that tries to be a marker fails closed (markers are Markdown's)."""
    out = []
    text = doc.text
    at = text.find(_COMMENT_OPEN, doc.body_start)
    while at >= 0:
        line_start = text.rfind("\n", 0, at) + 1
        if not text[line_start:at].strip() and _tries(text, at):
            out.append(f"{doc.source} line {_line(text, at)}: access marker in a {doc.media_type} file; markers are "
                       "read only in Markdown (the document is held for review; use --acl-map or front matter)")
        at = text.find(_COMMENT_OPEN, at + len(_COMMENT_OPEN))
    return out


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
