"""Rows encoded by the workers (``pipeline.pack.EncodedRecords``, ``store.sqlite.rows.SQLiteRows``):
ingest's single writer inserts a new document's chunks rows as a worker made them, and decodes
records only to diff against stored ones. The store must be exactly what the writer encoding every
record itself gives: first ingest, and any sequence of edits (kept, changed, added, removed chunks)."""
from __future__ import annotations

import pickle

from hypothesis import HealthCheck, given, settings, strategies as st
from reingest import NOW, contents, counted, edit, paragraphs, same_at_every_step, sections

from chunkwise.access import AccessTags
from chunkwise.config import ChunkConfig
from chunkwise.embed import make_embedder
from chunkwise.pipeline import ingest
from chunkwise.pipeline.executors import InlineExecutor
from chunkwise.pipeline.pack import EncodedRecords
from chunkwise.pipeline.prepare import Preparer, PrepareSettings, PrepareTask
from chunkwise.sandbox import PoolExecutor
from chunkwise.store.sqlite.rows import SQLiteRows, chunk_row

CONFIG = ChunkConfig(strategy="structure", size=32)


class PickledInline(PoolExecutor):
    """A pool of no process: each result crosses a pickle round trip, as from a worker (the packing
    and encoding run exactly as in one), without a process per Hypothesis example."""

    def __init__(self) -> None:
        super().__init__(1, lambda item, failure: None)

    def map(self, fn, items):
        return (pickle.loads(pickle.dumps(fn(item))) for item in items)


def run(docs, db, executor, **kw):
    return ingest([docs], db, CONFIG, embedder=make_embedder("hashing"), acl=("staff",), now=NOW,
                  executor=executor, **kw)


@settings(max_examples=25, deadline=None)
@given(words=paragraphs, acl=st.sampled_from(["staff", "sre, finance", ""]))
def test_a_record_decodes_from_its_row_as_the_store_reads_it_back(tmp_path_factory, words, acl):
    text = ("---\nacl: [" + acl + "]\n---\n" if acl else "") + sections(words)
    path = tmp_path_factory.mktemp("rec") / "guide.md"
    path.write_text(text, encoding="utf-8")
    prepared = Preparer(PrepareSettings(CONFIG, "hashing-384@1", AccessTags.parse(["staff"], "acl")))(
        PrepareTask(str(path), "guide.md", "guide.md", "text/markdown", "0" * 64, len(text)))
    records = list(prepared.records)
    packed = pickle.loads(pickle.dumps(EncodedRecords.of(records, prepared.lexical, SQLiteRows)))
    assert len(packed) == len(records) > 0
    assert packed.chunk_ids == tuple(r["chunk_id"] for r in records)
    assert packed.embed_keys == tuple(r["embed_key"] for r in records)
    # the row is the one the store would make, and reads back as the record (a JSON round trip)
    assert list(packed.rows) == [chunk_row(r) for r in records]
    assert list(packed) == [SQLiteRows.decode(chunk_row(r)) for r in records] == records
    assert packed[1:3] == records[1:3]


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(start=paragraphs, ops=st.lists(st.lists(edit, min_size=1, max_size=4), min_size=1, max_size=4),
       batch=st.sampled_from([2, 5, 10**9]))
def test_worker_encoded_rows_store_what_the_writer_encodes(tmp_path_factory, monkeypatch, start, ops, batch):
    """Random re-ingest sequences: rows encoded where the document was prepared (a worker) give the
    store and the counts the writer gives encoding each record itself, step by step, at any batch size."""
    from chunkwise.pipeline.write import WriteStage

    monkeypatch.setattr(WriteStage, "BATCH_RECORDS", batch)
    tmp = tmp_path_factory.mktemp("seq")
    docs = tmp / "docs"
    docs.mkdir()
    (docs / "other.md").write_text(sections(["steady", "state"]), encoding="utf-8")
    same_at_every_step(docs, start, ops, {"rows": lambda docs, db: run(docs, db, PickledInline()),
                                          "records": lambda docs, db: run(docs, db, InlineExecutor())})


def test_two_real_workers_send_rows_the_writer_inserts_unencoded(tmp_path, monkeypatch):
    """With worker processes, a first ingest encodes no record in this process (every row came
    encoded), and the store equals the in-process one; an edit after it still diffs correctly."""
    import chunkwise.store.sqlite.sqlite as sqlite_module

    docs = tmp_path / "docs"
    docs.mkdir()
    for i in range(12):
        (docs / f"d{i}.md").write_text(sections([f"w{i}", "ledger", "audit", f"v{i % 3}"]), encoding="utf-8")
    calls = []
    real = sqlite_module.chunk_row
    monkeypatch.setattr(sqlite_module, "chunk_row", lambda *a: calls.append(1) or real(*a))
    first = ingest([docs], tmp_path / "two.db", CONFIG, embedder=make_embedder("hashing"), acl=("staff",),
                   now=NOW, workers=2)
    assert not first.errors and first.added > 12 and not calls
    inline = run(docs, tmp_path / "inline.db", InlineExecutor())
    assert calls and counted(first) == counted(inline)
    assert contents(tmp_path / "two.db") == contents(tmp_path / "inline.db")
    (docs / "d3.md").write_text(sections(["w3", "changed", "audit", "new", "more"]), encoding="utf-8")
    again = ingest([docs], tmp_path / "two.db", CONFIG, embedder=make_embedder("hashing"), acl=("staff",),
                   now=NOW, workers=2)
    inline = run(docs, tmp_path / "inline.db", InlineExecutor())
    assert counted(again) == counted(inline) and again.added and again.removed
    assert contents(tmp_path / "two.db") == contents(tmp_path / "inline.db")
