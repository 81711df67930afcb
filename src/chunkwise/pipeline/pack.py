"""A prepared document's records as one compact value to send from a worker to the caller.

Why: a worker hands its result back pickled; a tuple of record dicts unpickles into an object
graph several times the size of its text (a dict, a dozen strings, lists and tuples per record),
so a 60 MB document's records took the calling process to gigabytes although it never parsed the
file. A :class:`RecordPack` pickles as one bytes value (each record pickled on its own, and their
offsets) and unpickles as that one value; records are decoded one at a time as the caller reads
them, so a command that streams them (``chunkwise chunk --json``) holds one record beyond the pack.

Ingest goes one step further (issue 25, item 9): a pack over ``SPOOL_BYTES`` is *spooled*, written
by the worker to a file it names in what it sends back; the receiving process opens the file,
unlinks it at once (nothing is left behind whatever happens next) and reads each record from it
when asked. So ingest's main process holds a big document's offsets and ids, never its text,
lexical fields or vectors, and writes it a batch at a time (``pipeline.write``).
"""
from __future__ import annotations

import io
import os
import pickle
import tempfile
from array import array
from collections.abc import Mapping, Sequence
from typing import Iterable, Iterator


SPOOL_BYTES = 16 << 20  # a pack bigger than this crosses from a worker as a file (``spooled``)


class Spool:
    """The bytes of a spooled pack: an open file already unlinked, read a slice at a time."""

    __slots__ = ("_file", "size")

    def __init__(self, path: str) -> None:
        self._file = open(path, "rb")  # noqa: SIM115 — closed when the pack is collected
        try:
            os.unlink(path)
        except OSError:
            pass
        self.size = os.fstat(self._file.fileno()).st_size

    def __getitem__(self, span: slice) -> bytes:
        return os.pread(self._file.fileno(), span.stop - span.start, span.start)

    def __len__(self) -> int:
        return self.size


def _unspool(path: str, ends: array) -> RecordPack:
    return RecordPack(Spool(path), ends)


class RecordPack(Sequence):
    """An immutable sequence of record dicts (``ChunkRecord.to_dict()`` each), stored packed: in
    bytes, or in a spooled file (``spooled``)."""

    __slots__ = ("_blob", "_ends", "_path")

    def __init__(self, blob, ends: array) -> None:
        self._blob, self._ends, self._path = blob, ends, None

    def spooled(self, directory: str | None = None) -> RecordPack:
        """This pack, to pickle as the name of a file holding its bytes (when it is over
        ``SPOOL_BYTES``; else itself). The process that unpickles it opens and unlinks the file."""
        if isinstance(self._blob, Spool) or len(self._blob) <= SPOOL_BYTES:
            return self
        fd, path = tempfile.mkstemp(prefix="chunkwise-pack-", dir=directory)
        with os.fdopen(fd, "wb") as f:
            f.write(self._blob)
        out = RecordPack(b"", self._ends)
        out._path = path
        return out

    @classmethod
    def writer(cls, directory: str | None = None) -> PackWriter:
        """A pack written one value at a time, spooled to a file as soon as it outgrows
        ``SPOOL_BYTES`` (see :class:`PackWriter`)."""
        return PackWriter(directory)

    @classmethod
    def of(cls, records: Iterable[dict]) -> RecordPack:
        out, ends = io.BytesIO(), array("Q")  # written as it goes: no list of parts joined into a copy
        for record in records:
            out.write(pickle.dumps(record, protocol=pickle.HIGHEST_PROTOCOL))
            ends.append(out.tell())
        return cls(out.getvalue(), ends)

    def __reduce__(self):
        if self._path is not None:
            return (_unspool, (self._path, self._ends))
        if isinstance(self._blob, Spool):
            return (RecordPack, (self._blob[0:len(self._blob)], self._ends))
        return (RecordPack, (self._blob, self._ends))

    def __len__(self) -> int:
        return len(self._ends)

    def _one(self, i: int) -> dict:
        start = self._ends[i - 1] if i else 0
        if isinstance(self._blob, Spool):
            return pickle.loads(self._blob[start:self._ends[i]])
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
        """What the pack holds in memory: its bytes (none when spooled) and offsets."""
        held = 0 if isinstance(self._blob, Spool) else len(self._blob)
        return held + self._ends.itemsize * len(self._ends)


