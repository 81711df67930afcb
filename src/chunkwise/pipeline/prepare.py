"""Stage 1, *prepare*: one source -> its records. Pure apart from reading the file's bytes.

``Preparer(settings)(task)`` extracts, normalises, chunks and enriches one file. It touches no
store and no global state; ``PrepareSettings``, ``PrepareTask``, ``Prepared`` and ``PrepareFailure``
are frozen, picklable values, and a pickled ``Preparer`` carries only its settings (the chunker and
tokenizer are rebuilt on first use in whatever process runs it). So the same call runs in-process,
in a worker process with resource limits, or on a distributed engine.
"""
from __future__ import annotations

from array import array
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Mapping

from chunkwise.config import ChunkConfig
from chunkwise.enrich import ChunkRecord, build_records
from chunkwise.enrich.records import iter_records
from chunkwise.access import AccessTags
from chunkwise.enrich.acl import AccessPlan, plan_access
from chunkwise.enrich.versions import Fingerprint, version_info
from chunkwise.errors import ChunkwiseError
from chunkwise.lexical import LexicalFields
from chunkwise.pipeline.chunk import chunk_document, for_document, make_chunker
from chunkwise.pipeline.documents import SourceFailure, extract_options, read_source
from chunkwise.types import Chunk, Document


EMBED_BATCH = 256  # texts a cheap embedder embeds at a time where a document is prepared


@dataclass(frozen=True)
class PrepareSettings:
    """Everything besides the source that decides a document's records; the same for a whole run.
    ``late``: the late-chunking planner (tokenizer side of ``embed.late.LateEncoder``) or None.
    ``embedder``: an embedder ``cheap`` enough to run where the records are made (hashing), or
    None; with one, each prepared document carries the vectors of its embed keys."""

    config: ChunkConfig
    embed_model: str  # hashed into every embed_key ("none" without an embedder)
    acl: AccessTags = AccessTags()
    acl_map: Mapping[str, AccessTags] = field(default_factory=dict)
    now: str = ""
    late: object | None = None
    embedder: object | None = None
    # Analyse each record's lexical fields where it is made (``Prepared.lexical``): ingest's single
    # writer wants them; the doors that only show records (``chunkwise chunk``, the splitters) do not,
    # and the analysis (stemming every word) cost them a third of their time.
    lexical: bool = True


@dataclass(frozen=True)
class PrepareTask:
    """One source file to prepare. ``path``: absolute; ``rel``: its path under the root (the
    document's identity there); ``doc_id``: the id it gets unless its front matter names one."""

    path: str
    rel: str
    doc_id: str
    media_type: str
    sha256: str
    size: int = 0


@dataclass(frozen=True)
class Prepared:
    """A prepared document: its catalogue fields and records (``ChunkRecord.to_dict()`` each).
    ``late_plan``: the late-chunking window plan whose picks give the records' vectors."""

    task: PrepareTask
    doc_id: str
    source_uri: str
    title: str
    author: str
    updated_at: str
    records: tuple[dict, ...]
    late_plan: object | None = None
    problems: tuple[str, ...] = ()  # reported per file; the document is stored in review (fail closed)
    versioning: str = ""  # enrich.versions.VersionInfo as JSON (the documents row's)
    # embed_key -> vector (float32 array: a quarter of a pickled list of floats) when the settings
    # have a cheap embedder; the embed stage takes the ones the store lacks from here.
    vectors: Mapping[str, array] = field(default_factory=dict)
    warnings: tuple[str, ...] = ()  # the extraction's (parser warnings, damage): in the run's output
    # chunk_id -> its analysed lexical fields (body, title, heading), made where the document was
    # prepared (a worker) so the single writer does not analyse every chunk again.
    lexical: Mapping[str, tuple[str, str, str]] = field(default_factory=dict)


