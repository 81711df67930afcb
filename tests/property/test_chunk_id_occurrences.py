"""``ids.chunk_ids``: the one place occurrences are counted (records, api, evaluation)."""
from hypothesis import given, strategies as st

from chunkwise import ids
from chunkwise.api import chunk_ids

texts = st.lists(st.sampled_from(["alpha", "alpha ", " alpha", "beta", "gamma delta", "gamma  delta", ""]), max_size=12)


@given(texts, st.text(min_size=1, max_size=8))
def test_ids_are_unique_per_document_and_depend_only_on_what_comes_before(chunks, doc):
    got = ids.chunk_ids(doc, chunks)
    assert len({cid for cid, _ in got}) == len(chunks)  # a repeated passage is another record
    for n in range(len(chunks) + 1):
        assert ids.chunk_ids(doc, chunks[:n]) == got[:n]  # appending chunks never renames earlier ones
    hashes = [ids.hash_text(t) for t in chunks]
    for i, (cid, chash) in enumerate(got):
        assert chash == hashes[i]
        assert cid == ids.chunk_id(doc, chash, hashes[:i].count(chash))  # the n-th same text: occurrence n


@given(texts)
def test_the_api_and_the_records_agree(chunks):
    """The ids the api hands integrations are those ingest stores (both come from ids.chunk_ids)."""
    from types import SimpleNamespace

    assert chunk_ids("d", [SimpleNamespace(text=t) for t in chunks]) == [c for c, _ in ids.chunk_ids("d", chunks)]
