"""What the commands read: ``--include``/``--exclude`` globs, and ``chunkwise extract FILE``, the
extracted text that every chunk's ``start_char``/``end_char`` index, as it is before normalisation
(``api.load_document``), so an offset can be checked by hand."""
from __future__ import annotations

import argparse
import os
from bisect import bisect_left
import re
import sys

from chunkwise import api
from chunkwise.cli.output import emit_json

# C0 and C1 controls (ESC, BEL, CSI, ...) other than tab and line feed, DEL, and bidi overrides: the
# ways a document can clear a terminal, retitle it or reorder what a reader sees.
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def terminal_safe(text: str) -> str:
    """Controls shown as ``\\xNN`` / ``\\uNNNN`` escapes, so document text cannot drive the terminal."""
    return _UNSAFE.sub(lambda m: f"\\x{ord(m.group()):02x}" if ord(m.group()) < 0x100 else f"\\u{ord(m.group()):04x}",
                       text)


def _page_at(doc, starts: list[int], at: int) -> int | None:
    """The number of the page holding offset ``at`` (pages in order): a binary search, as a PPTX's
    blocks carry no page and a deck may have thousands of slides."""
    i = bisect_left(starts, at)  # the first page starting at or after ``at``
    if i and doc.pages[i - 1].start <= at < doc.pages[i - 1].end:
        return doc.pages[i - 1].number
    return doc.pages[i].number if i < len(starts) and starts[i] == at else None


def _block(doc, b, starts: list[int]) -> dict:
    """One block as ``extract --json`` shows it: its span, kind and heading level; the page it starts
    on (a paged source: PDF, slides); where it is on its pages (PDF: ``boxes``, [page, x0, top, x1,
    bottom] in points from the page's top left); a table's cells, header row first."""
    out = {"kind": b.kind, "start": b.start, "end": b.end, "level": b.level, "text": b.text}
    if "role" in b.meta:
        out["role"] = b.meta["role"]
    page = b.meta.get("page")
    if page is None and doc.pages:
        page = _page_at(doc, starts, b.start)
    if page is not None:
        out["page"] = page
    if b.meta.get("boxes"):
        out["boxes"] = [list(x) for x in b.meta["boxes"]]
    if b.kind == "table":
        out["cells"] = api.table_cells(doc.text, b)
    return out


def existing(paths) -> None:
    """A PATH that names nothing (and is no glob) is a usage error, exit 2, as in ``ingest``: a typo
    is not one failed file."""
    for raw in paths:
        if not os.path.lexists(raw) and not _GLOB.intersection(raw):
            raise api.ConfigError(f"{raw}: no such file or folder")


_GLOB = frozenset("*?[")


def cmd_extract(args: argparse.Namespace) -> int:
    existing([args.path])
    doc = api.load_document(args.path, api.ExtractOptions(docx_comments=args.docx_comments))
    if args.json:
        starts = [p.start for p in doc.pages]
        emit_json({
            "source": doc.source, "doc_id": doc.doc_id, "media_type": doc.media_type, "sha256": doc.sha256,
            "chars": len(doc.text), "body_start": doc.body_start, "metadata": doc.metadata,
            "warnings": list(doc.warnings), "text": doc.text,
            "blocks": [_block(doc, b, starts) for b in doc.blocks],
            "pages": [{"number": p.number, "start": p.start, "end": p.end, "needs_ocr": p.needs_ocr}
                      for p in doc.pages],
        })
        return 0
    out = sys.stdout
    out.write(terminal_safe(doc.text))
    if doc.text and not doc.text.endswith("\n"):
        out.write("\n")
    for w in doc.warnings:
        print(f"warning: {terminal_safe(doc.source)}: {terminal_safe(w)}", file=sys.stderr)
    return 0


def add_path_filters(p: argparse.ArgumentParser) -> None:
    """``--include``/``--exclude`` for every command that reads folders (globs; see sources.globs)."""
    p.add_argument("--include", action="append", default=[], metavar="GLOB",
                   help="only files whose path under the root matches (repeatable; '*.md', 'docs/**')")
    p.add_argument("--exclude", action="append", default=[], metavar="GLOB",
                   help="leave out matching files and folders (repeatable; 'node_modules', '**/drafts/**')")


def add_docx_comments(p: argparse.ArgumentParser, default: bool | None = False) -> None:
    p.add_argument("--docx-comments", action="store_true", default=default,
                   help="include DOCX reviewers' comments (after the paragraph they annotate); part of the "
                        "chunk config, so a store records it")


def add_extract_parser(sub) -> None:
    p = sub.add_parser("extract", help="print the extracted text that chunk offsets point into")
    p.add_argument("path", metavar="FILE", help="one file of a type chunkwise reads (PDF, DOCX, HTML, Markdown, text, PPTX, XLSX, ODS, "
                                           "CSV, TSV, EML, MSG, EPUB, RTF, ODT, reStructuredText, Org, code)")
    add_docx_comments(p)
    p.add_argument("--json", action="store_true",
                   help="one JSON document: text, blocks (kind, span, heading level, page, boxes, table cells), pages, "
                        "metadata and warnings (offsets index text)")
    p.set_defaults(func=cmd_extract)
