"""Source code and config files -> Document: the decoded file is the original text (as for Markdown),
``metadata["language"]`` names the grammar the ``code`` strategy uses (from the suffix, the file name
or a ``#!`` line; a ``.h`` header written in C++ is C++) and ``metadata["title"]`` is the file name,
which a ``title`` header embeds."""
from __future__ import annotations

import re
from pathlib import PurePosixPath

from chunkwise import ids
from chunkwise.errors import InputError
from chunkwise.extract.text import decode
from chunkwise.sources.sniff import CODE, code_language
from chunkwise.types import Document


# What C cannot say at the start of a line: a class, a namespace, a template, an access label.
_CPP_HEADER = re.compile(r"^[ \t]*(?:class[ \t]+\w+[^;(]*\{|namespace\b[^;(]*(?:\{|$)|template[ \t]*<"
                         r"|(?:public|private|protected)[ \t]*:)", re.M)


def header_language(language: str, source: str, text: str) -> str:
    """``cpp`` for a ``.h`` file whose text only C++ can parse; ``language`` otherwise."""
    if language == "c" and source.lower().endswith(".h") and _CPP_HEADER.search(text):
        return "cpp"
    return language


def extract(data: bytes, source: str, media_type: str = CODE) -> Document:
    """Decode one code/config file (strict UTF-8, see ``extract.text.decode``)."""
    text, warnings = decode(data, source)
    if not text.strip():
        raise InputError(f"{source} is empty; skipped")
    language = header_language(code_language(source, text[:256]) or "text", source, text)
    return Document(
        doc_id=source, source=source, media_type=CODE, text=text,
        metadata={"language": language, "title": PurePosixPath(source).name},
        sha256=ids.bytes_sha256(data), warnings=tuple(warnings),
    )
