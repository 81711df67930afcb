"""Heading-aware strategies.

``structure``: every heading section is packed on its own (an edit to one section never moves another
section's cuts, which idempotent re-ingestion relies on); inside a section, top-level blocks are the
preferred cuts, then list items and table rows, then code lines, then sentences. Code blocks and tables
stay whole when they fit. ``table`` adds header-repeating row groups; ``auto`` also keeps content-type
atoms whole (``atoms.py``: Q&A pairs, numbered steps, field–value blocks) and packs consecutive speaker
turns whole, with a bridge chunk across each cut between turns (``transcript.py``), so one config
serves a mixed document.
"""
from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from dataclasses import replace
from typing import Iterator

from chunkwise.chunking import boundaries
from chunkwise.chunking.base import BaseChunker, Draft, drafts_from_pieces
from chunkwise.chunking.levels import Level
from chunkwise.chunking.markdown import (
    Section,
    fold_empty_headings,
    front_matter_title,
    parse_markdown,
    sections_from_blocks,
)
from chunkwise.chunking.atoms import TURN, Atom, atom_cuts, demote_inside, find_atoms
from chunkwise.chunking.pack import Region
from chunkwise.chunking.tables import table_drafts
from chunkwise.chunking.transcript import bridges, oversized
from chunkwise.types import Block

_CAPS_HEADING = re.compile(r"(?:\A|\n[^\S\n]*\n)[^\S\n]*([A-Z0-9][A-Z0-9 ,'&/()?:-]{2,78}[A-Z?)])[^\S\n]*(?=\n|\Z)")
_PROSE = ("paragraph", "blockquote", "html_block", "list", "list_item")


