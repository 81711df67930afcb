"""Media type from the suffix, confirmed by the first bytes: a PNG renamed ``.txt`` must never be decoded
and indexed as text, and a ``.pdf`` that is not a PDF should fail here with a plain message rather
than deep inside a parser. Each check reads a few KiB (a DOCX check reads the zip's central directory),
never a whole file.
"""
from __future__ import annotations

import os
import re
import zipfile
from pathlib import Path

MARKDOWN = "text/markdown"
PLAIN = "text/plain"
HTML = "text/html"
PDF = "application/pdf"
DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
CODE = "text/x-code"  # source and config files; the language is in the Document's metadata
PPTX = "application/vnd.openxmlformats-officedocument.presentationml.presentation"
XLSX = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
ODT = "application/vnd.oasis.opendocument.text"
ODS = "application/vnd.oasis.opendocument.spreadsheet"
EPUB = "application/epub+zip"
CSV = "text/csv"
TSV = "text/tab-separated-values"
EML = "message/rfc822"
MSG = "application/vnd.ms-outlook"
RTF = "application/rtf"
RST = "text/x-rst"
ORG = "text/x-org"
ZIPPED = frozenset({DOCX, PPTX, XLSX, ODT, ODS, EPUB})  # zip containers
# Formats chunkwise recognises but cannot read: skipped by type, with what to do instead.
LEGACY = {
    ".doc": "a legacy Word .doc; save it as .docx (or .odt) to include it",
    ".ppt": "a legacy PowerPoint .ppt; save it as .pptx to include it",
    ".xls": "a legacy Excel .xls; save it as .xlsx (or .csv) to include it",
}

# Languages with a tree-sitter grammar in the ``code`` extra, then others that are line-packed.
CODE_SUFFIXES = {
    ".py": "python", ".pyi": "python", ".js": "javascript", ".mjs": "javascript", ".cjs": "javascript",
    ".jsx": "javascript", ".ts": "typescript", ".mts": "typescript", ".cts": "typescript", ".tsx": "tsx",
    ".go": "go", ".rs": "rust", ".java": "java", ".c": "c", ".h": "c", ".sh": "bash", ".bash": "bash",
    ".zsh": "bash", ".yaml": "yaml", ".yml": "yaml", ".toml": "toml", ".json": "json", ".sql": "sql",
    ".rb": "ruby", ".php": "php", ".kt": "kotlin", ".kts": "kotlin", ".swift": "swift", ".scala": "scala",
    ".lua": "lua", ".pl": "perl", ".r": "r", ".cs": "csharp", ".cpp": "cpp", ".cc": "cpp", ".hpp": "cpp",
    ".cxx": "cpp", ".hh": "cpp", ".hxx": "cpp",
    ".ps1": "powershell", ".ini": "ini", ".cfg": "ini", ".conf": "conf", ".properties": "properties",
    ".tf": "terraform", ".proto": "protobuf", ".graphql": "graphql", ".gradle": "groovy", ".mk": "make",
}
CODE_NAMES = {"Makefile": "make", "GNUmakefile": "make", "Dockerfile": "dockerfile", "Jenkinsfile": "groovy",
              "Vagrantfile": "ruby", "Gemfile": "ruby", "Rakefile": "ruby"}
_SHEBANGS = (("python", "python"), ("node", "javascript"), ("bash", "bash"), ("zsh", "bash"), ("sh", "bash"),
             ("ruby", "ruby"), ("perl", "perl"))

SUFFIXES = {
    ".md": MARKDOWN,
    ".markdown": MARKDOWN,
    ".txt": PLAIN,
    ".html": HTML,
    ".htm": HTML,
    ".pdf": PDF,
    ".docx": DOCX,
    **dict.fromkeys(CODE_SUFFIXES, CODE),
    ".pptx": PPTX,
    ".xlsx": XLSX,
    ".xlsm": XLSX,
    ".odt": ODT,
    ".ods": ODS,
    ".epub": EPUB,
    ".csv": CSV,
    ".tsv": TSV,
    ".tab": TSV,
    ".eml": EML,
    ".msg": MSG,
    ".rtf": RTF,
    ".rst": RST,
    ".org": ORG,
}
TEXT_TYPES = frozenset({MARKDOWN, PLAIN, HTML, CODE, CSV, TSV, EML, RST, ORG})
HEAD_BYTES = 8192  # how much of a file the content checks look at

