"""Markdown and plain text -> Document. The decoded file *is* the original text every offset points into.

Decoding: UTF-8; UTF-8 with a BOM (the BOM is dropped and a warning says so: offsets then index the
decoded text *without* it, i.e. byte offset 3 of the file is character 0); UTF-16 and UTF-32 with a BOM;
UTF-16 without one, recognised by its zero bytes (``sources.sniff.bomless_utf16``), with a warning.
Invalid bytes raise ``InputError`` naming the byte offset and line, rather than decoding lossily: a
silently replaced character makes a chunk that can never be matched exactly, and re-saving the file as
UTF-8 is a one-minute fix. Markdown has no blocks: the chunker parses Markdown itself. Plain text,
reStructuredText and Org get heading, list and paragraph blocks from ``textstruct`` (plain text only
when it has a heading: prose without one is chunked by paragraphs as before).

**Front matter.** The first line that is not blank (after a byte order mark and any blank lines)
opens a block when it is ``---`` (three or more dashes) or ``+++``, with any spaces or tabs around
it. ``---`` blocks are YAML, read with PyYAML's ``BaseLoader`` (as safe as ``safe_load`` but keeping
every scalar as written: ``safe_load`` would turn ``id: 0012`` into 10, ``version: 1.10`` into 1.1 and
``title: yes`` into True) and close at a line of at least as many dashes or ``...``; ``+++`` blocks
are TOML and close at ``+++``. A block *declares access* when a line of it has the key ``acl`` in
any case, spacing, quoting or width (``ACL:``, ``acl =``, ``"Acl" :``, fullwidth ``ａｃｌ：``).

- A block at the very top opening ``---`` is front matter (what Markdown renderers hide), as is a
  ``+++`` block that parses; a block after blank lines or indented is front matter only when it
  declares access. Anything else is text: a leading rule followed by prose, "ACL:" in a sentence.
- A block that declares access and does not parse (bad YAML or TOML, not a mapping, no closing
  line, ``acl`` named twice, a bad tag, an empty list), or that stands in a file that is not
  Markdown, fails closed: ``metadata["acl_error"]`` says why, the run reports it for the file, and
  every chunk is stored for review, never under a default tag.
- ``acl`` becomes an ``AccessTags``; ``supersedes`` (a path or document id, or a list of them) a
  tuple of names (see enrich/versions.py). A block that does not parse but declares no access is
  skipped with a warning.
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
    metadata, body_start, fm_warnings = front_matter(text, source, markdown=media_type == "text/markdown")
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


def front_matter(text: str, source: str, markdown: bool = True) -> tuple[dict, int, list[str]]:
    """``(metadata, body_start, warnings)`` of the front matter block at the top of a file, else
    ``({}, 0, [])``; the grammar is in the module docstring. ``markdown`` False (plain text, reST,
    Org): a block is never read there, but one that declares ``acl`` fails closed."""
    found = _front_block(text)
    if found is None:
        return {}, 0, []
    kind, begin, block, body_start, closed = found
    declares = _declares_acl(block)
    strict = kind == "-" and text.startswith("---")  # what Markdown itself takes for front matter
    if not declares and not (closed and (strict or kind == "+")):
        return {}, 0, []  # a rule, a setext underline, prose: text
    if not markdown:
        if not declares:
            return {}, 0, []
        msg = (f"{source}: front matter declares acl, but front matter is read only in Markdown files; its "
               "access tags cannot be read (held for review; name the file .md or use --acl-map)")
        return {"acl_error": msg}, 0, [msg]
    if not closed:
        msg = (f"{source}: front matter declares acl but has no closing '{kind * 3}' line; its access tags "
               "cannot be read (held for review)")
        return {"acl_error": msg}, 0, [msg]
    data, problem = _load(kind, block, source, text.count("\n", 0, begin) + 1)
    if problem is not None:
        if declares:  # an access declaration that cannot be read: never a default
            msg = f"{problem}; its access tags cannot be read (held for review)"
            return {"acl_error": msg}, body_start, [msg]
        if not strict:
            return {}, 0, []  # prose between two +++ lines: text
        return {}, body_start, [f"{problem}; ignored"]
    meta, warnings = _metadata(data, source)
    return meta, body_start, warnings

_FENCE_RE = re.compile(r"[ \t\ufeff]*(-{3,}|\+{3})[ \t]*")
# A line that declares ``acl``: the word ``acl`` in any case or width (after NFKC, so a fullwidth
# ``ＡＣＬ：`` too), quoted or not, opening a line (after ``-`` or spaces) and followed by ``:``, ``=``,
# a space or the line end (``acl hr`` is a mistaken declaration, not prose); after ``{`` or ``,``
# (YAML flow syntax) followed by ``:`` or ``=``; or a TOML table ``[acl]``.
_DECLARES_RE = re.compile(
    r"""^[ \t\-]*["']?[ \t]*acl["']?(?:[ \t:=]|$)|[{,][ \t]*["']?acl["']?[ \t]*[:=]|^[ \t]*\[[ \t]*["']?acl\b""",
    re.M)