@dataclass(frozen=True)
class PrepareFailure:
    """A source that produced no records, and why (``skipped``: reported, not an error)."""

    task: PrepareTask
    error: str
    skipped: bool = False


class Preparer:
    """``Preparer(settings)(task) -> Prepared | PrepareFailure``; never raises for a bad file."""

    def __init__(self, settings: PrepareSettings, chunker=None, split: int = 1) -> None:
        """``chunker``: one already built from ``settings.config`` (saves rebuilding it here).
        ``split``: the workers a big PDF's pages may be shared among (``pipeline.split``; the
        executor must run ``sandbox.Fanout`` answers: the contained pool does)."""
        self.settings = settings
        self._chunker = chunker
        self.split = split
        self._per_run: tuple[str, object] | None = None

    def __getstate__(self) -> dict:
        return {"settings": self.settings, "_chunker": None, "split": self.split}  # rebuilt where it runs

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update({"split": 1, "_per_run": None, **state})

    def per_run(self) -> tuple[str, object]:
        """(the config's fingerprint, the extraction options): the same for every file of a run, made
        once (the fingerprint, an ``asdict`` and a JSON hash, cost a small file's worker ~0.1 ms)."""
        if getattr(self, "_per_run", None) is None:
            self._per_run = (self.settings.config.fingerprint(), extract_options(self.settings.config))
        return self._per_run

    def warm_up(self) -> None:
        """Build the chunker (tokenizer included) before the first file: a worker process calls
        this once, so loading it counts against no file's time or memory limit. The stemmer of the
        lexical fields too (a native library: loaded under a small absolute limit it fails)."""
        self.chunker
        if self.settings.lexical:
            LexicalFields.of("warm up")

    @property
    def chunker(self):
        if self._chunker is None:
            self._chunker = make_chunker(self.settings.config)
        return self._chunker

    def __call__(self, task: PrepareTask | PrepareFailure, packed=False, codec=None) -> Prepared | PrepareFailure:
        """``packed``: records, lexical fields and vectors come back as packs written one record at
        a time (``pipeline.pack``), as a worker sends them; else as tuples and dicts. ``packed`` a
        function: the records' pack holds what it makes of each ``ChunkRecord`` instead of its
        ``to_dict()`` (``chunk --json`` packs its output lines: ``cli.record_lines``). ``codec``
        (with ``packed`` True): the records come back as that store's rows (``EncodedRecords``,
        their lexical fields inside), unless the codec refuses one: then as records."""
        from chunkwise.sources import SourceFile

        from chunkwise.pipeline.split import PdfPages, plan, scan
        from chunkwise.sandbox import Join

        if isinstance(task, PrepareFailure):  # found while walking: passes through in order
            return task
        if isinstance(task, PdfPages):  # a page range of a big PDF (pipeline/split.py)
            return scan(task)
        if isinstance(task, Join):  # its page ranges are scanned: the Document, then as below
            task, doc = task.item, joined_document(task, self.per_run()[1])
        elif (fanout := plan(task, self.split)) is not None:
            return fanout
        else:
            src = SourceFile(Path(task.path), task.rel, task.media_type, task.size, task.sha256)
            doc = read_source(src, self.per_run()[1])
        if isinstance(doc, SourceFailure):
            return PrepareFailure(task, doc.error, doc.skipped)
        if doc.doc_id == doc.source:  # no front matter id: the id the store assigned to this path
            doc = replace(doc, doc_id=task.doc_id)
        try:
            return self.prepare_document(task, doc, packed, codec)
        except ChunkwiseError as exc:
            return PrepareFailure(task, str(exc))

    def records(self, doc: Document, lazy: bool = False) -> tuple[list[ChunkRecord], AccessPlan, list[Chunk]]:
        """One extracted Document's records (with the access plan and chunks they came from): the
        one place records are made, for ``ingest`` and for every door (``pipeline/doors.py``).
        ``lazy``: the records as an iterator, made as they are read (not with an LLM context)."""
        s = self.settings
        access = plan_access(doc, s.acl, s.acl_map)
        chunker = for_document(self.chunker, doc)
        chunks = chunk_document(doc, chunker, boundaries=access.boundaries)
        ran = chunker.name if chunker.name == s.config.strategy else f"{s.config.strategy}>{chunker.name}"
        make = iter_records if lazy and not s.config.context_llm else build_records
        records = make(doc, chunks, chunker=self.per_run()[0], header_mode=s.config.header,
                       embed_model=s.embed_model, now=s.now, access=access, strategy=ran)
        if s.config.context_llm:  # the model reads only what every reader of each chunk may read
            from chunkwise.enrich.llm_context import ContextModel, add_context

            records = add_context(records, ContextModel.parse(s.config.context_llm), chunker.sizer, s.config.size)
        return records, access, chunks

    def prepare_document(self, task: PrepareTask, doc: Document, packed=False, codec=None) -> Prepared:
        s = self.settings
        # Packed (a worker's answer), the records are made, packed and fingerprinted one at a time.
        records, access, chunks = self.records(doc, lazy=bool(packed) and s.late is None)
        plan = None
        if s.late is not None:
            records, plan = _late_records(doc, chunks, records, access.regions, s.late)
        del chunks
        meta = doc.metadata or {}
        embedder = s.embedder if plan is None else None
        if packed:
            fingerprint = Fingerprint()
            encode = packed if callable(packed) else None
            try:
                dicts, lexical, vectors = _packed(records, embedder, s.lexical, fingerprint.add, encode,
                                                  codec if encode is None else None)
            except _Refused:  # a record the store's codec refuses (a bad tag): the document as records
                return self.prepare_document(task, doc, packed)
            versioning = fingerprint.info(meta)
        else:
            vectors = _vectors(records, embedder)
            dicts = tuple(r.to_dict() for r in records)
            lexical = {d["chunk_id"]: LexicalFields.of_record(d).values() for d in dicts} if s.lexical else {}
            versioning = version_info(meta, records)
        return Prepared(task, doc.doc_id, doc.source, doc.title, str(meta.get("author") or ""),
                        str(meta.get("updated_at") or ""), dicts, plan,
                        access.reported, versioning.to_json(), vectors, doc.warnings, lexical)


