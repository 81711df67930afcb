"""The only place ids and hashes are made (seed 001): three hashes answer three questions.

- ``content_hash`` = sha256(normalised text): is this the same words?
- ``chunk_id`` = first 128 bits of sha256(doc_id, content_hash, occurrence): which record is this?
- ``embed_key`` = sha256(model name@version, exactly the embedded text): is the stored vector valid?

Fields are joined with the unit separator U+001F so no field can run into the next. 128 bits keep the
birthday risk negligible at a billion chunks (64 bits would be ~3%).
"""
from __future__ import annotations

import hashlib

SEP = "\x1f"


def sha256_hex(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def hash_text(text: str) -> str:
    """Whitespace-insensitive: re-wrapping a paragraph is not a content change."""
    return sha256_hex(" ".join(text.split()))


def chunk_id(doc_id: str, content_hash: str, occurrence: int) -> str:
    return sha256_hex(SEP.join((doc_id, content_hash, str(occurrence))))[:32]


def chunk_ids(doc_id: str, texts) -> list[tuple[str, str]]:
    """(chunk_id, content_hash) of a document's chunk texts, in order: the n-th chunk with the same
    content hash has occurrence n. The one place occurrences are counted (records, the api's
    ``chunk_ids``, the evaluator's items): a repeated passage keeps its id wherever it is asked for."""
    return list(iter_chunk_ids(doc_id, texts))


def iter_chunk_ids(doc_id: str, texts):
    """``chunk_ids``, one at a time (a big document's records are made as they are packed)."""
    seen: dict[str, int] = {}
    for text in texts:
        chash = hash_text(text)
        seen[chash] = seen.get(chash, -1) + 1
        yield chunk_id(doc_id, chash, seen[chash]), chash


def embed_key(model: str, embedded_text: str) -> str:
    return sha256_hex(model + SEP + embedded_text)


def section_id(doc_id: str, heading_path: tuple[str, ...], ordinal: int | None) -> str:
    """The enclosing section of a chunk (its parent for expansion), stable while the path and ordinal are."""
    return sha256_hex(SEP.join((doc_id, *heading_path, str(ordinal))))[:32]


def fingerprint(value, length: int = 32) -> str:
    """A stable id of a JSON-able value (configs, run inputs): the first ``length`` hex of sha256."""
    import json

    return sha256_hex(json.dumps(value, sort_keys=True, separators=(",", ":"), default=list))[:length]


def sha256_stream():
    """A sha256 hasher for bytes read in blocks (``update``, ``hexdigest``): source fingerprints."""
    return hashlib.sha256()


def bytes_sha256(data: bytes) -> str:
    """A source's ``sha256`` (its ``source_version``): the hex digest of its bytes."""
    return hashlib.sha256(data).hexdigest()


def keyed_hasher(key: str, digest_size: int = 16):
    """A keyed BLAKE2b hasher to ``copy()`` per input: the hashing embedder's token hash (fast, and
    keyed by its recipe so another version never shares cells by accident)."""
    return hashlib.blake2b(digest_size=digest_size, key=key.encode("utf-8"))


def sha256_base64(text: str) -> str:
    """Base64 of sha256(text): a Content-Security-Policy script hash (the HTML report's own script)."""
    import base64

    return base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii")


def unit_interval(*fields: str) -> float:
    """A stable pseudo-random number in [0, 1) for ``fields`` (the first 64 bits of their sha256):
    deterministic splits, the same on every machine and Python version (``hash()`` is salted)."""
    return int(sha256_hex(SEP.join(fields))[:16], 16) / 2 ** 64
