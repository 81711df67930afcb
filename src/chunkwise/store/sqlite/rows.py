"""The chunks row of a record, as the SQLite store writes it: the analysed lexical fields and the
access-tag columns (kept apart so the store's module stays about transactions and SQL)."""
from __future__ import annotations

import json
import struct
import sys
from array import array
from functools import lru_cache
from typing import Sequence

from chunkwise.access import AccessTags
from chunkwise.errors import ChunkwiseError
from chunkwise.lexical import LexicalFields
from chunkwise.store.writing import TEXT_COLUMNS


def chunk_row(r: dict, lexical: tuple[str, str, str] | None = None) -> tuple:
    """The chunks row of record ``r``; ``lexical``: its analysed fields when a worker made them."""
    # The texts live in their own columns (FTS indexes their analysed fields); the JSON holds the rest.
    meta = {k: v for k, v in r.items() if k not in TEXT_COLUMNS}
    column, index = _acl_columns(r["acl"], r["quality"], r["chunk_id"])
    return (r["chunk_id"], r["doc_id"], r["chunk_index"], json.dumps(meta, ensure_ascii=False, sort_keys=True),
            r["text"], r["embed_text"], r["embed_model"], r["embed_key"], column, r["quality"], r["size"],
            index, *(lexical or LexicalFields.of_record(r).values()))


def vector_blob(vec: Sequence[float]) -> bytes:
    """A vector as the stored little-endian float32 blob; a worker's ``array("f")`` (its machine's
    float32) is already that on a little-endian machine: its bytes, no float is touched."""
    if isinstance(vec, array) and vec.typecode == "f" and _LITTLE:
        return vec.tobytes()
    return struct.pack(f"<{len(vec)}f", *vec)


_LITTLE = sys.byteorder == "little"


class SQLiteRows:
    """The SQLite store's ``row_codec``: a record to its chunks row (``chunk_row``, run by a worker
    for the single writer: ``pipeline.pack.EncodedRecords``) and a row back to the record the
    store reads (``SQLiteStore.records_of``: the JSON part with the two texts)."""

    encode = staticmethod(chunk_row)

    @staticmethod
    def decode(row: tuple) -> dict:
        return {**json.loads(row[3]), "text": row[4], "embed_text": row[5]}


def _acl_columns(acl, quality: str, chunk_id: str) -> tuple[str, str]:
    """(acl column, acl FTS tokens) of a record: nearly every chunk of a run shares its tags, so the
    parse is remembered per (tags, quality); a bad tag still fails for its chunk."""
    try:
        return _acl_memo(acl if isinstance(acl, str) else tuple(acl), quality)
    except (TypeError, ChunkwiseError):  # unhashable or invalid: parsed again, to fail with this chunk's name
        tags = AccessTags.parse(acl, f"chunk {chunk_id}")
        return tags.column(), tags.index(quality)


@lru_cache(maxsize=1024)
def _acl_memo(acl: str | tuple, quality: str) -> tuple[str, str]:
    tags = AccessTags.parse(acl if isinstance(acl, str) else list(acl), "chunk")
    return tags.column(), tags.index(quality)


def migrate_lexical(record: str, text: str, field: str) -> str:
    """Schema 7: one analysed field of a stored chunk (``LexicalFields``), from its record and its
    embedded text."""
    if field == "body":
        return LexicalFields.of(text or "").body
    rec = json.loads(record or "{}")
    rec = rec if isinstance(rec, dict) else {}
    return getattr(LexicalFields.of_record({**rec, "text": ""}), field)
