"""Golden sets: questions with the character spans that answer them, read from JSON Lines.

A span is a half-open character range into a document's *original* text (the decoded file for
Markdown and text, the extracted text for other formats), the same coordinates chunks carry, so a
metric can compare a span with any returned passage without re-reading text. When a line gives only
the answer text, the span is located in the document as a reader sees it (``locate``: hyphenation,
running headers and whitespace repaired, then mapped back to original offsets), and must be found
exactly once: a guess at the first of several occurrences would score retrieval against the wrong place.

One line (see DESIGN.md, "Golden set format")::

    {"id": "q1", "question": "...", "doc": "guide.md", "answer": "exact text", "start_char": 120, "end_char": 171}
    {"id": "q2", "question": "...", "doc": "guide.md", "answer": "exact text"}
    {"id": "q3", "question": "...", "spans": [{"doc": "a.md", "start_char": 5, "end_char": 40},
                                              {"doc": "b.md", "answer": "located text"}]}
    {"id": "q4", "question": "...", "doc": "report.pdf", "pages": [12, 13]}

A question with ``pages`` (1-based page numbers of ``doc``, the way PDF question sets are labelled)
is scored by page: it is answered at the first result on one of those pages (page recall@k).
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Callable, Iterable, Mapping, Sequence

from chunkwise import ids
from chunkwise.errors import ConfigError
from chunkwise.evaluate.locate import SourceText, as_source, locate, matches_span
from chunkwise.evaluate.locate import _short


@dataclass(frozen=True, slots=True)
class Span:
    """``doc``'s original text ``[start, end)``; ``doc`` is the path relative to the docs root. Unpacks
    and indexes like the ``(doc, start, end)`` tuple the metrics take."""

    doc: str
    start: int
    end: int

    @property
    def length(self) -> int:
        return self.end - self.start

    def __iter__(self):
        return iter((self.doc, self.start, self.end))

    def __getitem__(self, i):
        return (self.doc, self.start, self.end)[i]


@dataclass(frozen=True, slots=True)
class GoldenQuestion:
    """A question and every span its answer needs (all of them, not any one)."""

    id: str
    question: str
    spans: tuple[Span, ...]
    answer: str = ""
    pages: tuple[tuple[str, int], ...] = ()  # (doc, page): scored by page instead of spans


SPLITS = ("tune", "test")
_SPLIT_SALT = "chunkwise-golden-split-v1"


def split_of(qid: str) -> str:
    """``"tune"`` or ``"test"``: half the ids each, by a hash of the id alone, so a question keeps its
    side when others are added or reordered, and the split cannot be steered by what a config scores."""
    return SPLITS[0] if ids.unit_interval(_SPLIT_SALT, qid) < 0.5 else SPLITS[1]


def select_split(questions: Sequence[GoldenQuestion], split: str) -> list[GoldenQuestion]:
    """The questions of one split (``"all"`` keeps every one). Choose a config on ``tune``, gate it on
    ``test``: a config picked on the questions it is gated on is graded on its own homework."""
    if split == "all":
        return list(questions)
    if split not in SPLITS:
        raise ConfigError(f"--split {split!r}: use tune, test or all")
    out = [q for q in questions if split_of(q.id) == split]
    if not out:
        raise ConfigError(f"the golden set has no {split} questions ({len(questions)} in all); "
                          "add questions, or use --split all")
    return out


_SPAN_KEYS = {"doc", "start_char", "end_char", "answer", "text"}
_LINE_KEYS = {"id", "question", "doc", "answer", "start_char", "end_char", "spans", "pages", "metadata"}


def question_from_record(record: Mapping, texts: Callable[[str], str] | Mapping[str, str], *,
                         where: str = "") -> GoldenQuestion:
    """One parsed JSON object -> GoldenQuestion, its spans checked against (or located in) the texts.
    ``texts`` maps a doc path to its original text (a Mapping, or a loader function)."""
    get = texts.__getitem__ if isinstance(texts, Mapping) else texts
    if not isinstance(record, Mapping):
        raise ConfigError(f"{where}each line must be a JSON object, got {type(record).__name__}")
    qid = record.get("id")
    if not isinstance(qid, (str, int)) or isinstance(qid, bool) or str(qid) == "":
        raise ConfigError(f"{where}missing \"id\": give every question a unique string id")
    qid = str(qid)
    label = f"{where}question {qid!r}: "
    unknown = set(record) - _LINE_KEYS
    if unknown:
        raise ConfigError(f"{label}unknown field(s) {sorted(unknown)}; allowed: {sorted(_LINE_KEYS)}")
    question = record.get("question")
    if not isinstance(question, str) or not question.strip():
        raise ConfigError(f"{label}\"question\" must be a non-empty string")
    answer = record.get("answer", "")
    if not isinstance(answer, str):
        raise ConfigError(f"{label}\"answer\" must be a string")
    if "pages" in record:
        return _page_question(record, qid, question, answer, label)
    if "spans" in record:
        if any(k in record for k in ("start_char", "end_char")):
            raise ConfigError(f"{label}give offsets either at the top level or in \"spans\", not both")
        raw = record["spans"]
        if not isinstance(raw, list) or not raw:
            raise ConfigError(f"{label}\"spans\" must be a non-empty list of "
                              "{\"doc\", \"start_char\", \"end_char\"} objects")
        single = False
    else:
        raw = [{k: record[k] for k in ("doc", "start_char", "end_char", "answer") if k in record}]
        single = True
    spans = []
    for i, item in enumerate(raw):
        if not isinstance(item, Mapping):
            raise ConfigError(f"{label}span {i} must be an object")
        bad = set(item) - _SPAN_KEYS
        if bad:
            raise ConfigError(f"{label}span {i} has unknown field(s) {sorted(bad)}; allowed: {sorted(_SPAN_KEYS)}")
        doc = item.get("doc", record.get("doc"))
        if not isinstance(doc, str) or not doc:
            raise ConfigError(f"{label}span {i} names no \"doc\" (a path relative to the docs folder)")
        doc = _clean_doc(doc, label)
        text = as_source(get(doc))
        span_answer = item.get("text", item.get("answer", answer if single else ""))
        spans.append(_span(doc, text, item, span_answer, f"{label}span {i}" if not single else label.rstrip(": ")))
    return GoldenQuestion(qid, question, tuple(spans), answer)


def _page_question(record: Mapping, qid: str, question: str, answer: str, label: str) -> GoldenQuestion:
    if any(k in record for k in ("spans", "start_char", "end_char")):
        raise ConfigError(f"{label}give either \"pages\" or spans/offsets, not both")
    doc, pages = record.get("doc"), record["pages"]
    if not isinstance(doc, str) or not doc:
        raise ConfigError(f"{label}\"pages\" needs \"doc\" (a path relative to the docs folder)")
    if (not isinstance(pages, list) or not pages
            or any(not isinstance(p, int) or isinstance(p, bool) or p < 1 for p in pages)):
        raise ConfigError(f"{label}\"pages\" must be a non-empty list of page numbers (1 = the first page)")
    doc = _clean_doc(doc, label)
    return GoldenQuestion(qid, question, (), answer, tuple((doc, p) for p in sorted(set(pages))))


def _span(doc: str, source: SourceText, item: Mapping, answer: str, label: str) -> Span:
    has = [k in item for k in ("start_char", "end_char")]
    if any(has) and not all(has):
        raise ConfigError(f"{label}: give both start_char and end_char, or neither (then the answer is located)")
    if not any(has):
        start, end = locate(source, answer, what=f"{label}: the answer")
        return Span(doc, start, end)
    text = source.text
    start, end = item["start_char"], item["end_char"]
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in (start, end)):
        raise ConfigError(f"{label}: start_char and end_char must be integers")
    if not 0 <= start < end <= len(text):
        raise ConfigError(f"{label}: span [{start}, {end}) is not inside {doc} (0..{len(text)} characters) "
                          "or is empty; offsets count characters of the original text, end exclusive")
    if answer and not matches_span(source, start, end, answer):
        raise ConfigError(f"{label}: {doc}[{start}:{end}] is {_short(text[start:end])}, not the answer "
                          f"{_short(answer)}; fix the offsets or drop one of them")
    return Span(doc, start, end)


def _clean_doc(doc: str, label: str) -> str:
    p = PurePosixPath(doc.replace("\\", "/"))
    if p.is_absolute() or ".." in p.parts:
        raise ConfigError(f"{label}doc {doc!r} must be a path inside the docs folder, relative to it")
    return str(p)


class _Texts:
    """Documents under a root, extracted once each (a golden set names few documents)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.sources: dict[str, SourceText] = {}

    @property
    def texts(self) -> dict[str, str]:
        return {doc: s.text for doc, s in self.sources.items()}

    def __call__(self, doc: str) -> SourceText:
        if doc not in self.sources:
            path = self.root / doc
            if not path.is_file():
                raise ConfigError(f"document {doc!r} not found under {self.root}; check --docs and the \"doc\" field")
            from chunkwise.pipeline.documents import load_document

            document = load_document(path)
            self.sources[doc] = SourceText(document.text, document)
        return self.sources[doc]


