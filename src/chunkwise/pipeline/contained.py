"""Every file a command reads is parsed in a contained worker, never in the calling process.

Why (issue 25, item 9): a file is untrusted input, and its parser is native code that can crash,
hang or take gigabytes (a 26 MB DOCX drove the process that parsed it to 4 GB). ``ingest`` prepares
in contained workers (``pipeline.executors.contained``); this module gives the other doors the same
containment: ``chunkwise chunk``, ``chunk_file`` and the splitters' ``split_file`` (``doors``),
``chunkwise audit`` and ``api.audit``, ``chunkwise extract`` and ``load_document``, and the
evaluation's documents and audit. Each runs its per-file function in one worker process (also when
one is all there is) under :data:`DOOR_LIMITS`, the same absolute defaults as ingest's, and gets back
only that function's result: an audit row, a prepared document's records, an extracted document.
A file that crashes, panics, hangs or runs out of memory becomes that file's failure; the rest
are unaffected. Text a caller hands over as a string (``chunk_text``, ``page_records``) is the
caller's own data and is still read in the calling process.
"""
from __future__ import annotations

from typing import Any, Callable, Iterable, Iterator

from chunkwise.sandbox import Failure, Limits, run

DOOR_LIMITS = Limits()  # absolute: the worker's whole address space (2,048 MB) and 300 s per file


def contained_map(fn: Callable[[Any], Any], items: Iterable[Any], on_failure: Callable[[Any, Failure], Any],
                  limits: Limits | None = None) -> Iterator[Any]:
    """``fn(item)`` for each item, in input order, each run in one contained worker process (items
    drawn lazily); a failed item yields ``on_failure(item, failure)`` in its place. No process
    starts when ``items`` is empty. ``fn`` and the items must pickle; ``fn`` passes through the
    items it has nothing to do for (a walk error, a file the caller already holds)."""
    # The worker is forked where that is safe (``sandbox.processes.fork_safe``): it inherits what
    # this process loaded (the chunker and its tokenizer) instead of importing and loading it again.
    for out in run(fn, items, workers=1, limits=limits or DOOR_LIMITS, isolate=True, fork_first=True):
        yield out.value if out.ok else on_failure(out.item, out.failure)


def source_name(src) -> str:
    """The name a file is reported under (its id under the root, else its path)."""
    return getattr(src, "doc_id", "") or str(getattr(src, "path", src))
