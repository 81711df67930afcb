"""ChunkRecord: every field of seed 001's record plus what retrieval and evaluation need later."""
from __future__ import annotations

import json
from dataclasses import dataclass, fields
from operator import attrgetter
from typing import Iterator, Sequence

from chunkwise import ids
from chunkwise.access import AccessTags
from chunkwise.chunking.atoms import ROUTES
from chunkwise.chunking.base import ABOUT
from chunkwise.enrich.boxes import box_finder
from chunkwise.enrich.describe import describe
from chunkwise.enrich.acl import UNREADABLE, AccessPlan
from chunkwise.types import Chunk, Document

READY, REVIEW = "ready", "review"
# Bumped when a record gains or changes a field: it is part of every document's ingest inputs, so a
# re-ingest re-prepares stored documents once and refreshes their kept records in place (same chunk
# ids, same embed keys: nothing is re-embedded). 2: ``route``. Not bumped for ``boxes``: a store
# written before them keeps its records (a re-prepared or new PDF gets them; stores of other files
# would only have been rewritten to stay the same).
RECORD_FORMAT = 2


@dataclass(frozen=True, slots=True)  # slots: a 60 MB-text document has 400,000 of them (a dict each was 0.8 KB)
class ChunkRecord:
    chunk_id: str
    doc_id: str
    source_uri: str
    chunk_index: int
    heading_path: tuple[str, ...]
    start_char: int
    end_char: int
    page: int | None
    page_end: int | None
    doc_updated_at: str
    ingested_at: str
    language: str
    acl: tuple[str, ...]
    content_hash: str
    embed_model: str
    embed_key: str
    text: str  # what a person or an LLM reads (normalised slice of the source)
    embed_text: str  # what is embedded and keyword-indexed (header included)
    size: int
    title: str
    author: str
    source_version: str  # sha256 of the source bytes
    chunker: str  # chunk config fingerprint
    header_mode: str
    quality: str  # ready | review
    reasons: tuple[str, ...]
    section_id: str  # the enclosing section (parent for expansion); neighbours come from chunk_index
    doc_version: str = ""  # the document's front matter ``version`` (results carry it)
    # Late chunking only: the window whose encoder pass produced the vector ("w3:120-980", "solo:..."),
    # since a late vector depends on text outside the chunk; "" for plain embeddings.
    embed_window: str = ""
    # Which route made the chunk: the strategy that ran (``auto>code`` when auto handed a code file
    # to the code strategy) and the content type it was cut as (``atoms.ROUTES``): "auto:transcript".
    # Not part of the chunk id; records stored before it existed have "" until re-ingested.
    route: str = ""
    # Where the chunk is on its pages, for a citation to highlight: ((page, x0, top, x1, bottom), ...)
    # in points from the page's top left, the boxes of the blocks it overlaps (``enrich.boxes``); PDF
    # only, () elsewhere (and no ``boxes`` key in ``to_dict``). Not part of the chunk id or content hash.
    boxes: tuple[tuple, ...] = ()

    @property
    def index(self) -> int:
        """``chunk_index``, under the name a ``Chunk`` has (records and chunks read alike)."""
        return self.chunk_index

    @property
    def needs_review(self) -> bool:
        """Held for review (``reasons`` say why): stored, never served."""
        return self.quality != READY

    @classmethod
    def from_dict(cls, data: dict) -> "ChunkRecord":
        """The record ``to_dict`` gave (a stored record read back); keys it does not know are ignored."""
        d = {name: data[name] for name in _FIELDS if name in data}
        for name in ("heading_path", "acl", "reasons"):
            d[name] = tuple(d.get(name) or ())
        d["boxes"] = tuple(tuple(b) for b in d.get("boxes") or ())
        return cls(**d)

    def to_dict(self) -> dict:
        # Not dataclasses.asdict: its recursive deep copy was a third of prepare's time.
        d = dict(zip(_FIELDS, _VALUES(self)))
        d["heading_path"] = list(self.heading_path)
        d["acl"] = list(self.acl)
        d["reasons"] = list(self.reasons)
        if self.boxes:
            d["boxes"] = [list(b) for b in self.boxes]
        else:  # no key: a record without boxes (every non-PDF one) is stored byte for byte as before them
            del d["boxes"]
        return d

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False, sort_keys=True)


_FIELDS = tuple(f.name for f in fields(ChunkRecord))
_VALUES = attrgetter(*_FIELDS)  # all fields in one C call (to_dict runs for every record)


def build_records(doc: Document, chunks: Sequence[Chunk], **kw) -> list[ChunkRecord]:
    """Records for one document's chunks, as a list (``iter_records`` says what each holds)."""
    return list(iter_records(doc, chunks, **kw))


