"""``RecordPack``: what a worker sends back is one bytes value that reads back as the same records."""
import pickle

from hypothesis import given, settings, strategies as st

from chunkwise.pipeline.pack import RecordPack

values = st.one_of(st.none(), st.integers(), st.text(), st.lists(st.text(max_size=5), max_size=3))
records = st.lists(st.dictionaries(st.text(max_size=8), values, max_size=6), max_size=12)


@given(records)
def test_a_pack_reads_back_as_its_records(rs):
    pack = pickle.loads(pickle.dumps(RecordPack.of(rs)))
    assert len(pack) == len(rs) and list(pack) == rs and pack == rs
    assert [pack[i] for i in range(-len(rs), len(rs))] == rs + rs and pack[1:3] == rs[1:3]


def _peak(data: bytes) -> tuple[int, object]:
    import tracemalloc

    tracemalloc.start()
    try:
        value = pickle.loads(data)
        return tracemalloc.get_traced_memory()[1], value
    finally:
        tracemalloc.stop()


def test_a_pack_unpickles_as_one_bytes_value_not_a_graph():
    from chunkwise import api

    text = "\n\n".join(f"## Part {i}\n\nThe ledger entry {i} is booked by the finance team." for i in range(400))
    rs = [r.to_dict() for r in api.chunk_text(text, size=32)]  # real records: ~30 fields each
    graph, _ = _peak(pickle.dumps(rs))
    packed, pack = _peak(pickle.dumps(RecordPack.of(rs)))
    assert packed < graph / 2, (packed, graph)  # the dicts, lists and small strings are never built
    assert packed < pack.nbytes * 1.5 and list(pack) == rs


lexical = st.dictionaries(st.text(max_size=6), st.tuples(st.text(max_size=8), st.text(max_size=4), st.text(max_size=4)),
                          max_size=12)


@settings(deadline=None)
@given(lexical)
def test_a_lexical_pack_reads_back_as_its_mapping(lex):
    from chunkwise.pipeline.pack import LexicalPack

    pack = pickle.loads(pickle.dumps(LexicalPack.of(lex)))
    assert dict(pack) == lex and list(pack) == list(lex) and len(pack) == len(lex)
    assert all(k in pack and pack[k] == v for k, v in lex.items()) and "\x00absent" not in pack


def test_a_big_pack_crosses_as_a_file_that_the_receiver_unlinks(tmp_path, monkeypatch):
    """Over ``SPOOL_BYTES`` a pack pickles as a file's name; unpickling opens and unlinks the file
    and reads records from it (nothing of it is held in memory, nothing is left on disk)."""
    from array import array

    from chunkwise.pipeline import pack as packing

    monkeypatch.setattr(packing, "SPOOL_BYTES", 1000)
    rs = [{"chunk_id": f"c{i}", "text": f"record {i} " * 20} for i in range(50)]
    data = pickle.dumps(RecordPack.of(rs).spooled(str(tmp_path)))
    assert len(data) < 2000 and len(list(tmp_path.iterdir())) == 1
    got = pickle.loads(data)
    assert list(tmp_path.iterdir()) == [] and got.nbytes < 1000
    assert list(got) == rs and got[-1] == rs[-1] and pickle.loads(pickle.dumps(got)) == rs
    vectors = {f"k{i}": array("f", [float(i)] * 64) for i in range(40)}
    keyed = pickle.loads(pickle.dumps(packing.KeyedPack.of(vectors).spooled(str(tmp_path))))
    assert list(tmp_path.iterdir()) == [] and dict(keyed) == vectors and "k3" in keyed and "k99" not in keyed
    small = RecordPack.of(rs[:1])
    assert small.spooled(str(tmp_path)) is small  # under the threshold: bytes, no file


values_st = st.lists(st.one_of(st.text(max_size=30), st.dictionaries(st.text(max_size=4), st.integers(), max_size=3)),
                     max_size=40)


@settings(deadline=None, max_examples=40)
@given(values_st, st.integers(min_value=1, max_value=400))
def test_a_pack_written_one_value_at_a_time_reads_back_the_same_spooled_or_not(vs, threshold):
    """``PackWriter`` spools to a file past ``SPOOL_BYTES`` mid-way; what crosses reads back as the
    values, in order, and nothing is left on disk once it is received."""
    import tempfile
    from pathlib import Path

    from chunkwise.pipeline import pack as packing

    old = packing.SPOOL_BYTES
    packing.SPOOL_BYTES = threshold
    try:
        with tempfile.TemporaryDirectory() as tmp:
            w = RecordPack.writer(tmp)
            for v in vs:
                w.add(v)
            got = pickle.loads(pickle.dumps(w.done().spooled(tmp)))
            assert list(got) == vs and len(got) == len(vs) and list(Path(tmp).iterdir()) == []
            w2 = RecordPack.writer(tmp)
            for v in vs:
                w2.add(v)
            w2.discard()
            assert list(Path(tmp).iterdir()) == []
    finally:
        packing.SPOOL_BYTES = old


