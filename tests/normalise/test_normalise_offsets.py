"""OffsetMap: construction from edits, lookups, composition, and the Normalised wrapper."""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chunkwise.normalise import Normalised, OffsetMap, apply_edits


def test_from_edits_deletion_replacement_and_copy():
    src = "ab  cd\u200bef"
    out = apply_edits(src, [(3, 4, ""), (6, 7, ""), (7, 9, "EF")])
    assert out.text == "ab cdEF"
    assert out.to_original.tolist() == [0, 1, 2, 4, 5, 7, 7, 9]
    assert out.to_original == [0, 1, 2, 4, 5, 7, 7, 9]
    assert len(out.to_original) == len(out.text) + 1
    assert out.to_original[-1] == 9 and out.to_original[1:3] == [1, 2]
    assert out.original_span(5, 6) == (7, 9)  # cuts the replacement: widened to the whole run
    assert out.original_span(0, 2) == (0, 2) and out.original_span(3, 3) == (4, 4)
    with pytest.raises(IndexError):
        out.to_original[8]
    with pytest.raises(IndexError):
        out.original_span(2, 1)


def test_no_edits_is_identity_on_the_same_string():
    src = "unchanged"
    out = apply_edits(src, [])
    assert out.text is src and out.to_original.tolist() == list(range(len(src) + 1))
    assert Normalised.identity("").to_original.tolist() == [0]


@st.composite
def text_and_edits(draw, text=None):
    text = draw(st.text(alphabet="abc ", max_size=25)) if text is None else text
    cuts = sorted(draw(st.lists(st.integers(0, len(text)), max_size=8, unique=True)))
    edits = []
    for s, e in zip(cuts[::2], cuts[1::2]):
        if e > s:
            edits.append((s, e, draw(st.sampled_from(["", "X", "YZ", "PQR"]))))
    return text, edits


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_compose_equals_per_index_composition(data):
    text, edits1 = data.draw(text_and_edits())
    first = apply_edits(text, edits1)
    _, edits2 = data.draw(text_and_edits(first.text))
    second = apply_edits(first.text, edits2)
    both = first.then(second)
    m1, m2 = first.to_original.tolist(), second.to_original.tolist()
    assert both.text == second.text
    assert both.to_original.tolist() == [m1[j] for j in m2]
    for a in range(len(both.text) + 1):
        for b in range(a, len(both.text) + 1):
            s, e = both.original_span(a, b)
            assert 0 <= s <= e <= len(text)
            # same start as mapping step by step; the end lies between the plain lookup and the
            # step-by-step span (which may also carry characters deleted right after it)
            s1, e1 = second.original_span(a, b)
            assert s == first.to_original[s1]
            assert both.to_original[b] <= e <= first.original_span(s1, e1)[1]


def test_offset_map_repr_and_pieces():
    m = OffsetMap.from_edits(10, [(2, 4, "")])
    assert m.pieces == 2 and "pieces=2" in repr(m)
