"""Structured atoms (seed 004: route by content type): speaker turns, Q&A pairs, numbered steps and
field–value blocks, found from line starts as offsets.

The ``auto`` strategy keeps each atom whole: cuts inside an atom are demoted below every cut between
atoms, so an atom is split only when it alone is over the cap. Speaker turns go further: each turn is
a packing region of its own (one turn, one chunk), and a piece of a turn too long for one chunk repeats
the turn's label (``[00:01:05] Marco:``) in its embedded text, counted in the cap, so timestamp and
speaker stay with every piece. Pure functions; nothing here measures text.
"""
from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass
from typing import Iterable, Sequence

from chunkwise.chunking.levels import Level

_LINE = re.compile(r"^[^\S\n]*(\S[^\n]*)$", re.M)
_BREAK = re.compile(r"\n[^\S\n]*\n")
_NEWLINE = re.compile(r"\n")
_QUESTION = re.compile(r"(?:Q|Question)\s*\d*\s*[:.)]\s")
_ANSWER = re.compile(r"(?:A|Answer)\s*\d*\s*[:.)]\s")
_STEP = re.compile(r"(?:Step\s+)?\d{1,3}[.)]\s+\S", re.I)
_NAME = r"[A-Z][\w.'/()-]*(?: [A-Za-z][\w.'/()-]*){0,3}"
_STAMP = r"[\[(]?\d{1,2}:\d{2}(?::\d{2})?(?:[.,]\d+)?[\])]?"
_STAMPED = re.compile(rf"(?P<label>{_STAMP}\s*(?:-\s*)?(?P<who>{_NAME}):)\s+\S")
_LABELLED = re.compile(rf"(?P<label>(?P<who>{_NAME}):)\s+(?P<value>\S.*)")
_SENTENCE_END = re.compile(r"[.!?…][\"'”’)\]]*$")

TURN, QA, STEP, FIELDS = "turn", "qa", "step", "fields"
# What a chunk kind means as a content type (the route the manifest shows).
ROUTES = {"text": "prose", "table": "table", "code": "code", TURN: "transcript", QA: "faq", STEP: "steps",
          FIELDS: "fields"}


@dataclass(frozen=True, slots=True)
class Atom:
    kind: str  # turn | qa | step | fields
    start: int
    end: int
    label: str = ""  # a turn's speaker label as written, e.g. "[00:01:05] Marco:"


def find_atoms(text: str, start: int = 0, end: int | None = None) -> list[Atom]:
    """The atoms that begin a line inside ``text[start:end]``, in order, without overlap.

    A line ``[00:01:05] Marco: ...`` (any clock stamp) is a turn. Runs of ``Name: value`` lines are
    turns when names recur or the values are sentences, and otherwise one field block. ``Q:``/
    ``Question:`` opens a Q&A pair that runs through its answer; ``1.``/``Step 2)`` opens a step.
    A turn or step ends at the next atom or a blank line; a pair ends at the next atom, or at a blank
    line once its answer has begun.
    """
    end = len(text) if end is None else end
    lines = [(m.start(), m.end(), m.group(1)) for m in _LINE.finditer(text, start, end)]
    tags: list[tuple[str | None, str]] = []
    for _, _, body in lines:
        if _QUESTION.match(body):
            tags.append(("q", ""))
        elif _ANSWER.match(body):
            tags.append(("a", ""))
        elif m := _STAMPED.match(body):
            tags.append((TURN, m.group("label")))
        elif _STEP.match(body):
            tags.append((STEP, ""))
        elif _LABELLED.match(body):
            tags.append(("label", ""))
        else:
            tags.append((None, ""))
    _resolve_label_runs(text, lines, tags)
    atoms: list[Atom] = []
    i = 0
    while i < len(lines):
        kind, label = tags[i]
        if kind not in (TURN, STEP, FIELDS, "q"):
            i += 1
            continue
        j = i + 1
        answered = False
        while j < len(lines):
            nxt = tags[j][0]
            broken = bool(_BREAK.search(text, lines[j - 1][1], lines[j][0]))
            if kind == FIELDS:
                if nxt != FIELDS or broken:
                    break
            elif nxt in (TURN, STEP, FIELDS, "q"):
                break
            elif kind == "q":
                if broken and answered and nxt != "a":
                    break
                answered = answered or nxt == "a"
            elif broken:
                break
            j += 1
        atoms.append(Atom(QA if kind == "q" else kind, lines[i][0], lines[j - 1][1], label))
        i = j
    return atoms


def _resolve_label_runs(text: str, lines: list[tuple[int, int, str]], tags: list) -> None:
    """``Name: value`` runs: turns when a name recurs or the values read as sentences (a dialogue),
    else a field block (``Owner: SRE`` / ``Severity: 2``). A single such line is prose."""
    i = 0
    while i < len(lines):
        if tags[i][0] != "label":
            i += 1
            continue
        j = i + 1
        while j < len(lines) and tags[j][0] == "label" and not _BREAK.search(text, lines[j - 1][1], lines[j][0]):
            j += 1
        found = [_LABELLED.match(lines[k][2]) for k in range(i, j)]
        names = [m.group("who") for m in found]
        sentences = sum(bool(_SENTENCE_END.search(m.group("value"))) and len(m.group("value").split()) >= 5
                        for m in found)
        if j - i >= 2 and len(set(names)) >= 2 and (len(set(names)) < len(names) or 2 * sentences >= j - i):
            for k, m in zip(range(i, j), found):
                tags[k] = (TURN, m.group("label"))
        elif j - i >= 2:
            for k in range(i, j):
                tags[k] = (FIELDS, "")
        else:
            tags[i] = (None, "")
        i = j


def atom_cuts(atoms: Sequence[Atom], text: str) -> list[tuple[int, Level]]:
    """ITEM cuts at every atom's edges, and LINE cuts between the fields of a field block."""
    out: list[tuple[int, Level]] = []
    for a in atoms:
        out += [(a.start, Level.ITEM), (a.end, Level.ITEM)]
        if a.kind == FIELDS:
            out += [(m.start(), Level.LINE) for m in _NEWLINE.finditer(text, a.start, a.end)]
    return out


def demote_inside(cuts: Iterable[tuple[int, Level]], atoms: Sequence[Atom]) -> list[tuple[int, Level]]:
    """Cuts strictly inside an atom drop to at most LINE, so an atom is cut only when it alone is over
    the budget (a blank line between a question and its answer must not be the preferred cut)."""
    starts = [a.start for a in atoms]
    out = []
    for pos, level in cuts:
        k = bisect_right(starts, pos) - 1
        if k >= 0 and atoms[k].start < pos < atoms[k].end and level > Level.LINE:
            level = Level.LINE
        out.append((pos, level))
    return out
