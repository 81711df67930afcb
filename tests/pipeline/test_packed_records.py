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
