"""Source code and config files -> Document: the decoded file is the original text (as for Markdown),
``metadata["language"]`` names the grammar the ``code`` strategy uses (from the suffix, the file name
or a ``#!`` line) and ``metadata["title"]`` is the file name, which a ``title`` header embeds."""
from __future__ import annotations

from pathlib import PurePosixPath

from chunkwise import ids
from chunkwise.errors import InputError
from chunkwise.extract.text import decode
from chunkwise.sources.sniff import CODE, code_language
from chunkwise.types import Document


def extract(data: bytes, source: str, media_type: str = CODE) -> Document:
    """Decode one code/config file (strict UTF-8, see ``extract.text.decode``)."""
    text, warnings = decode(data, source)
    if not text.strip():
        raise InputError(f"{source} is empty; skipped")
    language = code_language(source, text[:256]) or "text"
    return Document(
        doc_id=source, source=source, media_type=CODE, text=text,
        metadata={"language": language, "title": PurePosixPath(source).name},
        sha256=ids.bytes_sha256(data), warnings=tuple(warnings),
    )
