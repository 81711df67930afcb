"""Where documents come from: files, folders and globs, with media types checked against content,
sha256 fingerprints, stable doc ids, and per-file errors instead of aborted runs."""
from chunkwise.sources.sniff import CODE, DOCX, HTML, MARKDOWN, PDF, PLAIN, SUFFIXES, check_head, media_type_for
from chunkwise.sources.walk import SourceError, SourceFile, inspect_file, iter_sources

__all__ = [
    "CODE",
    "DOCX",
    "HTML",
    "MARKDOWN",
    "PDF",
    "PLAIN",
    "SUFFIXES",
    "SourceError",
    "SourceFile",
    "check_head",
    "inspect_file",
    "iter_sources",
    "media_type_for",
]
