"""``chunkwise audit`` and ``api.audit``: each file's extraction audit row, on ingest's worker pool.

Why: the audit reports the damage of what ingest extracts, so it runs the very same extraction
(tables, layout, running headers), and that is the cost of an ingest's first half. It is shared as
ingest shares it: one contained worker per CPU (``sandbox.default_workers``), files handed out
largest first (``schedule``), a big PDF's page ranges scanned by whichever worker is free and
joined into the Document one pass gives (``split``). Rows still come out in walk order.
"""
from __future__ import annotations

from collections import deque
from typing import Iterable, Iterator, NamedTuple


class AuditSource:
    """``sources.SourceFile`` -> its extraction ``AuditRow``, in the worker (the document stays
    there: only the row's counts come back); a ``SourceError`` -> its failure row. ``split``: the
    workers a big PDF's page ranges may be shared among (a ``sandbox.Fanout``, its ``split.PdfPages``
    parts and its ``Join`` come back here)."""

    def __init__(self, split: int = 1) -> None:
        self.split = split

    def __call__(self, src):
        from chunkwise.extract.audit import audit_document, audit_failure
        from chunkwise.pipeline.documents import SourceFailure, read_source
        from chunkwise.pipeline.prepare import joined_document
        from chunkwise.pipeline.split import PdfPages, scan
        from chunkwise.sandbox import Join
        from chunkwise.sources import SourceFile

        if isinstance(src, PdfPages):
            return scan(src)
        if isinstance(src, Join):
            doc = joined_document(src, None)
        elif not isinstance(src, SourceFile):
            return audit_failure(src.doc_id or str(src.path), src.error, src.skipped)
        elif (fanout := _plan(src, self.split)) is not None:
            return fanout
        else:
            doc = read_source(src)
        if isinstance(doc, SourceFailure):
            return audit_failure(doc.source, doc.error, doc.skipped)
        return audit_document(doc)


def _plan(src, workers: int):
    """``split.plan`` for a walked file. Opening it to count its pages is not heard: the read of
    its pages opens it again and hears (and reports) the same parser messages."""
    from chunkwise.extract.capture import captured_parts
    from chunkwise.pipeline.prepare import PrepareTask
    from chunkwise.pipeline.split import plan

    with captured_parts():
        return plan(PrepareTask(str(src.path), src.doc_id, src.doc_id, src.media_type, src.sha256, src.size), workers)


class _Walked(NamedTuple):
    index: int
    task: object  # a SourceFile or SourceError (``schedule`` reads its ``size``)


def _small(item) -> bool:
    """A file cheap enough to share a worker message with others (``executors.small_file``)."""
    from chunkwise.pipeline.executors import BUNDLE_BYTES
    from chunkwise.sources import SourceFile
    from chunkwise.sources.sniff import PDF

    return not isinstance(item, SourceFile) or (0 < item.size <= BUNDLE_BYTES and item.media_type != PDF)


def audit_sources(sources: Iterable, limits=None, workers: int | None = None) -> Iterator:
    """``AuditRow`` per source, in the sources' order, each audited in a contained worker
    (``workers``: default one per CPU); a file whose worker failed is an error row saying why
    (``over the 2048 MB memory limit``, ``worker crashed``, ...)."""
    from chunkwise.extract.audit import audit_failure
    from chunkwise.pipeline.contained import DOOR_LIMITS, source_name
    from chunkwise.pipeline.executors import BUNDLE_FILES, WINDOW_PER_WORKER
    from chunkwise.pipeline.schedule import largest_first
    from chunkwise.sandbox import default_workers, run

    workers = workers or default_workers()
    order: deque[int] = deque()  # the walk index of each file handed out, in the order handed out
    walked = (_Walked(i, src) for i, src in enumerate(sources))

    def handed_out():
        for w in largest_first(walked):
            order.append(w.index)
            yield w.task

    held: dict[int, object] = {}
    nxt = 0
    for out in run(AuditSource(workers), handed_out(), workers=workers, limits=limits or DOOR_LIMITS,
                   window=WINDOW_PER_WORKER * workers, isolate=True, fork_first=True, bundle=(_small, BUNDLE_FILES)):
        held[order.popleft()] = out.value if out.ok else audit_failure(source_name(out.item), out.failure.reason)
        while nxt in held:  # back in walk order (largest_first reorders within a bounded look-ahead)
            yield held.pop(nxt)
            nxt += 1
