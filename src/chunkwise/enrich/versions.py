"""What a document says about its versions, and the fingerprint near-duplicates are detected by.

Declared: front matter ``version`` (any label; compared naturally, so 1.10 > 1.9), ``updated_at``
(an ISO date or date-time) and ``supersedes`` (paths — relative to the document's folder or its
root — or document ids of the documents it replaces). Detected: two documents whose texts are
near-duplicates (estimated Jaccard similarity of their word 3-shingles >= ``NEAR_DUPLICATE``) and
whose ``version`` or, failing that, ``updated_at`` differ: the later supersedes the earlier
(``pipeline/versions.py`` derives the links over the whole store).

Why shingles and not the share of identical chunk hashes: two versions of a short policy that differ
in one number share no chunk at all when the policy is one chunk, and an edit that shifts a packing
boundary changes every later chunk's hash; 3-shingles of the normalised words change only around
the edit (one number in a 200-word policy: J ~ 0.97). The fingerprint is a one-permutation MinHash:
each shingle hashed once (blake2b, no numpy needed at ingest), the minimum kept in one of 128 bins;
128 32-bit values (512 bytes per document) estimate J with a standard error below 0.045, and
``pipeline/versions.py`` compares only documents that agree on a whole band of 4 bins (linear in
documents, not quadratic).

Access: the fingerprint covers the document's *servable* chunks and only when they all carry one
set of tags, so whoever may see any of the document sees all the text it was computed from; a
document whose sections carry different tags is never detected (a caller who may see part of it
would otherwise be influenced by text they cannot read) — its declared links still count.
"""
from __future__ import annotations

import base64
import json
import re
import struct
import unicodedata
from dataclasses import dataclass
from datetime import datetime, timezone
from hashlib import blake2b
from typing import Iterable, Sequence

BINS = 128
BAND = 4  # bins per LSH band: 32 bands; two documents are compared when one band agrees
EMPTY = 0xFFFFFFFF
SHINGLE = 3
MIN_WORDS = 10  # shorter texts are too small to call near-duplicates
NEAR_DUPLICATE = 0.7
RECIPE = f"oph{BINS}-w{SHINGLE}-min{MIN_WORDS}"  # part of every document's ingest inputs

_WORD = re.compile(r"\w+")


@dataclass(frozen=True)
class VersionInfo:
    """A document's version metadata as stored in its ``documents.versioning`` JSON."""

    version: str = ""
    supersedes: tuple[str, ...] = ()
    minhash: tuple[int, ...] = ()  # empty: never a detected near-duplicate
    tags: tuple[str, ...] = ()  # the one tag set of every servable chunk (with a minhash)

    def to_json(self) -> str:
        out: dict = {"recipe": RECIPE}
        if self.version:
            out["version"] = self.version
        if self.supersedes:
            out["supersedes"] = list(self.supersedes)
        if self.minhash:
            out["minhash"] = base64.b64encode(struct.pack(f"<{len(self.minhash)}I", *self.minhash)).decode("ascii")
            out["tags"] = list(self.tags)
        return json.dumps(out, sort_keys=True, ensure_ascii=False)

    @classmethod
    def from_json(cls, text: str) -> "VersionInfo":
        """'' (a document written before versions existed) or a fingerprint of another recipe: no
        fingerprint (the document is re-prepared on the next ingest, its inputs having changed)."""
        if not text:
            return cls()
        data = json.loads(text)
        sig: tuple[int, ...] = ()
        if data.get("minhash") and data.get("recipe") == RECIPE:
            raw = base64.b64decode(data["minhash"])
            sig = struct.unpack(f"<{len(raw) // 4}I", raw)
        return cls(str(data.get("version") or ""), tuple(data.get("supersedes") or ()), sig,
                   tuple(data.get("tags") or ()))


def words(text: str) -> list[str]:
    """Normalised words: NFKC, case-folded, punctuation and spacing dropped (numbers kept)."""
    return _WORD.findall(unicodedata.normalize("NFKC", text).casefold())


