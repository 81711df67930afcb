"""Page furniture (``role: furniture`` blocks, HTML chrome) is reported by extraction and removed before
chunking: the text left is exactly the other blocks, in order, and every offset still maps back."""
from hypothesis import given, settings
from hypothesis import strategies as st

from chunkwise.extract.builder import TextBuilder
from chunkwise.normalise import furniture_spans, is_furniture, strip_furniture, without_furniture
from chunkwise.pipeline.chunk import normalised_view
from chunkwise.types import Document

_WORDS = st.lists(st.text(alphabet="abcdefgh", min_size=1, max_size=6), min_size=1, max_size=5).map(" ".join)


def _doc(parts: list[tuple[str, bool]]) -> Document:
    out = TextBuilder()
    for text, aside in parts:
        out.block("paragraph", text, meta={"role": "furniture"} if aside else None)
    return Document(doc_id="d", source="d.html", media_type="text/html", text=out.value(), blocks=tuple(out.blocks))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(_WORDS, st.booleans()), max_size=12))
def test_the_text_left_is_the_other_blocks_in_order(parts):
    doc = _doc(parts)
    main = [t for t, aside in parts if not aside]
    assert without_furniture(doc) == "\n\n".join(main)
    stripped = strip_furniture(doc)
    assert stripped.text == "\n\n".join(main)
    assert [stripped.text[b.start:b.end] for b in stripped.blocks] == main
    spans = furniture_spans(doc.blocks)
    assert all(a < b for (a, _), (b, _) in zip(spans, spans[1:]))  # sorted, disjoint
    assert all(e <= s2 for (_, e), (s2, _) in zip(spans, spans[1:]))
    view, norm = normalised_view(doc)
    assert not any(is_furniture(b) for b in view.blocks)
    assert [view.text[b.start:b.end] for b in view.blocks] == main
    assert view.text.rstrip() == "\n\n".join(main)
    if norm is not None:  # every main block maps back to its own place in the extracted text
        originals = [b for b in doc.blocks if not is_furniture(b)]
        for b, o in zip(view.blocks, originals):
            assert norm.original_span(b.start, b.end) == (o.start, o.end)


def test_a_document_without_furniture_is_untouched():
    doc = _doc([("alpha beta", False), ("gamma", False)])
    assert strip_furniture(doc) is doc and furniture_spans(doc.blocks) == []
