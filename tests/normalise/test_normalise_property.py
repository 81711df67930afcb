"""Properties of normalise() on random text built from the characters the steps act on."""
from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from chunkwise.normalise import normalise

PIECES = [
    "a", "b", "Z", "é", "7", "_", "-", "\u2010", " ", "  ", "\t", "\n", "\r\n", "\r", "\u00a0", "\u2028", "\f",
    "\u200b", "\u200d", "\ufeff", "\u202e", "\u2066", "\u200f", "\u00ad", "\u0301", "\u0323", "e\u0301",
    "\u1100", "\u1161", "\u11a8", "가", "\u0f73", "\u0b47", "\u0b3e", "中", "immi-\ngration",
]
texts = st.lists(st.sampled_from(PIECES), max_size=30).map("".join) | st.text(max_size=20)


@settings(max_examples=400, deadline=None)
@given(texts)
def test_offset_map_invariants(src):
    out = normalise(src)
    m = out.to_original.tolist()
    assert len(m) == len(out.text) + 1
    assert m[-1] == len(src)
    assert all(x <= y for x, y in zip(m, m[1:])), "monotonic non-decreasing"
    assert all(0 <= x <= len(src) for x in m)


@settings(max_examples=250, deadline=None)
@given(texts)
def test_every_span_maps_to_an_original_span_that_normalises_to_contain_it(src):
    # The invariant that holds: normalising original[original_span(a, b)] yields text that contains
    # normalised[a:b]. Not equality: the original span may carry a removed neighbour (a trailing
    # "-\n" of a repaired word) that, alone, normalises differently.
    out = normalise(src)
    n = len(out.text)
    for a in range(n + 1):
        for b in range(a, n + 1):
            s, e = out.original_span(a, b)
            assert 0 <= s <= e <= len(src)
            assert out.text[a:b] in normalise(src[s:e]).text


@settings(max_examples=400, deadline=None)
@given(texts)
def test_idempotent(src):
    once = normalise(src).text
    assert normalise(once).text == once
