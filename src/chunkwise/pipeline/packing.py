"""The one packing step of every path that prepares in a worker (ingest and the doors): a
``Preparer`` whose result crosses back as packs (``pipeline.pack``), or as the target store's rows.

Why a module of its own: it runs the ``Preparer`` (``pipeline.prepare``), which itself writes its
records into packs as it makes them; the packs (``pipeline.pack``) import neither.
"""
from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from chunkwise.pipeline.pack import EncodedRecords, KeyedPack, RecordPack

if TYPE_CHECKING:
    from chunkwise.pipeline.prepare import Preparer


class PackingPreparer:
    """``Preparer`` whose ``Prepared`` comes back packed: records, lexical fields and vectors one
    bytes value each through the pipe instead of object graphs several times the text's size, a
    big one spooled to a file (``RecordPack.spooled``). The one packing step of every path that
    prepares in a worker: ingest (the writer, ``pipeline.write``, decodes and writes a document a
    batch of records at a time) and the doors (``pipeline.doors.prepare_paths``: their records
    are decoded one at a time as they are read; they have no lexical fields or vectors to pack).

    ``codec``: the target store's ``row_codec`` (ingest into a store that has one): the records are
    sent as that store's rows (``EncodedRecords``, their lexical fields inside), so the writer only
    executes its statements. A record the codec refuses (a tag outside the grammar) sends the
    document as records: the writer fails it with the message it always gave.

    ``encode``: a door's own form of each record (a picklable function of a ``ChunkRecord``; ``chunk
    --json``: its output line, ``cli.record_lines``), packed instead of the record's dict."""

    def __init__(self, preparer: Preparer, codec=None, encode=None) -> None:
        self.preparer, self.codec, self.encode = preparer, codec, encode

    def warm_up(self) -> None:
        self.preparer.warm_up()

    def __call__(self, task):
        from chunkwise.pipeline.prepare import Prepared

        # Records (or the store's rows), lexical fields and vectors written as they are made.
        codec = self.codec if self.encode is None else None
        out = self.preparer(task, packed=self.encode or True, codec=codec)
        if not isinstance(out, Prepared):
            return out
        if isinstance(out.records, EncodedRecords):
            return replace(out, records=out.records.spooled(), lexical={}, vectors=_spooled(out.vectors, KeyedPack))
        return replace(out, records=_spooled(out.records, RecordPack), lexical=_spooled(out.lexical, KeyedPack),
                       vectors=_spooled(out.vectors, KeyedPack))


def _spooled(value, kind):
    return (value if isinstance(value, kind) else kind.of(value)).spooled()
