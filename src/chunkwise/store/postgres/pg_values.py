"""Values read back from PostgreSQL as chunkwise's types: records, vectors, tags, a caller's groups,
the pgvector version."""
from __future__ import annotations

import json

from chunkwise.access import AccessTags, caller_groups


def _record(value) -> dict:
    """A chunk's record: jsonb (a dict) since migration 7, JSON text before."""
    return value if isinstance(value, dict) else json.loads(value)


def as_array(value):
    """A pgvector value (numpy array or ``pgvector.Vector``, by driver version) as float32 numpy."""
    import numpy as np

    if hasattr(value, "to_numpy"):
        value = value.to_numpy()
    return np.asarray(value, dtype=np.float32)


def _tags(acl) -> tuple[str, ...]:
    """The ``acl`` array as canonical tags; anything not canonical reads as none (fail closed)."""
    return AccessTags.from_column(json.dumps(list(acl or ()), ensure_ascii=False)).tags


def _groups(groups) -> list[str]:
    return list(caller_groups(groups).tags)


def pgvector_at_least(version: str, wanted: tuple[int, ...]) -> bool:
    parts = []
    for piece in version.split("."):
        digits = "".join(ch for ch in piece if ch.isdigit())
        parts.append(int(digits or 0))
    return tuple(parts) >= wanted
