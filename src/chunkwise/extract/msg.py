"""Outlook .msg -> Document, read with olefile (the OLE2 compound file that Outlook saves, MS-OXMSG).

The same shape as an .eml (``extract.eml``): subject as a level-1 heading and title, a paragraph with
sender, recipients and date, the plain-text body (else the HTML body read as HTML), then each
readable attachment as a level-2 section "Attachment: NAME" read by its own extractor. Metadata as
for .eml. A message whose body exists only as compressed RTF is read with a warning and no body; an
embedded message (a forwarded .msg) is listed as an attachment not read; an encrypted (S/MIME)
message says so. Bounds: ``MAX_ATTACHMENTS``, ``eml.MAX_ATTACHMENT_BYTES``; the OLE directory is
walked once and every stream read is capped by its declared size and ``MAX_STREAM_BYTES``.
"""
from __future__ import annotations

import io
import struct
from datetime import datetime, timedelta, timezone

from chunkwise import ids
from chunkwise.errors import DependencyError, InputError
from chunkwise.extract.builder import TextBuilder
from chunkwise.extract.eml import MAX_ATTACHMENT_BYTES, _plain, html_document
from chunkwise.types import Document

MEDIA_TYPE = "application/vnd.ms-outlook"
MAX_ATTACHMENTS = 100
MAX_STREAM_BYTES = 50_000_000
_SUBJECT, _BODY, _HTML, _SENDER, _SENDER_EMAIL, _TO, _CC = "0037", "1000", "1013", "0C1A", "0C1F", "0E04", "0E03"
_SMTP_SENDER, _HEADERS, _MSG_CLASS, _RTF = "5D01", "007D", "001A", "1009"
_SUBMIT_TIME, _DELIVERY_TIME = 0x0039, 0x0E06


def extract(data: bytes, source: str) -> Document:
    try:
        import olefile
    except ImportError as exc:
        raise DependencyError("MSG extraction needs olefile: pip install 'chunkwise[office]'") from exc
    try:
        ole = olefile.OleFileIO(io.BytesIO(data))
    except (OSError, ValueError, struct.error, IndexError) as exc:
        raise InputError(f"{source}: not a readable Outlook .msg ({exc}); the file is corrupt or another format") from None
    try:
        return _read(ole, data, source)
    except (OSError, ValueError, struct.error, IndexError, KeyError) as exc:
        raise InputError(f"{source}: not a readable Outlook .msg ({type(exc).__name__}: {exc}); "
                         "the file is corrupt") from None
    finally:
        ole.close()


def _read(ole, data: bytes, source: str) -> Document:
    streams = {"/".join(e): e for e in ole.listdir(streams=True, storages=False)}
    props = _Props(ole, streams, "")
    warnings: list[str] = []
    kind = props.text(_MSG_CLASS)
    meta = {k: v for k, v in (("from", _sender(props)), ("to", props.text(_TO)), ("cc", props.text(_CC)),
                              ("subject", props.text(_SUBJECT)), ("date", _date(ole, streams))) if v}
    out = TextBuilder()
    subject = meta.get("subject", "")
    out.block("heading", subject or "(no subject)", 1, subject or "(no subject)")
    lines = [f"{label}: {meta[key]}" for key, label in (("from", "From"), ("to", "To"), ("cc", "Cc"), ("date", "Date"))
             if meta.get(key)]
    if lines:
        out.block("paragraph", "\n".join(lines), meta={"role": "headers"})
    body = props.text(_BODY)
    if body.strip():
        out.document(_plain(body, source), shift=1)
    elif html := props.raw(_HTML):
        out.document(html_document(html.decode("utf-8", "replace"), source, warnings), shift=1)
    elif "SMIME" in kind.upper():
        warnings.append("encrypted (S/MIME) message: its body cannot be read")
    elif props.raw(_RTF):
        warnings.append("body stored only as compressed RTF; not read")
    else:
        warnings.append("no text or HTML body")
    meta["attachments"] = _attachments(ole, streams, source, out, warnings)
    if any(a["name"].lower().endswith((".p7m", ".pgp-encrypted", ".asc")) for a in meta["attachments"]):
        warnings.append("encrypted message (S/MIME or PGP): its body cannot be read")
    if subject:
        meta["title"] = subject
    return Document(doc_id=source, source=source, media_type=MEDIA_TYPE, text=out.value(), blocks=tuple(out.blocks),
                    metadata=meta, sha256=ids.bytes_sha256(data), warnings=tuple(dict.fromkeys(warnings)))