def minhash(text: str) -> tuple[int, ...]:
    """The one-permutation MinHash of ``text``'s word shingles; () below ``MIN_WORDS`` words."""
    w = words(text)
    if len(w) < MIN_WORDS:
        return ()
    bins = [EMPTY] * BINS
    for i in range(len(w) - SHINGLE + 1):
        h = int.from_bytes(blake2b(" ".join(w[i : i + SHINGLE]).encode("utf-8"), digest_size=8).digest(), "little")
        b, v = h % BINS, (h // BINS) & 0xFFFFFFFE  # EMPTY is odd: never a value
        if v < bins[b]:
            bins[b] = v
    return tuple(bins)


def similarity(a: Sequence[int], b: Sequence[int]) -> float:
    """Estimated Jaccard similarity of two fingerprints: equal bins over bins filled in either."""
    if len(a) != BINS or len(b) != BINS:
        return 0.0
    filled = same = 0
    for x, y in zip(a, b):
        if x == EMPTY and y == EMPTY:
            continue
        filled += 1
        same += x == y
    return same / filled if filled else 0.0


def bands(sig: Sequence[int]) -> Iterable[tuple[int, tuple[int, ...]]]:
    """``(band number, values)`` of the bands that hold some shingle (empty bands match anything)."""
    for n in range(0, len(sig), BAND):
        part = tuple(sig[n : n + BAND])
        if any(v != EMPTY for v in part):
            yield n // BAND, part


def version_info(meta: dict, records: Iterable) -> VersionInfo:
    """A prepared document's ``VersionInfo``: front matter fields from ``meta``, the fingerprint from
    its records (``ChunkRecord``s) when every servable one carries the same tags."""
    fp = Fingerprint()
    for r in records:
        fp.add(r)
    return fp.info(meta)


class Fingerprint:
    """``version_info`` fed one record at a time, as a worker packs a big document's records: the
    servable texts are never joined into one string (with its NFKC and case-folded copies and a
    list of every word, that was 0.7 GB on a 60 MB-text DOCX)."""

    def __init__(self) -> None:
        self.tags: set[tuple[str, ...]] = set()
        self.hasher = MinHasher()

    def add(self, record) -> None:
        if record.quality == "ready" and record.acl:
            self.tags.add(tuple(record.acl))
            if len(self.tags) == 1:  # with two tag sets there is no fingerprint: nothing more to hash
                self.hasher.add(record.text)

    def info(self, meta: dict) -> VersionInfo:
        version = str(meta.get("version") or "").strip()
        supersedes = tuple(str(s) for s in (meta.get("supersedes") or ()))
        sig = self.hasher.value() if len(self.tags) == 1 else ()
        return VersionInfo(version, supersedes, sig, next(iter(self.tags)) if sig else ())


class MinHasher:
    """``minhash("\\n".join(texts))`` fed one text at a time. The same value: a newline ends a word,
    and NFKC and case folding never combine a character with a newline, so the words of the joined
    text are the words of each text in turn; the last ``SHINGLE - 1`` words carry over."""

    def __init__(self) -> None:
        self.bins = [EMPTY] * BINS
        self.count = 0
        self.tail: list[str] = []

    def add(self, text: str) -> None:
        new = words(text)
        if not new:
            return
        w = self.tail + new
        bins = self.bins
        # The shingles as ``minhash`` hashes them (" ".join of the words, UTF-8), each word encoded
        # once, each distinct shingle hashed once (a repeat cannot lower a bin's minimum): ~15% of
        # this loop on small files, where blake2b itself is the rest.
        e = [x.encode("utf-8") for x in w]
        from_bytes = int.from_bytes
        for shingle in set(map(b" ".join, zip(*(e[k:] for k in range(SHINGLE))))):
            h = from_bytes(blake2b(shingle, digest_size=8).digest(), "little")
            b, v = h % BINS, (h // BINS) & 0xFFFFFFFE  # EMPTY is odd: never a value
            if v < bins[b]:
                bins[b] = v
        self.count += len(new)
        self.tail = w[-(SHINGLE - 1):]

    def value(self) -> tuple[int, ...]:
        return tuple(self.bins) if self.count >= MIN_WORDS else ()


def version_key(label: str) -> tuple | None:
    """Natural order of version labels: "v1.10" > "1.9" > "1.2b"; None when there is none."""
    parts = re.findall(r"\d+|[^\W\d_]+", unicodedata.normalize("NFKC", label).casefold())
    if parts and parts[0] == "v" and len(parts) > 1 and parts[1].isdigit():
        parts = parts[1:]
    key = [(1, int(p), "") if p.isdigit() else (0, 0, p) for p in parts]
    while key and key[-1] == (1, 0, ""):
        key.pop()  # 2.0 == 2
    return tuple(key) if parts else None


def date_key(value: str) -> datetime | None:
    """An ``updated_at`` as an aware date-time (a date alone: its midnight UTC); None if unreadable."""
    text = (value or "").strip()
    if not text:
        return None
    try:
        when = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return when if when.tzinfo else when.replace(tzinfo=timezone.utc)


def order(a_version: str, a_updated: str, b_version: str, b_updated: str) -> int:
    """1 when a is the later version, -1 when b is, 0 when nothing says: ``version`` when both
    have one and they differ, else ``updated_at`` when both can be read and differ."""
    va, vb = version_key(a_version), version_key(b_version)
    if va is not None and vb is not None and va != vb:
        return 1 if va > vb else -1
    da, db = date_key(a_updated), date_key(b_updated)
    if da is not None and db is not None and da != db:
        return 1 if da > db else -1
    return 0
