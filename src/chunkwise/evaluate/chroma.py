"""The Chroma chunking benchmark (Smith & Troynikov, 2024): its question set and its scores.

``import_chroma`` reads ``questions_df.csv`` (question, JSON references with ``start_index`` /
``end_index`` into one corpus, corpus id) and the ``corpora/*.md`` files into golden questions.
Chroma's code scores character ranges: per question, the top-5 chunks of one collection holding all
corpora give recall, precision and IoU (``chroma_scores``, the same arithmetic as
``metrics.overlap_scores`` in characters) and precision_Ω is the IoU of perfect retrieval, every chunk
that touches an excerpt taken once (``precision_omega``; needs no embeddings).

``locate_like_chroma`` re-creates how their harness placed chunks that arrive as bare strings
(``rigorous_document_search``): a trailing full stop dropped, the *first* exact occurrence taken,
then a whitespace- and case-insensitive search. Peer splitters must be placed this way to reproduce
the published rows; chunkwise chunks carry exact offsets and are never searched for.
"""
from __future__ import annotations

import csv
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Sequence

from chunkwise.errors import InputError
from chunkwise.evaluate.golden import GoldenQuestion, Span
from chunkwise.evaluate.metrics import Overlap, Range, overlap_scores, union

QUESTIONS = "questions_df.csv"
CORPORA = "corpora"


def import_chroma(root: str | Path) -> tuple[dict[str, str], list[GoldenQuestion]]:
    """``(docs, questions)`` from a folder holding ``questions_df.csv`` and ``corpora/``. ``docs`` maps
    a file name (``"finance.md"``, the path relative to ``corpora/``) to its decoded text; each question
    (id ``chroma-NNN``, in file order) has one span per reference, checked to slice exactly."""
    root = Path(root)
    qfile, cdir = root / QUESTIONS, root / CORPORA
    if not qfile.is_file() or not cdir.is_dir():
        raise InputError(f"{root} is not the Chroma benchmark folder: it needs {QUESTIONS} and {CORPORA}/")
    docs = {p.name: p.read_text(encoding="utf-8") for p in sorted(cdir.glob("*.md"))}
    with qfile.open(encoding="utf-8", newline="") as f:
        rows = list(csv.DictReader(f))
    questions = [_question(i, row, docs, qfile) for i, row in enumerate(rows)]
    return docs, questions


def _question(i: int, row: dict, docs: dict[str, str], qfile: Path) -> GoldenQuestion:
    where = f"{qfile}: row {i + 2}"
    try:
        question, refs, corpus = row["question"], json.loads(row["references"]), row["corpus_id"]
    except (KeyError, TypeError, json.JSONDecodeError) as exc:
        raise InputError(f"{where}: expected columns question, references (JSON), corpus_id ({exc})") from exc
    doc = f"{corpus}.md"
    if doc not in docs:
        raise InputError(f"{where}: corpus {corpus!r} has no file {CORPORA}/{doc}")
    text, spans, parts = docs[doc], [], []
    for ref in refs:
        start, end, content = int(ref["start_index"]), int(ref["end_index"]), ref["content"]
        if text[start:end] != content:
            raise InputError(f"{where}: reference [{start}, {end}) of {doc} is {text[start:end][:40]!r}, "
                             f"not {content[:40]!r}; the corpus file does not match the questions")
        spans.append(Span(doc, start, end))
        parts.append(content)
    if not spans:
        raise InputError(f"{where}: question has no references")
    return GoldenQuestion(f"chroma-{i:03d}", question, tuple(spans), "\n".join(parts))


def chroma_scores(spans: Sequence[Range], retrieved: Sequence[Range]) -> Overlap:
    """Chroma's per-question recall / precision / IoU over the retrieved chunks, in characters."""
    return overlap_scores(spans, retrieved)


def _touching(chunks: Iterable[Range], spans: Sequence[Range]) -> list[Range]:
    # Chroma's intersect_two_ranges accepts an empty intersection, so a chunk that merely abuts an
    # excerpt counts as touching it (and its length enters the denominator); kept for fidelity.
    return [c for c in chunks if any(c[0] == s[0] and max(c[1], s[1]) <= min(c[2], s[2]) for s in spans)]


def precision_omega(spans: Sequence[Range], chunks: Iterable[Range]) -> float:
    """IoU under perfect retrieval: every chunk touching an excerpt, their union counted once."""
    touching = _touching(chunks, spans)
    docs = {s[0] for s in spans}
    num = den = 0
    for doc in docs:
        mine = [(c[1], c[2]) for c in touching if c[0] == doc]
        refs = [(s[1], s[2]) for s in spans if s[0] == doc]
        inter = union((max(a, s), min(b, e)) for a, b in mine for s, e in refs if max(a, s) < min(b, e))
        num += sum(e - s for s, e in inter)
        den += sum(e - s for s, e in union(mine + refs))
    return num / den if num else 0.0


@dataclass(frozen=True)
class ChromaRow:
    """Means over questions, in % (the published tables' unit), and the number of questions."""

    recall: float
    precision: float
    iou: float
    omega: float | None
    n: int


def chroma_row(overlaps: Sequence[Overlap], omegas: Sequence[float] | None = None) -> ChromaRow:
    n = len(overlaps)
    if not n:
        raise ValueError("no questions scored")
    mean = lambda xs: 100 * sum(xs) / len(xs)  # noqa: E731
    return ChromaRow(mean([o.recall for o in overlaps]), mean([o.precision for o in overlaps]),
                     mean([o.iou for o in overlaps]), mean(list(omegas)) if omegas else None, n)


def omegas_for(questions: Sequence[GoldenQuestion], chunks: Iterable[Range]) -> list[float]:
    """precision_Ω for every question, the chunks grouped by document once."""
    by_doc: dict[str, list[Range]] = {}
    for c in chunks:
        by_doc.setdefault(c[0], []).append(c)
    return [precision_omega(q.spans, [c for d in {s.doc for s in q.spans} for c in by_doc.get(d, ())])
            for q in questions]


def locate_like_chroma(text: str, piece: str) -> tuple[int, int] | None:
    """Where Chroma's harness would place a chunk given only its string (see module docstring);
    None where it would have fallen back to fuzzy sentence matching."""
    if piece.endswith("."):
        piece = piece[:-1]
    i = text.find(piece)
    if i != -1:
        return i, i + len(piece)
    words = re.sub(r"\s+", " ", piece).strip().split()
    if not words:
        return None
    m = re.compile(r"\s*".join(re.escape(w) for w in words), re.IGNORECASE).search(text)
    return (m.start(), m.end()) if m else None
