"""A prepared document's records as one compact value to send from a worker to the caller.

Why: a worker hands its result back pickled; a tuple of record dicts unpickles into an object
graph several times the size of its text (a dict, a dozen strings, lists and tuples per record),
so a 60 MB document's records took the calling process to gigabytes although it never parsed the
file. A :class:`RecordPack` pickles as one bytes value (each record pickled on its own, and their
offsets) and unpickles as that one value; records are decoded one at a time as the caller reads
them, so a command that streams them (``chunkwise chunk --json``) holds one record beyond the pack.
"""
from __future__ import annotations

import pickle
from array import array
from collections.abc import Sequence
from typing import Iterable, Iterator


class RecordPack(Sequence):
    """An immutable sequence of record dicts (``ChunkRecord.to_dict()`` each), stored packed."""

    __slots__ = ("_blob", "_ends")

    def __init__(self, blob: bytes, ends: array) -> None:
        self._blob, self._ends = blob, ends

    @classmethod
    def of(cls, records: Iterable[dict]) -> RecordPack:
        parts, ends, at = [], array("Q"), 0
        for record in records:
            data = pickle.dumps(record, protocol=pickle.HIGHEST_PROTOCOL)
            parts.append(data)
            at += len(data)
            ends.append(at)
        return cls(b"".join(parts), ends)

    def __reduce__(self):
        return (RecordPack, (self._blob, self._ends))

    def __len__(self) -> int:
        return len(self._ends)

    def _one(self, i: int) -> dict:
        start = self._ends[i - 1] if i else 0
        return pickle.loads(memoryview(self._blob)[start:self._ends[i]])

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self._one(j) for j in range(*i.indices(len(self)))]
        if i < 0:
            i += len(self)
        if not 0 <= i < len(self):
            raise IndexError("record index out of range")
        return self._one(i)

    def __iter__(self) -> Iterator[dict]:
        for i in range(len(self)):
            yield self._one(i)

    def __eq__(self, other) -> bool:
        return isinstance(other, Sequence) and len(self) == len(other) and all(a == b for a, b in zip(self, other))

    __hash__ = None

    @property
    def nbytes(self) -> int:
        """What the pack holds in memory: its bytes and offsets."""
        return len(self._blob) + self._ends.itemsize * len(self._ends)
