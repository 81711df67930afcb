"""The recursive and paragraphs strategies read the packer's rows straight into chunks
(``BaseChunker.finalize_rows``) instead of building a ``Piece`` and a ``Draft`` per chunk, and find
single-character sentence marks in one scan (``boundaries.literals``). Both are speed work that
may not move a chunk boundary: each must equal the generic path it replaces, field for field."""
from conftest import sizer
from hypothesis import HealthCheck, given, settings, strategies as st

from chunkwise.chunking import boundaries
from chunkwise.chunking.base import drafts_from_pieces, drafts_from_rows
from chunkwise.chunking.levels import Level
from chunkwise.chunking.pack import Piece, pack, pack_rows
from chunkers import make_chunker

PIECES = ["the", "Cat", "sat", "on", "mat.", "e.g.", "3.14", "Why?", "No!", "don't", "well-known", "naïve",
          "東京。", "日本語です", "x" * 120, "supercalifragilistic", "…", "((([[[", "?!", "Dr.", "a.b.c"]
SPACES = [" ", "  ", "\n", "\n\n", "\n \n", "\t", "\xa0", "\x0b"]
texts = st.lists(st.tuples(st.sampled_from(PIECES), st.sampled_from(SPACES)), min_size=1, max_size=150).map(
    lambda parts: "".join(w + s for w, s in parts))
SEPARATORS = [None, ["\n\n", "\n", ".", "?", "!", " ", ""], ["\n\n", "<sentence>", ".", " "], ["\n", "..", "!"],
              ["\n\n", "。", "?", " "]]
CONFIGS = [("chars", None), ("words", None), ("tokens", "tokie")]
SLOW = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _generic(chunker, text):
    """What ``BaseChunker._chunk`` does: drafts (one ``Draft`` per packed ``Piece``), then ``finalize``."""
    title = chunker.title_of(text)
    return chunker.finalize(text, chunker.drafts(text, title), title)


@SLOW
@given(texts, st.sampled_from(["recursive", "paragraphs"]), st.sampled_from(CONFIGS), st.integers(4, 60),
       st.integers(0, 3), st.sampled_from(range(len(SEPARATORS))), st.sampled_from(["none", "full"]),
       st.sampled_from([1, 3]))
def test_rows_give_the_chunks_of_drafts_and_finalize(text, strategy, unit, size, overlap, seps, header, copies):
    text = text * copies
    kw = {"unit": unit[0], "size": size, "overlap": min(overlap, size // 4), "header": header}
    if unit[1]:
        kw["backend"] = unit[1]
    if strategy == "recursive" and SEPARATORS[seps]:
        kw["separators"] = SEPARATORS[seps]
    chunker = make_chunker(strategy=strategy, title="Doc" if header == "full" else "", **kw).for_text(text)
    fast = chunker.chunk(text)
    assert fast == _generic(chunker, text)
    assert all(c.size <= size for c in fast)


@SLOW
@given(texts, st.sampled_from(["chars", "tokie"]), st.integers(1, 40), st.integers(0, 4))
def test_pack_is_its_rows_as_pieces(text, name, budget, overlap):
    s = sizer("chars") if name == "chars" else sizer("tokens", "minilm", "tokie")
    s = s.for_text(text)
    cuts = boundaries.paragraphs(text)
    kw = {"overlap": min(overlap, budget - 1), "fine": (boundaries.sentences,), "max_chars": 16 * budget}
    rows = pack_rows(text, 0, len(text), cuts, s, budget, **kw)
    pieces = pack(text, 0, len(text), cuts, s, budget, **kw)
    assert pieces == [Piece(*row) for row in rows]
    assert drafts_from_rows(rows) == drafts_from_pieces(pieces)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=".?!…。 a\n", max_size=80), st.lists(st.sampled_from([".", "?", "!", "。", "..", "\n", " "]),
                                                            min_size=1, max_size=4), st.integers(0, 10))
def test_literals_are_the_literal_cuts_of_each_separator(text, seps, start):
    seps = tuple(seps)
    start = min(start, len(text))
    each = [cut for sep in seps for cut in boundaries.literal(text, sep, Level.SENTENCE, start)]
    together = boundaries.literals(text, seps, Level.SENTENCE, start)
    assert sorted(set(together)) == sorted(set(each))
    if len(seps) > 1 and all(len(s) == 1 and not s.isspace() for s in seps):
        assert len(together) == len(set(together))  # one scan: each position once


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=".?!…。 a\n", max_size=80), st.lists(st.sampled_from([".", "?", "!", "。"]), min_size=1,
                                                            max_size=4), st.integers(0, 80), st.integers(0, 80))
def test_marks_found_once_per_document_are_each_stretchs_own_cuts(text, seps, a, b):
    """The sentence finder of single-character marks scans the document once and slices it per
    stretch: the same cuts, merged, as scanning the stretch itself for each mark."""
    from chunkwise.chunking.pack import merge_cuts
    from chunkwise.chunking.recursive import _sentence_finder

    a, b = sorted((min(a, len(text)), min(b, len(text))))
    find = _sentence_finder(tuple(seps))
    find(text[::-1], 0, len(text))  # another document first: the finder must not reuse its scan
    each = [cut for sep in seps for cut in boundaries.literal(text, sep, Level.SENTENCE, a, b)]
    assert find(text, a, b) == merge_cuts(each, a, b)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(PIECES + ["。」", "！", "Mr.", "etc.)", "?\u201d", "."]), max_size=40).map("".join)
       | st.text(alphabet=".?!…。！？」 a\n\xa0", max_size=80), st.integers(0, 200), st.integers(0, 200))
def test_sentence_finder_gives_the_merged_sentence_cuts(text, a, b):
    """The default separators' sentence finder hands the packer its cuts already merged
    (``sentence_ends``): the same positions and levels as merging ``sentences``' cuts."""
    from chunkwise.chunking.pack import merge_cuts
    from chunkwise.chunking.recursive import _sentence_finder

    text = text.replace("a", "a ")
    a, b = sorted((min(a, len(text)), min(b, len(text))))
    find = _sentence_finder(("<sentence>",))
    assert find(text, a, b) == merge_cuts(boundaries.sentences(text, a, b), a, b)
    assert boundaries.sentence_ends(text) == merge_cuts(boundaries.sentences(text), 0, len(text))[0]