def _front_block(text: str):
    """``(kind, block_start, block, body_start, closed)`` of the block opening the file, or None. ``kind`` is
    ``-`` (YAML) or ``+`` (TOML); an unclosed block runs to its first blank line."""
    lines = _LINE_RE.finditer(text)
    for m in lines:
        if m.group(1).strip(_BLANK):
            break
        if m.end() == len(text):
            return None
    else:
        return None
    opening = _FENCE_RE.fullmatch(m.group(1))
    if not opening:
        return None
    fence = opening.group(1)
    kind, width, begin = fence[0], len(fence), m.end()
    for m in _LINE_RE.finditer(text, begin):
        line = m.group(1).rstrip(" \t")
        bare = line.lstrip(" \t")
        if kind == "+" and bare == "+++":
            return kind, begin, text[begin : m.start()], m.end(), True
        if kind == "-" and ((len(line) - len(bare) < 4 and len(bare) >= width and not bare.strip("-")) or line == "..."):
            return kind, begin, text[begin : m.start()], m.end(), True
        if m.end() == len(text):
            break
    end = begin
    for m in _LINE_RE.finditer(text, begin):  # unclosed: the block runs to its first blank line
        if not m.group(1).strip(_BLANK):
            break
        end = m.end()
        if m.end() == len(text):
            break
    return kind, begin, text[begin:end], 0, False


def _declares_acl(block: str) -> bool:
    import unicodedata

    return bool(_DECLARES_RE.search(unicodedata.normalize("NFKC", block).casefold()))


def _load(kind: str, block: str, source: str, first_line: int):
    """``(mapping, None)`` or ``(None, problem)``: YAML with PyYAML's ``BaseLoader`` (every scalar a
    string), TOML with ``tomllib``."""
    if kind == "+":
        import tomllib

        try:
            return tomllib.loads(block), None
        except tomllib.TOMLDecodeError as exc:
            return None, f"{source}: front matter is not valid TOML ({exc})"
    import yaml  # PyYAML: loaded only when a file has front matter

    try:
        data = yaml.load(block, Loader=yaml.BaseLoader)
    except yaml.YAMLError as exc:
        where = getattr(exc, "problem_mark", None)
        at = f" at line {where.line + first_line}" if where is not None else ""
        return None, f"{source}: front matter is not valid YAML{at}"
    if data is None:
        return {}, None
    if not isinstance(data, dict):
        return None, f"{source}: front matter is not a key: value mapping"
    return data, None


def _scalar(value):
    """A front matter value as written: strings as they are; TOML integers and dates as text."""
    import datetime

    if isinstance(value, str):
        return value
    if isinstance(value, (int, datetime.date, datetime.time)) and not isinstance(value, bool):
        return str(value)
    return None


def _metadata(data: dict, source: str) -> tuple[dict, list[str]]:
    import unicodedata

    meta: dict = {}
    warnings: list[str] = []
    acl_keys = [k for k in data if isinstance(k, str) and unicodedata.normalize("NFKC", k).strip().casefold() == "acl"]
    if len(acl_keys) > 1:
        msg = (f"{source}: front matter names acl more than once ({', '.join(map(repr, acl_keys))}); its access "
               "tags cannot be read (held for review)")
        meta["acl_error"] = msg
        warnings.append(msg)
    elif acl_keys:
        # Fail closed: an acl that is present but unreadable must not fall back to a default.
        try:
            meta["acl"] = _acl(data[acl_keys[0]], source)
        except ConfigError as exc:
            meta["acl_error"] = f"{exc} (held for review)"
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
        if key == "acl" or value is None:
            continue
        text = _scalar(value)
        if text is None:
            warnings.append(f"{source}: front matter {key} must be a single value, not a list or mapping; ignored")
        elif text.strip() not in _NULLS:
            meta[key] = text.strip()
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