def load_golden_texts(path: str | Path, docs_root: str | Path) -> tuple[list[GoldenQuestion], dict[str, str]]:
    """``load_golden`` plus the original text of every document it names (for the caller to chunk)."""
    from chunkwise.textfile import GOLDEN_LIMIT, read_text

    texts = _Texts(Path(docs_root))
    lines = read_text(path, "--golden", GOLDEN_LIMIT).splitlines()
    return read_golden(lines, texts, name=str(path)), texts.texts


def load_golden(path: str | Path, docs_root: str | Path) -> list[GoldenQuestion]:
    """Read a golden set; every span checked or located in its document under ``docs_root``."""
    return load_golden_texts(path, docs_root)[0]


def read_golden(lines: Iterable[str], texts: Callable[[str], str] | Mapping[str, str], *,
                name: str = "golden set") -> list[GoldenQuestion]:
    """Parse JSON Lines (blank lines and ``#`` comments skipped); ids must be unique."""
    out: list[GoldenQuestion] = []
    seen: dict[str, int] = {}
    for n, line in enumerate(lines, 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        where = f"{name}:{n}: "
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ConfigError(f"{where}not valid JSON ({exc.msg}); one JSON object per line") from exc
        q = question_from_record(record, texts, where=where)
        if q.id in seen:
            raise ConfigError(f"{where}question id {q.id!r} repeats line {seen[q.id]}; ids must be unique")
        seen[q.id] = n
        out.append(q)
    if not out:
        raise ConfigError(f"{name} holds no questions; write one JSON object per line")
    return out


def to_record(q: GoldenQuestion) -> dict:
    """The JSON Lines object for ``q``, offsets explicit (reads back to an equal question)."""
    rec: dict = {"id": q.id, "question": q.question}
    if q.answer:
        rec["answer"] = q.answer
    if len(q.spans) == 1:
        s = q.spans[0]
        rec.update(doc=s.doc, start_char=s.start, end_char=s.end)
    else:
        rec["spans"] = [{"doc": s.doc, "start_char": s.start, "end_char": s.end} for s in q.spans]
    return rec


def write_golden(questions: Iterable[GoldenQuestion], path: str | Path) -> int:
    """Write ``questions`` as JSON Lines; returns how many were written."""
    lines = [json.dumps(to_record(q), ensure_ascii=False) for q in questions]
    Path(path).write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return len(lines)