class PackWriter:
    """Builds a pack one value at a time, as a worker makes them (issue 25, item 9): in memory up to
    ``SPOOL_BYTES``, then straight into the file it will cross as, so a big document's records,
    lexical fields or vectors never exist all at once in the worker, neither as objects nor as
    one pack's bytes (with the copy ``getvalue`` would make). ``done()`` gives a pack that pickles
    as the file's name (``RecordPack.spooled``); ``discard()`` removes the file of one not sent."""

    __slots__ = ("_buf", "_file", "_path", "_ends", "_size", "_dir")

    def __init__(self, directory: str | None = None) -> None:
        self._buf: io.BytesIO | None = io.BytesIO()
        self._file = None
        self._path: str | None = None
        self._ends = array("Q")
        self._size = 0
        self._dir = directory

    def add(self, value) -> None:
        data = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
        if self._file is None and self._size + len(data) > SPOOL_BYTES:
            fd, self._path = tempfile.mkstemp(prefix="chunkwise-pack-", dir=self._dir)
            self._file = os.fdopen(fd, "wb")
            self._file.write(self._buf.getbuffer())
            self._buf = None
        (self._buf if self._file is None else self._file).write(data)
        self._size += len(data)
        self._ends.append(self._size)

    def done(self) -> RecordPack:
        if self._file is None:
            return RecordPack(self._buf.getvalue(), self._ends)
        self._file.close()
        out = RecordPack(b"", self._ends)
        out._path = self._path
        return out

    def discard(self) -> None:
        if self._file is not None:
            self._file.close()
            try:
                os.unlink(self._path)
            except OSError:
                pass
        self._buf, self._file, self._ends, self._size = io.BytesIO(), None, array("Q"), 0


class KeyedPack(Mapping):
    """A mapping (``Prepared.lexical``: chunk_id -> analysed (body, title, heading); ``Prepared.vectors``:
    embed_key -> float32 array) stored packed: as a dict they are object graphs the size of the text
    again, or of every vector, that unpickled in ingest's main process whole."""

    __slots__ = ("_keys", "_pack", "_at")

    def __init__(self, keys: tuple[str, ...], pack: RecordPack) -> None:
        self._keys, self._pack, self._at = keys, pack, None

    @classmethod
    def of(cls, mapping: Mapping) -> KeyedPack:
        return cls(tuple(mapping), RecordPack.of(mapping.values()))

    def spooled(self, directory: str | None = None) -> KeyedPack:
        return KeyedPack(self._keys, self._pack.spooled(directory))

    def __reduce__(self):
        return (KeyedPack, (self._keys, self._pack))

    def __len__(self) -> int:
        return len(self._keys)

    def __iter__(self) -> Iterator[str]:
        return iter(self._keys)

    def __contains__(self, key) -> bool:
        return key in self._index()

    def _index(self) -> dict:
        if self._at is None:
            self._at = {k: i for i, k in enumerate(self._keys)}
        return self._at

    def __getitem__(self, key):
        return self._pack[self._index()[key]]


LexicalPack = KeyedPack  # the name the lexical fields are packed under


class EncodedRecords(Sequence):
    """A document's records encoded by a worker as the target store's rows (``codec``: the store's
    ``row_codec``, e.g. ``store.sqlite.rows.SQLiteRows``), packed; each reads back as its record
    dict (``codec.decode``: exactly what the store would read back), and ``chunk_ids`` /
    ``embed_keys`` (one per record) need no decoding at all.

    Why: for a small document the single writer's cost was per record work — unpickling a dict of
    thirty fields, the set difference, JSON encoding, the access-tag columns, looking up the
    lexical fields and vectors — done by the one main process for every worker. A new document's
    rows go from here to ``executemany`` as they came (``pipeline.write.DocumentPlan``)."""

    __slots__ = ("rows", "codec", "chunk_ids", "embed_keys")

    def __init__(self, rows: RecordPack, codec, chunk_ids: tuple[str, ...], embed_keys: tuple[str, ...]) -> None:
        self.rows, self.codec, self.chunk_ids, self.embed_keys = rows, codec, chunk_ids, embed_keys

    @classmethod
    def of(cls, records: Sequence[dict], lexical: Mapping, codec) -> EncodedRecords:
        """One pass over ``records`` (a pack decodes each record on every read), the rows written
        as made (``PackWriter``: a big document's rows spool to a file, never all in memory)."""
        rows, ids, keys = RecordPack.writer(), [], []
        try:
            for r in records:
                rows.add(codec.encode(r, lexical.get(r["chunk_id"])))
                ids.append(r["chunk_id"])
                keys.append(r["embed_key"])
        except BaseException:
            rows.discard()
            raise
        return cls(rows.done(), codec, tuple(ids), tuple(keys))

    def spooled(self, directory: str | None = None) -> EncodedRecords:
        return EncodedRecords(self.rows.spooled(directory), self.codec, self.chunk_ids, self.embed_keys)

    def __reduce__(self):
        return (EncodedRecords, (self.rows, self.codec, self.chunk_ids, self.embed_keys))

    def __len__(self) -> int:
        return len(self.rows)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self.codec.decode(row) for row in self.rows[i]]
        return self.codec.decode(self.rows[i])

    def __iter__(self) -> Iterator[dict]:
        return (self.codec.decode(row) for row in self.rows)

    __hash__ = None

    @property
    def nbytes(self) -> int:
        return self.rows.nbytes