def test_a_packed_document_is_the_same_records_fields_and_vectors(tmp_path, monkeypatch):
    """The worker's path (records, lexical fields and vectors written into packs as they are made,
    spooled mid-way) gives what the unpacked path gives, in the same order."""
    from chunkwise.access import AccessTags
    from chunkwise.config import ChunkConfig
    from chunkwise.embed.hashing import HashingEmbedder
    from chunkwise.pipeline import pack as packing
    from chunkwise.pipeline.prepare import Preparer, PrepareSettings, PrepareTask

    monkeypatch.setattr(packing, "SPOOL_BYTES", 5000)
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    import tempfile
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    body = "\n\n".join(f"## Part {i}\n\n" + f"The ledger entry {i} is booked by the finance team. " * 3
                         + "\n\n## Repeated\n\nThe same words each time." for i in range(300))
    path = tmp_path / "doc.md"
    path.write_text("# Ledger\n\n" + body, encoding="utf-8")
    emb = HashingEmbedder()
    prep = Preparer(PrepareSettings(ChunkConfig(size=32), emb.name, AccessTags.parse(["a"], "acl"), {}, "now",
                                    None, emb))
    task = PrepareTask(str(path), "doc.md", "doc.md", "text/markdown", "0" * 64, path.stat().st_size)
    plain = prep(task)
    from chunkwise.pipeline.packing import PackingPreparer

    packed = pickle.loads(pickle.dumps(PackingPreparer(prep)(task)))
    assert [p.name for p in tmp_path.iterdir()] == ["doc.md"]  # spooled files were received and unlinked
    assert len(plain.records) > 300 and list(packed.records) == list(plain.records)
    assert list(packed.lexical) == list(plain.lexical) and dict(packed.lexical) == plain.lexical
    assert list(packed.vectors) == list(plain.vectors) and dict(packed.vectors) == plain.vectors
    assert len(plain.vectors) < len(plain.records)  # the repeated sections share a vector


def _spooling_ledger(tmp_path, monkeypatch):
    """(preparer with hashing vectors, task) of a 200-section Markdown file whose packs spool to
    files under ``tmp_path`` (``SPOOL_BYTES`` lowered)."""
    from chunkwise.access import AccessTags
    from chunkwise.config import ChunkConfig
    from chunkwise.embed.hashing import HashingEmbedder
    from chunkwise.pipeline import pack as packs
    from chunkwise.pipeline.prepare import Preparer, PrepareSettings, PrepareTask

    monkeypatch.setattr(packs, "SPOOL_BYTES", 5000)
    import tempfile
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    path = tmp_path / "doc.md"
    path.write_text("# Ledger\n\n" + "\n\n".join(f"## Part {i}\n\nEntry {i} is booked by finance. " * 2
                                                 for i in range(200)), encoding="utf-8")
    emb = HashingEmbedder()
    prep = Preparer(PrepareSettings(ChunkConfig(size=32), emb.name, AccessTags.parse(["a"], "acl"), {}, "now",
                                    None, emb))
    task = PrepareTask(str(path), "doc.md", "doc.md", "text/markdown", "0" * 64, path.stat().st_size)
    return prep, task


def test_rows_made_from_spooled_packs_are_the_records_and_leave_no_file(tmp_path, monkeypatch):
    """Ingest into SQLite: the worker's rows, made as the records are (``prepare._packed``) and
    spooled because they outgrew the threshold, decode to the plain records, and once received no
    spooled file is left (no records' or lexical fields' pack is spooled beside them)."""
    from chunkwise.pipeline import pack as packs
    from chunkwise.pipeline.packing import PackingPreparer
    from chunkwise.store.sqlite.rows import SQLiteRows

    prep, task = _spooling_ledger(tmp_path, monkeypatch)
    plain = prep(task)
    sent = PackingPreparer(prep, SQLiteRows)(task)
    assert isinstance(sent.records, packs.EncodedRecords) and sent.records.rows._path is not None  # spooled
    waiting = sorted(p.name for p in tmp_path.iterdir() if p.name != "doc.md")
    assert waiting and all(n.startswith("chunkwise-pack-") for n in waiting)  # the rows (and vectors) only:
    assert len(waiting) <= 2  # the records' and lexical fields' spooled packs were removed
    got = pickle.loads(pickle.dumps(sent))
    assert [p.name for p in tmp_path.iterdir()] == ["doc.md"]
    assert got.records.chunk_ids == tuple(r["chunk_id"] for r in plain.records)
    assert list(got.records) == [SQLiteRows.decode(SQLiteRows.encode(r, plain.lexical.get(r["chunk_id"])))
                                 for r in plain.records]
    assert dict(got.vectors) == plain.vectors


def test_a_record_the_codec_refuses_sends_the_document_as_records(tmp_path, monkeypatch):
    """The worker makes the store's rows as it makes the records (``prepare._packed``); when the codec
    refuses one mid-document, the document crosses as records, lexical fields and vectors equal to the
    plain preparer's (the writer then fails it as before), and the rows spooled so far are removed."""
    from chunkwise.errors import AccessTagError
    from chunkwise.pipeline import pack as packs
    from chunkwise.pipeline.packing import PackingPreparer
    from chunkwise.store.sqlite.rows import SQLiteRows, chunk_row

    class Refusing(SQLiteRows):
        @staticmethod
        def encode(r, lexical=None):
            if r["chunk_index"] == 150:
                raise AccessTagError("chunk: a tag outside the grammar")
            return chunk_row(r, lexical)

    prep, task = _spooling_ledger(tmp_path, monkeypatch)
    plain = prep(task)
    assert len(plain.records) > 150
    kept = PackingPreparer(prep, SQLiteRows)(task)
    assert isinstance(kept.records, packs.EncodedRecords)
    pickle.loads(pickle.dumps(kept))  # received: its spooled files unlinked
    sent = PackingPreparer(prep, Refusing)(task)
    assert not isinstance(sent.records, packs.EncodedRecords)
    got = pickle.loads(pickle.dumps(sent))
    assert [p.name for p in tmp_path.iterdir()] == ["doc.md"]  # the refused rows' spooled pack is gone too
    assert list(got.records) == list(plain.records)
    assert dict(got.lexical) == plain.lexical and dict(got.vectors) == plain.vectors
    assert got.versioning == plain.versioning
