"""E-mail (.eml, RFC 5322 with MIME) -> Document, with the standard library's ``email`` package.

The subject is a level-1 heading (and the title); a paragraph names sender, recipients and date;
then the body: the plain-text part when there is one, else the HTML part read as HTML (every
visible block; ``extract.html``). ``metadata`` holds from, to, cc, date (ISO 8601 when it parses),
subject and message_id.

Attachments are sections of the same document (decided over child documents: they then inherit the
message's access tags and ids without a second identity scheme, and a search hit names the mail
they came with): each readable one becomes a level-2 heading "Attachment: NAME" followed by its
text, read by its own extractor (PDF, DOCX, a forwarded .eml, ...), with its headings one level
deeper. ``metadata["attachments"]`` lists every attachment with whether it was read and why not.
Bounds: ``MAX_DEPTH`` nested messages, ``MAX_ATTACHMENTS`` per message and ``MAX_ATTACHMENT_BYTES``
decoded per message; past a bound an attachment is listed as not read, never silently dropped.
"""
from __future__ import annotations

import re
from email import policy
from email.message import EmailMessage
from email.parser import BytesParser
from email.utils import parsedate_to_datetime

from chunkwise import ids
from chunkwise.errors import DependencyError, InputError
from chunkwise.extract.builder import TextBuilder
from chunkwise.types import Document

MEDIA_TYPE = "message/rfc822"
MAX_DEPTH = 3
MAX_ATTACHMENTS = 100
MAX_ATTACHMENT_BYTES = 50_000_000
_TAGS = re.compile(r"<[^>]*>")
_HEADERS = (("from", "From"), ("to", "To"), ("cc", "Cc"), ("date", "Date"))


def extract(data: bytes, source: str, depth: int = 0) -> Document:
    msg = BytesParser(policy=policy.default).parsebytes(data)
    if not msg.keys() or msg.defects and not any(k in msg for k in ("From", "To", "Subject", "Date")):
        raise InputError(f"{source}: not an e-mail message (no header lines such as From:, To:, Subject:)")
    meta = headers(msg)
    out, warnings = TextBuilder(), []
    subject = meta.get("subject", "")
    out.block("heading", subject or "(no subject)", 1, subject or "(no subject)")
    lines = [f"{label}: {meta[key]}" for key, label in _HEADERS if meta.get(key)]
    if lines:
        out.block("paragraph", "\n".join(lines), meta={"role": "headers"})
    body = _body(msg, source, warnings)
    if body is not None:
        out.document(body, shift=1)
    meta["attachments"] = _attachments(msg, source, depth, out, warnings)
    if subject:
        meta["title"] = subject
    return Document(doc_id=source, source=source, media_type=MEDIA_TYPE, text=out.value(), blocks=tuple(out.blocks),
                    metadata=meta, sha256=ids.bytes_sha256(data), warnings=tuple(dict.fromkeys(warnings)))


def headers(msg) -> dict:
    """from, to, cc, subject, message_id as text; date as ISO 8601 when it parses (else as written)."""
    meta = {}
    for key, name in (("from", "From"), ("to", "To"), ("cc", "Cc"), ("subject", "Subject"),
                      ("message_id", "Message-ID"), ("date", "Date")):
        try:
            value = msg.get(name)
        except (ValueError, TypeError, IndexError):  # a header the policy cannot parse
            value = msg.get_all(name, failobj=[None])[0] if hasattr(msg, "get_all") else None
        text = " ".join(str(value).split()) if value is not None else ""
        if text:
            meta[key] = text
    if "date" in meta:
        try:
            meta["date"] = parsedate_to_datetime(meta["date"]).isoformat()
        except (TypeError, ValueError, IndexError):
            pass
    return meta


def _body(msg: EmailMessage, source: str, warnings: list[str]) -> Document | None:
    try:
        part = msg.get_body(preferencelist=("plain", "html"))
    except (KeyError, ValueError, TypeError):
        part = None
    if part is None:
        if not msg.is_multipart() and msg.get_content_maintype() == "text":
            part = msg
        else:
            warnings.append("no text or HTML body")
            return None
    text = _text(part)
    if part.get_content_subtype() == "html":
        return html_document(text, source, warnings)
    return _plain(text, source)


