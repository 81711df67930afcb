"""``RecordPack``: what a worker sends back is one bytes value that reads back as the same records."""
import pickle

from hypothesis import given, strategies as st

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


def test_ingest_hands_the_writer_packed_records(tmp_path, monkeypatch):
    """Ingest's main process receives each document's records packed, as the other doors do (issue
    25 item 9: a 60 MB document's records unpickled as a graph took the main process to gigabytes),
    and stores exactly what an unpacked run stores."""
    from chunkwise.config import ChunkConfig
    from chunkwise.embed import make_embedder
    from chunkwise.pipeline import ingest
    from chunkwise.pipeline.write import WriteStage
    from chunkwise.store import open_store

    docs = tmp_path / "docs"
    docs.mkdir()
    for i in range(3):
        (docs / f"d{i}.md").write_text(f"# Doc {i}\n\n" + "word " * 400 + "\n\n## More\n\ntext\n", encoding="utf-8")
    seen = []
    write = WriteStage.write

    def spy(self, doc, *args, **kwargs):
        seen.append(type(doc.records))
        return write(self, doc, *args, **kwargs)

    monkeypatch.setattr(WriteStage, "write", spy)
    ingest([docs], tmp_path / "s.db", ChunkConfig(size=64), embedder=make_embedder("hashing"), workers=1)
    assert seen == [RecordPack] * 3
    import importlib

    monkeypatch.setattr(importlib.import_module("chunkwise.pipeline.ingest"), "PackingPreparer", lambda p: p)
    ingest([docs], tmp_path / "plain.db", ChunkConfig(size=64), embedder=make_embedder("hashing"), workers=1)
    assert seen[3:] == [tuple] * 3  # the unpacked run, for comparison

    def stored(db):
        with open_store(str(db)) as store:
            return sorted((c.record["chunk_id"], c.record["text"], c.acl, c.quality) for c in store.iter_chunks())

    assert stored(tmp_path / "s.db") == stored(tmp_path / "plain.db") != []