def _embedded(embedder, records):
    """``(embed_key, float32 vector)`` for each distinct key in record order, ``EMBED_BATCH`` texts
    at a time (a whole big document's vectors as lists of floats took gigabytes)."""
    keys: list[str] = []
    texts: list[str] = []
    seen: set[str] = set()
    for r in records:
        if r.embed_key not in seen:
            seen.add(r.embed_key)
            keys.append(r.embed_key)
            texts.append(r.embed_text)
        if len(keys) == EMBED_BATCH:
            yield from zip(keys, _float32(embedder, texts))
            keys, texts = [], []
    if keys:
        yield from zip(keys, _float32(embedder, texts))


def _float32(embedder, texts: list[str]) -> list[array]:
    """The float32 vectors of ``texts`` (``embed_float32`` where the embedder has it: hashing)."""
    direct = getattr(embedder, "embed_float32", None)
    return direct(texts) if direct is not None else [array("f", v) for v in embedder.embed(texts)]


def _vectors(records, embedder) -> dict:
    if embedder is None:
        return {}
    try:
        return dict(_embedded(embedder, records))
    except Exception:  # noqa: BLE001 — not this file's error: the embed stage runs the embedder
        return {}  # again for the keys it lacks, and its error is the run's, as without workers


class _Refused(Exception):
    """The store's codec refused a record (``_packed``): not this file's error, so not a
    ``ChunkwiseError``; the document is packed again as records and the writer fails it."""


