"""Parallelism inside one file: a big PDF's page ranges scanned in separate workers, then joined.

Why: one file can be most of a corpus's work (in ``../shared/data`` one 600-page PDF is 56.5 of the
89.2 CPU seconds of the 159 PDF, DOCX and HTML files), so no order of whole files lets two workers
beat ~1.6x one. A PDF's first pass (each page's lines, rules and tables: ``extract.pdf.scan``) is
nearly all of its cost and no page's result depends on another's, so the worker that meets a big
PDF answers with a ``sandbox.Fanout``: page ranges, each scanned by whichever worker is free, then a
join (``extract.pdf.assemble``: OCR, the table bounds, headings, the text) and the rest of
*prepare* in one worker. The Document is exactly the one a single pass gives (blocks, headings,
tables, warnings), so the chunks and the store are the same for any number of workers.

Every part reads the file again and checks its sha256 against the walk's: a file changed while
its parts were read fails (it would otherwise mix two versions), like any other bad file.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from chunkwise.errors import InputError
from chunkwise.sources.sniff import PDF

MIN_BYTES = 64 * 1024  # smaller PDFs take well under a second: not worth opening twice
MIN_PAGES_PER_PART = 16  # each part opens the file and walks its page tree again
# More parts than workers: the last ones even out what the workers had queued. Not more: on the
# office files of ../shared/data 8 ranges (4 a worker) shortened DA-619p.pdf's critical path (46.7 ->
# 38.3 s) but it was not binding (half the corpus's CPU is ~54 s), while each range costs CPU (fonts
# parsed again): the list schedule fell from 1.66x to 1.52x (docs/_figures/s4-split.md).
PARTS_PER_WORKER = 2


@dataclass(frozen=True)
class PdfPages:
    """Pages ``first`` to ``last - 1`` (0-based) of the PDF of ``task``, to scan."""

    task: object  # pipeline.prepare.PrepareTask
    first: int
    last: int


def plan(task, workers: int):
    """A ``sandbox.Fanout`` of ``task``'s page ranges when it is a PDF worth splitting for
    ``workers`` workers, else None (also for a file that cannot be opened: the normal path says why)."""
    from chunkwise.sandbox import Fanout

    if workers < 2 or task.media_type != PDF or task.size < MIN_BYTES:
        return None
    try:
        from chunkwise.extract.pdf import page_count

        pages = page_count(read(task), task.rel)
    except Exception:  # noqa: BLE001 — any failure here is the normal path's to report
        return None
    parts = min(workers * PARTS_PER_WORKER, pages // MIN_PAGES_PER_PART)
    if parts < 2:
        return None
    bounds = [pages * i // parts for i in range(parts + 1)]
    return Fanout(tuple(PdfPages(task, a, b) for a, b in zip(bounds, bounds[1:])), task)


def read(task) -> bytes:
    """The file's bytes, refused when they are no longer the ones the walk hashed."""
    data = Path(task.path).read_bytes()
    if task.sha256 and hashlib.sha256(data).hexdigest() != task.sha256:
        raise InputError(f"{task.rel}: the file changed while it was being read; ingest it again")
    return data


def scan(part: PdfPages):
    from chunkwise.extract.pdf import scan as scan_pages

    return scan_pages(read(part.task), part.task.rel, part.first, part.last)


def join(task, scans, options):
    """The Document of ``task`` from its scans (as ``documents.read_source`` gives it)."""
    from dataclasses import replace

    from chunkwise.extract.pdf import extract_scans

    return replace(extract_scans(read(task), task.rel, list(scans), options), sha256=task.sha256)