class StructureChunker(BaseChunker):
    name = "structure"
    table_mode = "rows"  # "rows": cut between rows; "groups": header-repeating row groups
    atoms = False

    def _chunk(self, text: str, barrier: int | None = None):
        sections, title = self.sections(text, barrier)
        return self._chunk_sections(text, sections, self.config.title or title)

    def chunk_from(self, text: str, start: int) -> list:
        """Chunks of ``text`` where no empty heading before ``start`` folds into a section at or
        after it (``start``: a hard boundary, e.g. where access tags change)."""
        return self.for_text(text)._chunk(text, start or None)

    def chunk_blocks(self, text: str, blocks, body_start: int = 0, title: str = ""):
        """Chunk an extracted document whose structure (headings, lists, tables) is already known."""
        doc = sections_from_blocks(text, list(blocks), body_start)
        return self.for_text(text)._chunk_sections(text, list(doc.sections), self.config.title or title or doc.title)

    def _chunk_sections(self, text: str, sections, title: str):
        drafts: list[Draft] = []
        for sec in sections:
            drafts.extend(self.section_drafts(text, sec, title))
        return self.finalize(text, drafts, title)

    # -- structure ---------------------------------------------------------------------------------
    def sections(self, text: str, barrier: int | None = None) -> tuple[list[Section], str]:
        if self.config.format == "markdown":
            doc = parse_markdown(text, barrier=barrier)
            return list(doc.sections), front_matter_title(doc.front_matter) or doc.title
        return self.text_sections(text), ""

    @staticmethod
    def text_sections(text: str) -> list[Section]:
        """Plain text: blank-line paragraphs; a short ALL-CAPS line on its own is a heading."""
        heads = [(m.start(1), m.end(1), m.group(1).strip()) for m in _CAPS_HEADING.finditer(text)]
        starts = [0, *(a for a, _, _ in heads)]
        sections: list[Section] = []
        for n, a in enumerate(starts):
            b = starts[n + 1] if n + 1 < len(starts) else len(text)
            blocks: list[Block] = []
            path: tuple[str, ...] = ()
            body_from = a
            if n > 0:
                ha, he, title = heads[n - 1]
                path, body_from = (title,), he
                blocks.append(Block("heading", ha, he, 1, title))
            blocks += [Block("paragraph", s, e) for s, e in _paragraph_spans(text, body_from, b)]
            if blocks:
                sections.append(Section(a, b, path, len(sections), tuple(blocks)))
        return fold_empty_headings(sections)

    def section_drafts(self, text: str, sec: Section, title: str) -> list[Draft]:
        budget, _ = self.body_budget(sec.heading_path, title)
        budget = (budget, self.body_chars(sec.heading_path, title))  # units and characters
        meta = {"heading_path": sec.heading_path, "section": sec.ordinal}
        body = Section(sec.blocks[0].end, sec.end, sec.heading_path, sec.ordinal, sec.blocks[1:]) if sec.blocks else sec
        if (self.config.header in ("path", "full") and sec.blocks and sec.blocks[0].kind == "heading"
                and text[body.start : body.end].strip()):
            # The heading path is in the embedded header, so heading lines stay out of the chunk text:
            # renaming a heading then changes the embedding of its chunks, not their identity (seed 001).
            # A section that is only its heading (one that cannot fold into the next: at a change of
            # access tags, or at the end) keeps it as its text: every heading is in some chunk, so
            # the positions rule sees text a caller may not read (retrieve/positions.py).
            sec = body
        if self.table_mode == "groups" and any(b.kind == "table" for b in sec.blocks):
            return self._with_table_groups(text, sec, budget, meta)
        return self._pack_blocks(text, sec.start, sec.end, sec.blocks, budget, meta)

    def _with_table_groups(self, text: str, sec: Section, budget: tuple[int, int], meta: dict) -> list[Draft]:
        out: list[Draft] = []
        run: list[Block] = []
        run_start = sec.start
        for blk in sec.blocks:
            if blk.kind != "table":
                run.append(blk)
                continue
            if run:
                out.extend(self._pack_blocks(text, run_start, blk.start, run, budget, meta))
            out.extend(table_drafts(text, blk.start, blk.end, self.sizer, budget[0], max_chars=budget[1],
                                    fields=self.config.table_rows_as_fields, **meta))
            run, run_start = [], blk.end
        if run:
            out.extend(self._pack_blocks(text, run_start, sec.end, run, budget, meta))
        return out

    def _pack_blocks(self, text: str, start: int, end: int, blocks, budget: tuple[int, int], meta: dict
                     ) -> list[Draft]:
        cuts: list[tuple[int, Level]] = []
        floors: list[tuple[int, int, Level]] = []
        for blk in blocks:
            if blk.kind == "list_item":  # extracted list items: item-level cuts between them
                cuts.append((blk.end, Level.ITEM if blk.level <= 1 else Level.LINE))
            elif blk.kind != "heading":  # a heading stays glued to the block that follows it
                cuts.append((blk.end, Level.BLOCK))
            cuts.extend(self.block_cuts(text, blk))
            if blk.kind in ("code", "table"):
                floors.append((blk.start, blk.end, Level.LINE))
        found, regions = self.atoms_of(text, blocks, budget) if self.atoms else ([], [])
        if found:
            cuts = [*demote_inside(cuts, found), *atom_cuts(found, text)]
        pieces = self.pack(text, start, end, cuts, budget[0], max_chars=budget[1], overlap=self.config.overlap,
                           floors=floors, fine=(boundaries.sentences,), regions=regions)
        drafts = drafts_from_pieces(pieces, **meta)
        kinds = {(b.start, b.end): b.kind for b in blocks if b.kind in ("code", "table")}
        drafts = [_with_kind(d, kinds) for d in drafts]
        if not found:
            return drafts
        heads = {b.start: b.end for b in blocks if b.kind == "heading"}
        drafts = self.label_atoms(text, drafts, found, regions, heads)
        return bridges(text, drafts, [a for a in found if a.kind == TURN], self.sizer, *budget)

    def atoms_of(self, text: str, blocks, budget: tuple[int, int]) -> tuple[list[Atom], list[Region]]:
        """Atoms over each run of prose blocks (a question and its answer may be two paragraphs; code
        and tables are never searched), and one region per speaker turn too long for one chunk
        (``budget``: units and characters), paying for its label on every later piece."""
        found: list[Atom] = []
        run: list[Block] = []
        for blk in [*blocks, None]:
            if blk is not None and blk.kind in _PROSE:
                run.append(blk)
                continue
            if run:
                found += find_atoms(text, run[0].start, max(b.end for b in run))
            run = []
        turns = oversized(text, [a for a in found if a.kind == TURN], self.sizer, *budget)
        units = self.sizer.count_many([a.label + " " for a in turns]) if turns else []
        return found, [Region(a.start, a.end, n, len(a.label) + 1) for a, n in zip(turns, units)]

    def label_atoms(self, text: str, drafts: list[Draft], found: list[Atom], regions: list[Region],
                    heads: dict[int, int] | None = None) -> list[Draft]:
        """A chunk made of atoms of one kind takes that kind (``turn``, ``qa``, ``step``, ``fields``); a
        later piece of a long turn carries the turn's label in its embedded text (re-measured)."""
        starts = [a.start for a in found]
        by_start = {r.start: r for r in regions}
        out = []
        for d in drafts:
            lo = max(0, bisect_right(starts, d.start) - 1)
            inside = [a for a in found[lo:bisect_left(starts, d.end)] if a.start < d.end and d.start < a.end]
            lead = (heads or {}).get(d.start)  # a heading line above the atoms does not make the chunk prose
            led = lead is not None and inside and not text[lead:inside[0].start].strip()
            if (inside and d.kind == "text" and len({a.kind for a in inside}) == 1
                    and (inside[0].start <= d.start or led)):
                d = replace(d, kind=inside[0].kind)
                first = inside[0]
                if first.kind == TURN and d.start > first.start:  # a long turn's piece, or an overlap
                    reg = by_start.get(first.start)
                    units = reg.repeat_units if reg else self.sizer.count(first.label + " ")
                    d = replace(d, embed_body=f"{first.label} {text[d.start:d.end]}", size=d.size + units,
                                exact=False)
            out.append(d)
        return out

    def block_cuts(self, text: str, blk: Block) -> Iterator[tuple[int, Level]]:
        if blk.kind in ("paragraph", "blockquote", "html_block"):  # sentences come lazily from pack
            if blk.kind != "paragraph":
                yield from boundaries.lines(text, blk.start, blk.end)
        elif blk.kind == "code":
            yield from boundaries.lines(text, blk.start, blk.end)
        elif blk.kind == "table":
            rows = list(boundaries.lines(text, blk.start, blk.end, Level.ITEM))
            yield from rows[2:] if len(rows) > 2 else []
        elif blk.kind == "list":
            for pos, lvl in blk.meta.get("items", ()):
                if pos > blk.start:
                    yield pos, Level.ITEM if lvl == 1 else Level.LINE


def _with_kind(d: Draft, kinds: dict[tuple[int, int], str]) -> Draft:
    for (a, b), kind in kinds.items():
        if a <= d.start and d.end <= b:
            return replace(d, kind=kind)
    return d


def _paragraph_spans(text: str, start: int, end: int) -> list[tuple[int, int]]:
    return boundaries.trimmed_spans(text, [p for p, _ in boundaries.paragraphs(text, start, end)], start, end)


class TableChunker(StructureChunker):
    name = "table"
    table_mode = "groups"


class AutoChunker(StructureChunker):
    name = "auto"
    table_mode = "groups"
    atoms = True