class _Props:
    """The ``__substg1.0_TTTTYYYY`` streams of one storage (the message, or one attachment)."""

    def __init__(self, ole, streams: dict, prefix: str) -> None:
        self.ole, self.prefix = ole, prefix
        self.names = {n[len(prefix):]: n for n in streams if n.startswith(prefix) and "/" not in n[len(prefix):]}

    def raw(self, tag: str) -> bytes:
        for suffix in ("0102", "001F", "001E"):
            name = self.names.get(f"__substg1.0_{tag}{suffix}")
            if name is not None:
                return self._read(name)
        return b""

    def text(self, tag: str) -> str:
        name = self.names.get(f"__substg1.0_{tag}001F")
        if name is not None:
            return self._read(name).decode("utf-16-le", "replace").rstrip("\x00").strip()
        name = self.names.get(f"__substg1.0_{tag}001E")
        if name is not None:
            return self._read(name).decode("cp1252", "replace").rstrip("\x00").strip()
        return ""

    def _read(self, name: str) -> bytes:
        if self.ole.get_size(name) > MAX_STREAM_BYTES:
            raise ValueError(f"stream {name} is over {MAX_STREAM_BYTES // 1_000_000} MB")
        with self.ole.openstream(name) as fh:
            return fh.read(MAX_STREAM_BYTES)


def _sender(props: _Props) -> str:
    name = props.text(_SENDER)
    email = props.text(_SENDER_EMAIL) or props.text(_SMTP_SENDER)
    if name and email and email not in name and "@" in email:
        return f"{name} <{email}>"
    return name or email


def _date(ole, streams: dict) -> str:
    """The submit (else delivery) time from the fixed-size property stream, as ISO 8601 UTC."""
    name = "__properties_version1.0"
    if name not in streams or ole.get_size(name) > 1_000_000:
        return ""
    with ole.openstream(name) as fh:
        raw = fh.read()
    found = {}
    for pos in range(32, len(raw) - 15, 16):  # a top-level message's header is 32 bytes
        ptype, pid = struct.unpack_from("<HH", raw, pos)
        if ptype == 0x0040 and pid in (_SUBMIT_TIME, _DELIVERY_TIME):
            found[pid] = struct.unpack_from("<Q", raw, pos + 8)[0]
    ticks = found.get(_SUBMIT_TIME) or found.get(_DELIVERY_TIME)
    if not ticks:
        return ""
    try:
        when = datetime(1601, 1, 1, tzinfo=timezone.utc) + timedelta(microseconds=ticks // 10)
    except OverflowError:
        return ""
    return when.isoformat()


def _attachments(ole, streams: dict, source: str, out: TextBuilder, warnings: list[str]) -> list[dict]:
    from chunkwise.extract import extract_bytes
    from chunkwise.sources.sniff import media_type_for

    folders = sorted({n.split("/", 1)[0] for n in streams if n.startswith("__attach_version1.0_")})
    listed, budget = [], MAX_ATTACHMENT_BYTES
    for n, folder in enumerate(folders):
        props = _Props(ole, streams, folder + "/")
        name = props.text("3707") or props.text("3704") or f"attachment-{n + 1}"
        entry: dict = {"name": name, "read": False}
        listed.append(entry)
        reason = ""
        if n >= MAX_ATTACHMENTS:
            reason = f"over {MAX_ATTACHMENTS} attachments"
        elif any(s.startswith(folder + "/__substg1.0_3701000D") for s in streams):
            reason = "an embedded Outlook message (save it as its own .msg or .eml to read it)"
        elif (media_type := media_type_for(name)) is None:
            reason = "not a type chunkwise reads"
        else:
            payload = props.raw("3701")
            if len(payload) > budget:
                reason = f"over the {MAX_ATTACHMENT_BYTES // 1_000_000} MB attachment budget"
            else:
                try:
                    doc = extract_bytes(payload, f"{source}/{name}", media_type)
                except (InputError, DependencyError) as exc:
                    reason = str(exc).removeprefix(f"{source}/{name}: ")
                else:
                    budget -= len(payload)
                    entry["read"] = True
                    out.block("heading", f"Attachment: {name}", 2, f"Attachment: {name}", {"role": "attachment"})
                    out.document(doc, shift=2, meta={"attachment": name})
                    continue
        entry["reason"] = reason
        warnings.append(f"attachment {name}: not read ({reason})")
    return listed
