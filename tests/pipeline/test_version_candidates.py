"""``versions._candidates`` (run over the whole store at the end of every ingest) gives exactly the
pairs of a plain reading of its rule: two fingerprinted documents that agree on one whole band that
holds a shingle, each compared with at most ``_BUCKET`` successors of a bucket."""
from hypothesis import given, settings, strategies as st

from chunkwise.enrich.versions import BAND, BINS, EMPTY, VersionInfo
from chunkwise.pipeline import versions


def reference(infos):
    buckets = {}
    for doc_id in sorted(infos):
        sig = infos[doc_id].minhash
        for n in range(0, len(sig), BAND):
            part = tuple(sig[n : n + BAND])
            if any(v != EMPTY for v in part):
                buckets.setdefault((n // BAND, part), []).append(doc_id)
    pairs = set()
    for members in buckets.values():
        for i, a in enumerate(members):
            pairs.update((a, b) for b in members[i + 1 : i + 1 + versions._BUCKET])
    return sorted(pairs)


values = st.sampled_from([EMPTY, EMPTY, 2, 4, 6]) | st.integers(0, 2**31).map(lambda v: 2 * v)
signatures = st.one_of(st.just(()), st.lists(values, min_size=BINS, max_size=BINS),
                       st.lists(values, min_size=1, max_size=2 * BAND + 1)).map(tuple)


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(st.text("abcdef", min_size=1, max_size=3), signatures, max_size=40))
def test_candidates_are_the_pairs_of_the_rule(sigs):
    infos = {doc_id: VersionInfo("", (), sig, ()) for doc_id, sig in sigs.items()}
    assert versions._candidates(infos) == reference(infos)


def test_a_shared_band_pairs_two_documents_and_an_empty_one_never():
    empty = (EMPTY,) * BINS
    one = (7 * 2,) * BAND + (EMPTY,) * (BINS - BAND)
    infos = {"a": VersionInfo("", (), one, ()), "b": VersionInfo("", (), one, ()),
             "c": VersionInfo("", (), empty, ()), "d": VersionInfo("", (), empty, ()),
             "e": VersionInfo("", (), (EMPTY,) * (BAND + 1), ()), "f": VersionInfo("", (), (EMPTY,) * (BAND + 1), ()),
             "g": VersionInfo("", (), (EMPTY,) * BAND + (8,), ()), "h": VersionInfo("", (), (9,) * BAND + (8,), ())}
    assert versions._candidates(infos) == [("a", "b"), ("g", "h")]
