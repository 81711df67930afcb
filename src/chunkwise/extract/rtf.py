"""RTF -> Document with striprtf (a small pure-Python reader: control words dropped, ``\\'hh`` and
``\\u`` escapes decoded in the document's code page, table cells separated by ``|``). The text it
yields is the original every offset points into; headings, lists and paragraphs come from
``textstruct`` as for plain text. Embedded pictures and objects carry no text here.
"""
from __future__ import annotations

import re

from chunkwise import ids
from chunkwise.errors import DependencyError, InputError
from chunkwise.extract import textstruct
from chunkwise.types import Document

MEDIA_TYPE = "application/rtf"
_CODEPAGE = re.compile(rb"\\ansicpg(\d{3,5})")


def extract(data: bytes, source: str) -> Document:
    try:
        from striprtf.striprtf import rtf_to_text
    except ImportError as exc:
        raise DependencyError("RTF extraction needs striprtf: pip install 'chunkwise[office]'") from exc
    if not data.lstrip()[:5] == b"{\\rtf":
        raise InputError(f"{source}: not an RTF document (no {{\\rtf header)")
    m = _CODEPAGE.search(data[:2048])
    encoding = f"cp{m.group(1).decode()}" if m else "cp1252"
    try:
        "".encode(encoding)
    except LookupError:
        encoding = "cp1252"
    try:
        text = rtf_to_text(data.decode("latin-1"), encoding=encoding, errors="replace")
    except (ValueError, IndexError, RecursionError) as exc:
        raise InputError(f"{source}: not a readable RTF document ({type(exc).__name__}: {exc})") from None
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    warnings = [] if text.strip() else ["document has no text"]
    return Document(doc_id=source, source=source, media_type=MEDIA_TYPE, text=text,
                    blocks=tuple(textstruct.blocks(text)), sha256=ids.bytes_sha256(data), warnings=tuple(warnings))