def _packed(records, embedder, lexical: bool, seen_record, encode=None, codec=None):
    """The records, their lexical fields and vectors written into packs one record at a time, in
    one pass (``pipeline.pack.PackWriter``), each record also handed to ``seen_record``: the
    records, dicts, fields and vectors of a big document never exist all at once (issue 25, item 9:
    they were most of a worker's 3.4 GB on a 60 MB-text DOCX). The same values, in the same order,
    as ``_vectors`` and the dicts of the unpacked path (vectors ``EMBED_BATCH`` keys at a time).
    ``encode``: what the records' pack holds of each record instead of its dict. ``codec``: the
    records as the store's rows instead (``EncodedRecords``; lexical fields inside them, so none
    apart), made from each dict as it is made: packing the dicts and fields first, then reading
    them back to make the rows, was ~5% of a small file's worker time (raises ``_Refused``)."""
    from chunkwise.pipeline.pack import EncodedRecords, KeyedPack, RecordPack

    out, lex, vec = RecordPack.writer(), RecordPack.writer(), RecordPack.writer()
    lex_keys: list[str] = []
    vec_keys: list[str] = []
    row_keys: list[str] = []
    seen: set[str] = set()
    batch: list[tuple[str, str]] = []

    def embed() -> None:
        nonlocal embedder
        try:
            for (key, _), v in zip(batch, _float32(embedder, [t for _, t in batch])):
                vec_keys.append(key)
                vec.add(v)
        except Exception:  # noqa: BLE001 — as in ``_vectors``: the embed stage embeds them again
            vec.discard()
            vec_keys.clear()
            embedder = None
        batch.clear()

    try:
        for r in records:
            seen_record(r)
            d = r.to_dict() if encode is None or lexical else None
            if codec is not None:
                try:
                    out.add(codec.encode(d, LexicalFields.of_record(d).values() if lexical else None))
                except ChunkwiseError as exc:
                    raise _Refused() from exc
                lex_keys.append(d["chunk_id"])
                row_keys.append(d["embed_key"])
            else:
                out.add(d if encode is None else encode(r))
            if lexical and codec is None:
                lex_keys.append(d["chunk_id"])
                lex.add(LexicalFields.of_record(d).values())
            if embedder is not None and r.embed_key not in seen:
                seen.add(r.embed_key)
                batch.append((r.embed_key, r.embed_text))
                if len(batch) == EMBED_BATCH:
                    embed()
        if embedder is not None and batch:
            embed()
        vectors = KeyedPack(tuple(vec_keys), vec.done())
        if codec is not None:
            return EncodedRecords(out.done(), codec, tuple(lex_keys), tuple(row_keys)), {}, vectors
        return out.done(), KeyedPack(tuple(lex_keys), lex.done()), vectors
    except BaseException:
        for w in (out, lex, vec):
            w.discard()
        raise


def joined_document(join, options) -> Document | SourceFailure:
    """A split PDF's Document from its scans, or why not (as ``read_source`` says it)."""
    from chunkwise.errors import DependencyError, InputError
    from chunkwise.pipeline.split import join as join_scans

    try:
        return join_scans(join.item, join.results, options)
    except (InputError, DependencyError) as exc:
        return SourceFailure(join.item.rel, str(exc))
    except OSError as exc:
        return SourceFailure(join.item.rel, f"{join.item.rel}: cannot read ({exc.strerror or exc})")


def _late_records(doc, chunks, records, regions, late):
    """Records keyed by their late-chunking windows, and the plan that computes their vectors.
    Front matter is a segment of its own: never context for a chunk."""
    from chunkwise.embed.late import plan_late

    if doc.body_start:
        regions = [(0, doc.body_start, "front matter"), *regions]
    plan = plan_late(doc.text, [(c.start_char, c.end_char) for c in chunks], model=late, regions=regions)
    keyed = [replace(r, embed_key=p.key, embed_window=plan.label(i))
             for i, (r, p) in enumerate(zip(records, plan.picks))]
    return keyed, plan