# Text with one of these byte order marks legitimately contains NUL bytes (UTF-16/32).
_BOMS = (b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff", b"\x00\x00\xfe\xff")
# When a text file's head is sniffed for what it really is (filetype's magic numbers): when it holds
# a byte no text holds (C0 controls but tab, newlines, form feed, ESC and DOS's end-of-file ^Z, and
# DEL), starts with a byte that cannot start UTF-8 text (PNG's 0x89, JPEG's 0xFF), or starts with a
# printable signature no text starts with. Plain text never is: the library takes ASCII such as "BM"
# or "ID3" at the start of a sentence for a BMP image or an MP3.
# Only the first bytes are looked at: binary formats have such bytes in their headers.
_CONTROLS = bytes([*range(0x00, 0x09), *range(0x0E, 0x1A), *range(0x1C, 0x20), 0x7F])
_NOT_FIRST = frozenset([*range(0x80, 0xC2), *range(0xF5, 0x100)])
_SUSPECT_SPAN = 512
_PRINTABLE_SIGNATURES = (b"%PDF-", b"GIF87a", b"GIF89a")


def media_type_for(name: str) -> str | None:
    """The media type a file name claims, or None for a suffix chunkwise does not read."""
    base = os.path.basename(name)  # string work, not pathlib: this runs for every file of a no-op walk
    return SUFFIXES.get(os.path.splitext(base)[1].lower()) or (CODE if base in CODE_NAMES else None)


def shebang_language(head: bytes | str) -> str | None:
    """The language a ``#!`` first line names (``#!/usr/bin/env python3`` -> python), or None."""
    line = head.split(b"\n" if isinstance(head, bytes) else "\n", 1)[0]
    if isinstance(line, bytes):
        line = line.decode("utf-8", "replace")
    if not line.startswith("#!"):
        return None
    words = line[2:].split()
    prog = words[0].rsplit("/", 1)[-1] if words else ""
    if prog == "env":  # #!/usr/bin/env -S python3 -u
        rest = [w for w in words[1:] if not w.startswith("-") and "=" not in w]
        prog = rest[0].rsplit("/", 1)[-1] if rest else ""
    return dict(_SHEBANGS).get(prog.rstrip("0123456789."))


def code_language(name: str, head: str = "") -> str | None:
    """The language of a code/config file: suffix, then well-known file name, then ``#!`` line."""
    path = Path(name)
    return CODE_SUFFIXES.get(path.suffix.lower()) or CODE_NAMES.get(path.name) or shebang_language(head)


def unsupported_message(name: str) -> str:
    suffix = Path(name).suffix
    if suffix.lower() in LEGACY:
        return f"{name}: unsupported type: {LEGACY[suffix.lower()]}; skipped"
    what = f"type '{suffix}'" if suffix else "type (no file extension)"
    return f"{name}: unsupported file {what}; skipped (chunkwise reads {', '.join(SUFFIXES)})"


def check_head(name: str, media_type: str, head: bytes) -> str | None:
    """Why the first bytes contradict ``media_type`` (a message saying what to do), or None if they
    fit. ``head`` is the start of the file, ideally ``HEAD_BYTES`` long."""
    if not head:
        return f"{name} is empty; skipped"
    if media_type in TEXT_TYPES:
        return _check_text(name, head)
    if media_type == PDF and b"%PDF-" not in head[:1024]:
        return f"{name}: not a PDF (no %PDF- header); it may be damaged or another format renamed .pdf"
    if media_type == DOCX and not head.startswith(b"PK\x03\x04"):
        return f"{name}: not a .docx (not a zip container); if it is an old Word .doc, re-save it as .docx"
    if media_type in ZIPPED and not head.startswith(b"PK\x03\x04"):
        legacy = head.startswith(b"\xd0\xcf\x11\xe0")
        return (f"{name}: not a {Path(name).suffix or 'zip'} file (not a zip container)"
                + ("; it is a legacy Office file renamed: re-save it in the current format" if legacy else
                   "; it may be damaged or another format renamed"))
    if media_type == MSG and not head.startswith(b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"):
        return f"{name}: not an Outlook .msg (no OLE2 header); if it is a saved e-mail in text form, rename it .eml"
    if media_type == RTF and not head.lstrip()[:5] == b"{\\rtf":
        return f"{name}: not an RTF document (no {{\\rtf header); it may be damaged or another format renamed .rtf"
    return None


UTF16_MIN_ZEROS = 0.3  # share of code units whose high byte is zero: mostly ASCII/Latin text
UTF16_MAX_OTHER = 0.02  # share whose low byte is zero, which UTF-16 text almost never has
UTF16_MIN_UNITS = 4  # fewer characters than this are no evidence
_CONTROL = re.compile("[\x00-\x08\x0b\x0e-\x1f\x7f\ufffd]")  # never in text: binary read as UTF-16


def bomless_utf16(head: bytes) -> str | None:
    """``"utf-16-le"`` / ``"utf-16-be"`` when ``head`` reads as UTF-16 text saved without a byte order
    mark (Windows tools do this): the high byte of most code units is zero and the low byte almost
    never is, and it decodes. UTF-32 (three zero bytes in four) and binaries do not pass."""
    even = head[: len(head) // 2 * 2]
    units = len(even) // 2
    if units < UTF16_MIN_UNITS:
        return None
    zeros_first, zeros_second = even[0::2].count(0), even[1::2].count(0)
    for codec, high, low in (("utf-16-le", zeros_second, zeros_first), ("utf-16-be", zeros_first, zeros_second)):
        if high >= UTF16_MIN_ZEROS * units and low <= UTF16_MAX_OTHER * units:
            try:
                text = even.decode(codec)
            except UnicodeDecodeError:  # a lone surrogate may be cut at the end of the head: look before it
                text = even[: max(0, len(even) - 2)].decode(codec, errors="replace")
            if not _CONTROL.search(text):
                return codec
    return None


def _check_text(name: str, head: bytes) -> str | None:
    if head.startswith(_BOMS):
        return None
    start = head[:_SUSPECT_SPAN]
    if (head[0] in _NOT_FIRST or head.startswith(_PRINTABLE_SIGNATURES)
            or len(start.translate(None, _CONTROLS)) != len(start)):
        import filetype  # magic numbers of ~80 formats, pure Python (sniffed only for suspect heads)

        if kind := filetype.guess(head):
            subtype = kind.mime.rsplit("/", 1)[-1]
            label = kind.extension if subtype.startswith(("x-", "vnd.")) else subtype
            what = f"{label.upper()}, {kind.mime}"
            hint = (f"rename it to .{kind.extension} if that is what it is" if kind.extension != "exe"
                    else "remove it from the input")
            return f"{name}: binary content ({what}) behind a text suffix; not decoded; {hint}"
    if b"\x00" in head and bomless_utf16(head) is None:
        return (
            f"{name}: binary content (NUL bytes) behind a text suffix; not decoded; if it is UTF-16 text "
            "without a byte order mark, re-save it as UTF-8"
        )
    return None


def check_docx(name: str, path: Path) -> str | None:
    """A .docx must be a zip holding ``word/document.xml``; only the central directory is read."""
    try:
        with zipfile.ZipFile(path) as zf:
            if "word/document.xml" not in zf.namelist():
                return f"{name}: a zip file but not a Word document (no word/document.xml); re-save it as .docx"
    except zipfile.BadZipFile:
        return f"{name}: not a valid .docx (damaged or truncated zip); re-save it from Word"
    except OSError as exc:
        return f"{name}: cannot read ({exc.strerror or exc}); check its permissions"
    return None
