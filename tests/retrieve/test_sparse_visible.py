"""The sparse BM25 read through a caller's ranges (``layout.Visible``: binary search over sorted
postings, scores summed in the caller's numbering) equals the read through the mask, bit for bit."""
import numpy as np
from hypothesis import given, settings, strategies as st

from chunkwise.lexical import FieldWeights, LexicalFields
from chunkwise.retrieve.bm25 import SparseBM25
from chunkwise.retrieve.layout import Visible

WORDS = [f"w{i}" for i in range(12)]


@st.composite
def cases(draw):
    n = draw(st.integers(1, 60))
    # Zipf-like: the first words are in most rows (at the idf floor), the last in few.
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    p = 1.0 / np.arange(1, len(WORDS) + 1)
    p /= p.sum()

    def text(most: int) -> str:
        return " ".join(rng.choice(WORDS, size=int(rng.integers(0, most + 1)), p=p))

    docs = [LexicalFields(text(20), text(3), text(4)) for _ in range(n)]
    cuts = sorted(set(draw(st.lists(st.integers(0, n), max_size=10))) | {0, n})
    slices = [(a, b) for a, b in zip(cuts, cuts[1:]) if draw(st.booleans())]
    terms = draw(st.lists(st.sampled_from(WORDS + ["absent"]), min_size=1, max_size=6, unique=True))
    weights = FieldWeights(draw(st.sampled_from([0.0, 1.0, 2.0])), draw(st.sampled_from([0.0, 1.5])))
    return docs, slices, terms, weights, draw(st.booleans())


@settings(max_examples=300, deadline=None)
@given(cases())
def test_ranges_read_equals_the_mask_read(case):
    docs, slices, terms, weights, informative = case
    bm = SparseBM25.build(docs, len(docs))
    mask = np.zeros(len(docs), dtype=bool)
    for a, b in slices:
        mask[a:b] = True
    stats = bm.stats(mask)
    want = bm.scores(terms, mask, stats, informative, weights)
    got = bm.scores(terms, mask, stats, informative, weights, Visible.of(slices))
    assert got[0].tolist() == want[0].tolist()
    assert got[1].dtype == want[1].dtype and got[1].tobytes() == want[1].tobytes()


def test_a_term_at_the_floor_is_skipped_unless_every_term_is():
    docs = [LexicalFields(body) for body in ("the cat", "the dog", "the cow", "a bird")]
    bm = SparseBM25.build(docs, len(docs))
    visible = Visible.of([(0, 4)])
    everything = np.ones(4, dtype=bool)
    stats = bm.stats(everything)
    assert bm.scores(["the", "cat"], everything, stats, visible=visible)[0].tolist() == [0]
    assert bm.scores(["the"], everything, stats, visible=visible)[0].tolist() == [0, 1, 2]
