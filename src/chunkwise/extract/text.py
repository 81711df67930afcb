"""Markdown and plain text -> Document. The decoded file *is* the original text every offset points into.

Decoding: UTF-8; UTF-8 with a BOM (the BOM is dropped and a warning says so: offsets then index the
decoded text *without* it, i.e. byte offset 3 of the file is character 0); UTF-16 and UTF-32 with a BOM;
UTF-16 without one, recognised by its zero bytes (``sources.sniff.bomless_utf16``), with a warning.
Invalid bytes raise ``InputError`` naming the byte offset and line, rather than decoding lossily: a
silently replaced character makes a chunk that can never be matched exactly, and re-saving the file as
UTF-8 is a one-minute fix. Markdown has no blocks: the chunker parses Markdown itself. Plain text,
reStructuredText and Org get heading, list and paragraph blocks from ``textstruct`` (plain text only
when it has a heading: prose without one is chunked by paragraphs as before).

Markdown front matter (``---`` ... ``---`` or ``...`` at the very top) is read with PyYAML's
``BaseLoader``, as safe as ``safe_load`` but keeping every scalar as written: ``safe_load`` would turn
``id: 0012`` into 10 (octal), ``version: 1.10`` into 1.1 and ``title: yes`` into True. ``acl`` becomes
an ``AccessTags``; ``supersedes`` (a path or document id, or a list of them) a tuple of names
(see enrich/versions.py); when the block or its ``acl`` cannot be read, ``metadata["acl_error"]`` says why
and the document is stored for review (never under a default tag).
"""
from __future__ import annotations

import codecs
import re

from chunkwise import ids
from chunkwise.errors import ConfigError, InputError
from chunkwise.sources.sniff import HEAD_BYTES, bomless_utf16
from chunkwise.types import Document

MEDIA_TYPES = ("text/plain", "text/markdown", "text/x-rst", "text/x-org")
_FLAVOURS = {"text/x-rst": "rst", "text/x-org": "org"}
_KEEP = ("title", "id", "acl", "updated_at", "language", "version", "author")
_LF = b"\n"
_NULLS = frozenset({"", "~", "null", "Null", "NULL"})
_BLANK = " \t\n\r\f\v\x85\u00a0\u2028\u2029\u200b\u200c\u200d\u2060\ufeff"
_OPEN_RE = re.compile(r"(-{3,})[ \t]*(?:\r\n|\r|\n)")
_LINE_RE = re.compile(r"([^\r\n]*)(\r\n|\r|\n|$)")
# (BOM, codec, label): UTF-32 first, its little-endian BOM begins with UTF-16's.
_BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32-le", "UTF-32"),
    (codecs.BOM_UTF32_BE, "utf-32-be", "UTF-32"),
    (codecs.BOM_UTF8, "utf-8", "UTF-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le", "UTF-16"),
    (codecs.BOM_UTF16_BE, "utf-16-be", "UTF-16"),
)


def extract(data: bytes, source: str, media_type: str) -> Document:
    """Decode one Markdown or text file. Raises ``InputError`` for undecodable bytes and for an empty
    file ("... is empty; skipped"), never a UnicodeDecodeError."""
    if media_type not in MEDIA_TYPES:
        raise ConfigError(f"extract.text reads {' and '.join(MEDIA_TYPES)}, not {media_type}; use extract_bytes()")
    text, warnings = decode(data, source)
    metadata: dict = {}
    body_start = 0
    if media_type == "text/markdown":
        metadata, body_start, fm_warnings = front_matter(text, source)
        warnings += fm_warnings
    if not text[body_start:].strip(_BLANK):
        what = "empty after its front matter" if body_start else "empty"
        raise InputError(f"{source} is {what}; skipped")
    blocks = ()
    if media_type != "text/markdown":
        from chunkwise.extract import textstruct

        flavour = _FLAVOURS.get(media_type, "text")
        found = textstruct.blocks(text, flavour)
        if flavour != "text" or any(b.kind == "heading" for b in found):
            blocks = tuple(found)
        title = textstruct.org_title(text) if flavour == "org" else ""
        title = title or next((b.text for b in found if b.kind == "heading"), "") if flavour == "rst" else title
        if title:
            metadata["title"] = title
    return Document(
        doc_id=metadata.get("id") or source,
        source=source,
        media_type=media_type,
        text=text,
        blocks=blocks,
        metadata=metadata,
        sha256=ids.bytes_sha256(data),
        body_start=body_start,
        warnings=tuple(warnings),
    )


