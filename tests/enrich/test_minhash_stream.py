"""The fingerprint fed one record at a time is the fingerprint of the joined texts."""
from hypothesis import given, settings, strategies as st

from chunkwise.enrich.versions import MinHasher, minhash

# words, spaces, newlines, and characters NFKC or case folding rewrite or combine (ligatures, full-width
# letters, combining marks, the German sharp s, Hangul jamo)
alphabet = st.sampled_from(list("ab c\n\t.,1") + ["\ufb01", "\uff21", "\u0301", "\u0338", "\u00df", "\u1100", "\u1161",
                                                   "\u212b", "\u0130"])
texts = st.lists(st.text(alphabet, max_size=40), max_size=12)


@settings(max_examples=300, deadline=None)
@given(texts)
def test_fed_one_text_at_a_time_equals_the_joined_text(parts):
    h = MinHasher()
    for p in parts:
        h.add(p)
    assert h.value() == minhash("\n".join(parts))


def test_a_long_document_in_pieces():
    parts = [f"the ledger entry {i} is booked by team {i % 7}" for i in range(500)]
    h = MinHasher()
    for p in parts:
        h.add(p)
    assert h.value() == minhash("\n".join(parts)) and len(h.value()) == 128