def _text(part) -> str:
    try:
        return part.get_content()
    except (LookupError, ValueError, AssertionError):  # an unknown or broken charset
        payload = part.get_payload(decode=True) or b""
        return payload.decode("utf-8", "replace")


def _plain(text: str, source: str) -> Document:
    from chunkwise.extract.textstruct import blocks

    text = text.replace("\r\n", "\n")
    return Document(doc_id=source, source=source, media_type="text/plain", text=text, blocks=tuple(blocks(text)))


def html_document(html: str, source: str, warnings: list[str]) -> Document:
    """An HTML body as a Document (every visible block); without the html extra, tags stripped."""
    try:
        from chunkwise.extract import html as html_mod

        return html_mod.extract(html.encode("utf-8"), source, main_content=False)
    except DependencyError:
        warnings.append("HTML body read without its structure (pip install 'chunkwise[html]')")
        return _plain(_TAGS.sub(" ", html), source)


def _attachments(msg: EmailMessage, source: str, depth: int, out: TextBuilder, warnings: list[str]) -> list[dict]:
    listed: list[dict] = []
    budget = MAX_ATTACHMENT_BYTES
    for n, part in enumerate(msg.iter_attachments() if msg.is_multipart() else ()):
        name = part.get_filename() or f"attachment-{n + 1}"
        entry = {"name": name, "type": part.get_content_type(), "read": False}
        listed.append(entry)
        if n >= MAX_ATTACHMENTS:
            entry["reason"] = f"over {MAX_ATTACHMENTS} attachments"
            if n == MAX_ATTACHMENTS:  # one warning for all of them: their count is the problem
                warnings.append(f"attachment {name} and those after it: not read (over {MAX_ATTACHMENTS} attachments)")
            continue
        doc, reason, size = _attachment(part, f"{source}/{name}", name, depth, budget)
        if doc is None:
            entry["reason"] = reason
            warnings.append(f"attachment {name}: not read ({reason})")
            continue
        budget -= size  # the bytes decoded, as the bound says (not the text kept, which can be far less)
        entry["read"] = True
        out.block("heading", f"Attachment: {name}", 2, f"Attachment: {name}", {"role": "attachment"})
        out.document(doc, shift=2, meta={"attachment": name})
        warnings.extend(f"attachment {name}: {w}" for w in doc.warnings)
    return listed


def _attachment(part, where: str, name: str, depth: int, budget: int) -> tuple[Document | None, str, int]:
    """(its document or None, why not, the bytes decoded)."""
    from chunkwise.extract import extract_bytes
    from chunkwise.sources.sniff import EML, media_type_for

    if part.get_content_type() == "message/rfc822":
        inner = part.get_payload()
        data = inner[0].as_bytes() if isinstance(inner, list) and inner else b""
        media_type = EML
    else:
        try:
            data = part.get_payload(decode=True) or b""
        except (ValueError, TypeError, AssertionError) as exc:
            return None, f"undecodable ({type(exc).__name__})", 0
        media_type = media_type_for(name) or {"text/plain": "text/plain", "text/html": "text/html"}.get(
            part.get_content_type())
    if media_type is None:
        return None, f"{part.get_content_type()} is not a type chunkwise reads", 0
    if len(data) > budget:
        return None, f"over the {MAX_ATTACHMENT_BYTES / 1_000_000:g} MB attachment budget", 0
    if media_type == EML:
        if depth + 1 >= MAX_DEPTH:
            return None, f"nested more than {MAX_DEPTH} messages deep", 0
        try:
            return extract(data, where, depth + 1), "", len(data)
        except InputError as exc:
            return None, str(exc).removeprefix(where + ": "), 0
    try:
        return extract_bytes(data, where, media_type), "", len(data)
    except (InputError, DependencyError) as exc:
        return None, str(exc).removeprefix(where + ": "), 0