def decode(data: bytes, source: str) -> tuple[str, list[str]]:
    """Strict decode by BOM, else UTF-8; a BOM is never part of the returned text."""
    for bom, codec, label in _BOMS:
        if data.startswith(bom):
            skip = len(bom)
            break
    else:
        bom, codec, label, skip = b"", "utf-8", "UTF-8", 0
        guess = bomless_utf16(data[:HEAD_BYTES]) if b"\x00" in data[:HEAD_BYTES] else None
        if guess:
            codec, label = guess, "UTF-16"
    try:
        text = data[skip:].decode(codec)
    except UnicodeDecodeError as exc:
        at = exc.start + skip
        line = f"line {data.count(_LF, 0, at) + 1}: " if codec == "utf-8" else ""
        bad = " ".join(f"0x{b:02x}" for b in data[at : min(at + 4, exc.end + skip)])
        raise InputError(
            f"{source}: invalid {label} at byte {at} ({line}{bad}); re-save the file as UTF-8"
            + (" (e.g. iconv -f cp1252 -t utf-8 if it came from Windows)" if codec == "utf-8" else "")
        ) from None
    warnings = []
    if bom:
        warnings.append(f"{label} byte order mark removed ({skip} bytes); offsets index the decoded text without it")
    elif codec != "utf-8":
        warnings.append(f"no byte order mark: read as {codec.upper()} (most characters have a zero byte); "
                        "re-save the file as UTF-8 if the text looks wrong")
    return text, warnings


def front_matter(text: str, source: str) -> tuple[dict, int, list[str]]:
    """``(metadata, body_start, warnings)`` for YAML front matter at the very top of Markdown, else
    ``({}, 0, [])``. Same fences as markdown-it's front-matter plugin: the closing line is at least as
    many dashes as the opening, or ``...``; an unclosed block is not front matter. Bad YAML warns."""
    opening = _OPEN_RE.match(text)
    if not opening:
        return {}, 0, []
    width = len(opening.group(1))
    for m in _LINE_RE.finditer(text, opening.end()):
        line = m.group(1).rstrip(" \t")
        fence = line.lstrip(" ")
        if (len(line) - len(fence) < 4 and len(fence) >= width and not fence.strip("-")) or line == "...":
            body_start = m.end()
            meta, warnings = _parse_yaml(text[opening.end() : m.start()], source)
            return meta, body_start, warnings
        if m.end() == len(text):
            break
    return {}, 0, []


def _parse_yaml(block: str, source: str) -> tuple[dict, list[str]]:
    import yaml  # PyYAML: loaded only when a file has front matter

    try:
        data = yaml.load(block, Loader=yaml.BaseLoader)
    except yaml.YAMLError as exc:
        where = getattr(exc, "problem_mark", None)
        at = f" at line {where.line + 2}" if where is not None else ""
        msg = f"{source}: front matter is not valid YAML{at}; its access tags cannot be read (held for review)"
        return {"acl_error": msg}, [msg]
    if data is None:
        return {}, []
    if not isinstance(data, dict):
        msg = f"{source}: front matter is not a key: value mapping; its access tags cannot be read (held for review)"
        return {"acl_error": msg}, [msg]
    meta, warnings = {}, []
    if "acl" in data:
        # Fail closed: an acl that is present but unreadable must not fall back to a default.
        try:
            meta["acl"] = _acl(data["acl"], source)
        except ConfigError as exc:
            meta["acl_error"] = str(exc)
            warnings.append(f"{exc} (held for review)")
    for key in ("description", "summary"):  # header "context" (enrich/describe.py)
        if isinstance(data.get(key), str) and data[key].strip():
            meta[key] = data[key]
    if data.get("supersedes") is not None:
        value = data["supersedes"]
        names = [value] if isinstance(value, str) else value if isinstance(value, list) else None
        if names is None or not all(isinstance(v, str) for v in names):
            warnings.append(f"{source}: front matter supersedes must be a path or document id, or a list of them; "
                            "ignored")
        else:
            kept = tuple(dict.fromkeys(n.strip() for n in names if n.strip() not in _NULLS))
            if kept:
                meta["supersedes"] = kept
    for key in _KEEP:
        value = data.get(key)
        if key == "acl" or value is None or (isinstance(value, str) and value.strip() in _NULLS):
            continue
        if isinstance(value, str):
            meta[key] = value.strip()
        else:
            warnings.append(f"{source}: front matter {key} must be a single value, not a list or mapping; ignored")
    return meta, warnings


def _acl(value, source: str):
    """Front matter ``acl``: a comma-separated string or a list of tags (see ``chunkwise.access``).
    An empty or null acl names nobody: an error, not "use the default"."""
    from chunkwise.access import AccessTagError, AccessTags

    where = f"{source}: front matter acl"
    if not isinstance(value, (str, list)) or (isinstance(value, list) and not all(isinstance(v, str) for v in value)):
        raise AccessTagError(f"{where} must be a tag, a comma-separated string or a list of tags, "
                             "not a mapping or nested list")
    if isinstance(value, str) and value.strip() in _NULLS:
        value = None
    tags = AccessTags.parse(value if value is not None else [], where)
    if not tags:
        raise AccessTagError(f"{where} is empty: say which groups may read the document")
    return tags