def iter_records(
    doc: Document,
    chunks: Sequence[Chunk],
    *,
    chunker: str,
    header_mode: str,
    embed_model: str,
    acl: AccessTags | Sequence[str] = (),
    now: str,
    language: str = "",
    source_uri: str | None = None,
    regions: Sequence[tuple[int, int, AccessTags]] = (),
    access: AccessPlan | None = None,
    strategy: str = "",
) -> Iterator[ChunkRecord]:
    """Records for one document's chunks, one at a time (``strategy``: the one that ran, for ``route``). A chunk
    with no access tags is stored but marked ``review``
    (fail closed: retrieval never serves it), as is a chunk the chunker flagged, and every chunk of a
    document whose access could not be read (``access.problems``: reason ``unreadable_acl``)."""
    meta = doc.metadata or {}
    if access is None:
        access = AccessPlan(AccessTags.parse(acl), tuple(regions))
    updated = str(meta.get("updated_at") or "")
    lang = str(meta.get("language") or language or "")
    identities = ids.iter_chunk_ids(doc.doc_id, (c.text for c in chunks))
    about = describe(doc) if header_mode == "context" else None
    about_tags = (access.default if about is None or about.start < 0 else access.tags_for(about.start, about.end))
    doubtful = {p.number: p.review_reason for p in doc.pages if p.review_reason}  # e.g. low OCR confidence
    title, author = str(meta.get("title") or ""), str(meta.get("author") or "")
    boxes_of = box_finder(doc.blocks) if doc.pages else None
    header_title = title or access.title_text  # what the chunker put in headers: front matter, else the first H1
    source, version = source_uri or doc.source, str(meta.get("version") or "").strip()  # the same for every chunk
    sections: dict[tuple, str] = {}  # (heading path, ordinal) -> section id: one hash per section, not per chunk
    for c, (cid, chash) in zip(chunks, identities):
        chunk_acl = access.tags_for(c.start_char, c.end_char)
        path = access.visible_path(tuple(c.heading_path), c.start_char, c.end_char)
        embed_text = c.embed_text if path == tuple(c.heading_path) else _redact_header(c.embed_text, c.heading_path, path)
        # Front matter is read under the document's tags; a section marked for others never shows it.
        shown = access.readable_at(chunk_acl, None)
        if header_title and not access.readable_at(chunk_acl, None if title else access.title_at):
            embed_text = _drop_title(embed_text, header_title, header_mode)
        if about is not None and not (access.problems or set(chunk_acl.tags) <= set(about_tags.tags)):
            embed_text = drop_about(embed_text, about.text)  # a reader of this chunk may not read it
        reasons = list(c.reasons)
        if c.needs_review and not reasons:
            reasons.append("needs_review")
        if access.problems:
            reasons.append(UNREADABLE)
        elif not chunk_acl:
            reasons.append(access.missing_reason(c.start_char, c.end_char))
        if not c.text or c.text.isspace():  # ``not c.text.strip()`` without copying the text
            reasons.append("empty_text")
        if doubtful and c.page is not None:
            reasons += sorted({doubtful[n] for n in range(c.page, (c.page_end or c.page) + 1) if n in doubtful})
        yield ChunkRecord(
            chunk_id=cid,
            doc_id=doc.doc_id,
            source_uri=source,
            chunk_index=c.index,
            heading_path=path,
            start_char=c.start_char,
            end_char=c.end_char,
            page=c.page,
            page_end=c.page_end,
            doc_updated_at=updated,
            ingested_at=now,
            language=lang,
            acl=chunk_acl.tags,
            content_hash=chash,
            embed_model=embed_model,
            embed_key=ids.embed_key(embed_model, embed_text),
            text=c.text,
            embed_text=embed_text,
            size=c.size,
            title=title if shown else "",
            author=author if shown else "",
            source_version=doc.sha256,
            chunker=chunker,
            header_mode=header_mode,
            quality=REVIEW if reasons else READY,
            reasons=tuple(reasons),
            section_id=sections.get(key := (tuple(c.heading_path), c.section))
            or sections.setdefault(key, ids.section_id(doc.doc_id, *key)),
            route=f"{strategy}:{ROUTES.get(c.kind, c.kind)}" if strategy else "",
            doc_version=version,
            boxes=boxes_of(c.start_char, c.end_char) if boxes_of else (),
        )


def _redact_header(embed_text: str, old: Sequence[str], new: Sequence[str]) -> str:
    """The contextual header with the path ``old`` replaced by ``new`` (headings a reader of the
    chunk may not see removed). The header is the text before the body: at most its first two
    lines (``path``: the joined path; ``full``: "Source: ..." then "Section: <path>"). The header
    only shrinks, so the chunk stays within the cap."""
    joined = " > ".join(old)
    at = embed_text.find(joined + "\n") if joined else -1
    if at < 0 or embed_text.count("\n", 0, at) > 2:  # context mode: Source, About, then Section
        return embed_text  # no path in the header (modes none/title, or shortened to the last heading)
    before = embed_text[:at]
    rest = embed_text[at + len(joined) + 1 :]
    if new:
        return f"{before}{' > '.join(new)}\n{rest}"
    if before.endswith("Section: "):
        before = before[: -len("Section: ")]
    return before + rest if before else rest


def _drop_title(embed_text: str, title: str, mode: str) -> str:
    """``embed_text`` without the document title in its header (mode ``title``: the header is the
    title line; ``full``/``context``: its "Source: <title>" line). The header only shrinks."""
    line = f"{title}\n" if mode == "title" else f"Source: {title}\n" if mode in ("full", "context") else ""
    return embed_text[len(line):] if line and embed_text.startswith(line) else embed_text


def drop_about(embed_text: str, about: str) -> str:
    """``embed_text`` without its "About: <description>" header line (header mode ``context``): the
    header only shrinks, so the chunk stays within the cap."""
    line = f"{ABOUT}{about}\n"
    at = embed_text.find(line)
    if at < 0 or embed_text.count("\n", 0, at) > 1:
        return embed_text
    return embed_text[:at] + embed_text[at + len(line):]
