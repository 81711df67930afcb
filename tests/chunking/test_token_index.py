"""Counting slices off one tokenizer pass (``token_index``) and the vectorised word-end scan must give
exactly what the slice-by-slice paths give: the speed work may not move a chunk boundary."""
import re

import numpy as np
import pytest
from conftest import chroma_texts, sizer
from hypothesis import HealthCheck, given, settings, strategies as st

from chunkwise.chunking import sizing, token_index
from chunkwise.chunking.pack import _FINE_WORD
from chunkwise.chunking import word_ends as word_ends_module
from chunkwise.chunking.word_ends import word_ends
from chunkers import make_chunker

TOKIE = sizer("tokens", "minilm", "tokie")

# Pieces that exercise the mapping: ASCII words and punctuation, accents (stripped by the normaliser),
# a combining mark, CJK (padded), symbols the vocabulary lacks ([UNK] for the whole word), a word over
# 100 characters ([UNK]), non-ASCII spaces, curly quotes, digits with decimal points.
PIECES = ["the", "Cat", "sat", "on", "mat.", "e.g.", "3.14", "don't", "well-known", "(see", "below)", "naïve",
          "café", "Ärger", "e\u0301", "東京", "日本語です", "■", "≅x", "a■b", "€5", "“quoted”", "x" * 120,
          "Δt", "μg", "—", "…", "#", "@user", "CO2", "ﬁle", "İstanbul", "ß"]
SPACES = [" ", "  ", "\n", "\n\n", "\t", " \n ", "\xa0", "\u3000", "\u2009"]
texts = st.lists(st.tuples(st.sampled_from(PIECES), st.sampled_from(SPACES)), min_size=1, max_size=80).map(
    lambda parts: "".join(w + s for w, s in parts))


def _index(text):
    fast = TOKIE.for_text(text)
    assert fast is TOKIE, "a trusted text stays on tokie"
    return fast._build_index(text)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(texts, st.lists(st.integers(0, 10_000), min_size=2, max_size=30), st.booleans())
def test_slice_counts_off_one_pass_equal_counting_each_slice(text, raw_cuts, at_words):
    text = "".join(ch for ch in text if TOKIE._trusted(ch) or ch.isascii() or ch.isspace())
    if TOKIE.for_text(text) is not TOKIE:
        return
    index = _index(text)
    n = len(text)
    if at_words:  # the cuts the packer makes: word ends, then anywhere (inside words too)
        ends = [m.end() for m in _FINE_WORD.finditer(text)]
        cuts = sorted({ends[c % len(ends)] for c in raw_cuts} | {0, n}) if ends else [0, n]
    else:
        cuts = sorted({c % (n + 1) for c in raw_cuts} | {0, n})
    starts, stops = cuts[:-1], cuts[1:]
    want = [TOKIE._fast.count_tokens(text[a:b]) for a, b in zip(starts, stops)]
    if index is not None:
        assert index.count(starts, stops, lambda a, b: TOKIE._fast.count_tokens(text[a:b])) == want
        assert len(index.starts) == TOKIE._fast.count_tokens(text)


def test_the_index_is_built_for_real_corpora_and_counts_every_word():
    # The property above passes vacuously if the index is never built: here it must be, on prose
    # with curly quotes, Greek letters and symbols the vocabulary lacks (pubmed: 20 [UNK]).
    for name, text in chroma_texts().items():
        fast = TOKIE.for_text(text)
        index = fast._build_index(text)
        assert index is not None, name
        ends = [0, *word_ends(text), len(text)]
        slow = []
        got = index.count(ends[:-1], ends[1:], lambda a, b: slow.append(a) or fast.count(text[a:b]))
        assert got == fast.count_many([text[a:b] for a, b in zip(ends, ends[1:])]), name
        assert len(slow) * 100 < len(ends), name  # word edges are nearly all read off the index


def test_counts_off_the_position_table_equal_the_binary_search():
    # Many spans (every word end) are read off a table of every position; it must give exactly the
    # binary search's counts, and a text where two tokens start at one character keeps the search.
    for name, text in chroma_texts().items():
        index = TOKIE.for_text(text)._build_index(text)
        ends = np.array([0, *word_ends(text), len(text)], dtype=np.int64)
        assert index._before is None
        assert (index._ends_before(ends) == np.searchsorted(index.starts, ends)).all(), name
        assert index._before is not None, name
    twice = token_index.TokenIndex(np.array([0, 2, 2, 5], dtype=np.int64), np.ones(8, dtype=bool))
    p = np.tile(np.arange(8, dtype=np.int64), 4)
    assert (twice._ends_before(p) == np.searchsorted(twice.starts, p)).all() and twice._before is None


@pytest.mark.parametrize("text", ["a\x85b c", "x\x01y z", "a \x7f b"])
def test_doubtful_texts_are_counted_slice_by_slice(text):
    assert TOKIE._build_index(text * 400) is None


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("ab .\n\t\x0b\x1c\xa0\u3000東京ーカ한국é\u2028-")), max_size=60), st.booleans())
def test_vectorised_word_ends_equal_the_regex_scan(text, cjk_alone):
    pattern = _FINE_WORD if cjk_alone else re.compile(r"\S+")
    want = [m.end() for m in pattern.finditer(text) if m.end() < len(text)]
    assert word_ends(text, cjk_alone) == want


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("ab .\n\t\x1c\u3000東京é\u2028")), max_size=60), st.booleans(),
       st.integers(1, 9))
def test_word_ends_of_a_long_text_block_by_block_equal_one_scan(text, cjk_alone, block):
    whole = word_ends(text, cjk_alone)
    saved = word_ends_module.MAX_CHARS
    word_ends_module.MAX_CHARS = block  # a text over it is scanned a block at a time
    try:
        assert word_ends(text, cjk_alone) == whole
        assert word_ends(text, cjk_alone, as_array=True).tolist() == whole
    finally:
        word_ends_module.MAX_CHARS = saved


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(texts, min_size=30, max_size=60).map("\n\n".join),
       st.sampled_from([("fixed", 64, 0), ("fixed", 48, 12), ("recursive", 64, 0), ("recursive", 40, 8),
                        ("paragraphs", 50, 0)]))
def test_chunks_with_the_index_equal_chunks_without(monkeypatch_text, config):
    strategy, size, overlap = config
    text = "".join(ch for ch in monkeypatch_text if TOKIE._trusted(ch) or ch.isascii() or ch.isspace())
    chunker = make_chunker(strategy=strategy, size=size, overlap=overlap, unit="tokens", tokenizer="minilm",
                           backend="tokie")
    fast = [(c.start_char, c.end_char, c.size, c.level, c.needs_review) for c in chunker.chunk(text)]
    saved = sizing.INDEX_MIN_CHARS
    sizing.INDEX_MIN_CHARS = 10**12  # every count slice by slice, as before the index existed
    try:
        slow = [(c.start_char, c.end_char, c.size, c.level, c.needs_review) for c in chunker.chunk(text)]
    finally:
        sizing.INDEX_MIN_CHARS = saved
    assert fast == slow
    assert max(c[2] for c in fast) <= size


def test_the_kept_code_points_go_with_the_document():
    """chunking/codes keeps the last document's code points while it is chunked; once the chunker
    is done, nothing of that text stays referenced by the module (a server's process lives long)."""
    from chunkwise.chunking import codes
    from chunkwise.chunking.router import build_chunker
    from chunkwise.config import ChunkConfig

    text = "".join(f"Paragraph {i} says the ledger freezes at noon on Fridays.\n\n" for i in range(400)) + "é"
    for strategy in ("recursive", "fixed", "structure"):
        assert build_chunker(ChunkConfig(strategy=strategy, size=64)).chunk(text)
        assert codes._last is None or codes._last[0] is not text, strategy
    arr = codes.char_codes(text)
    assert codes.char_codes(text) is arr and arr.dtype.itemsize == 4  # kept while in use
    codes.forget("another text")
    assert codes._last[0] is text
    codes.forget(text)
    assert codes._last is None


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(texts, st.integers(2, 40))
def test_an_index_built_block_by_block_equals_one_built_in_one_pass(text, block):
    # A document over ``sizing.INDEX_BLOCK_CHARS`` is indexed a block at a time, each cut before a
    # space or newline: the starts and safe cuts must be exactly the one pass's.
    text = "".join(ch for ch in text if TOKIE._trusted(ch) or ch.isascii() or ch.isspace())
    if TOKIE.for_text(text) is not TOKIE:
        return
    whole = _index(text)
    cuts = token_index.block_cuts(text, block)
    if cuts is None:  # a run of ``block`` characters without a space or newline: no block cuts
        assert any(" " not in w and "\n" not in w for w in (text[i + 1:i + block] for i in range(len(text) - block + 1)))
        return
    parts = token_index.build_blocks(text, cuts, TOKIE._flat_ids, TOKIE._token_chars, TOKIE._unk,
                                     TOKIE._normalised_chars)
    assert all(0 < b - a < block or (a == 0 and b == len(text) and len(text) < block)
               for a, b in zip(cuts, cuts[1:])), cuts
    assert all(text[c] in " \n" for c in cuts[1:-1])
    if whole is None or parts is None:
        assert whole is None and parts is None  # doubt in a block is doubt in the whole
        return
    assert parts.starts.tolist() == whole.starts.tolist()
    assert parts.safe.tolist() == whole.safe.tolist()


def test_block_cuts_of_the_corpora_give_the_one_pass_index():
    text = "\n\n".join(chroma_texts().values())
    if not text:
        pytest.skip("corpora not beside the repository")
    whole = _index(text)
    cuts = token_index.block_cuts(text, 100_000)
    assert len(cuts) > 3
    parts = token_index.build_blocks(text, cuts, TOKIE._flat_ids, TOKIE._token_chars, TOKIE._unk,
                                     TOKIE._normalised_chars)
    assert whole is not None and parts is not None
    assert (parts.starts == whole.starts).all() and (parts.safe == whole.safe).all()
    assert token_index.block_cuts("x" * 50 + " y", 20) is None  # no blank within a block: slice by slice


def test_chunks_of_a_long_document_indexed_by_blocks_equal_one_pass(monkeypatch):
    text = "".join(f"Paragraph {i} says the ledger “freezes” at noon on Fridays, café Ärger.\n\n"
                   for i in range(600))
    chunker = make_chunker(strategy="fixed", size=64, overlap=8, unit="tokens", tokenizer="minilm", backend="tokie")
    want = [(c.start_char, c.end_char, c.size, c.needs_review) for c in chunker.chunk(text)]
    built = []
    real = token_index.build_blocks
    monkeypatch.setattr(sizing, "INDEX_BLOCK_CHARS", 5_000)
    monkeypatch.setattr(token_index, "build_blocks", lambda text, cuts, *a: built.append(cuts) or real(text, cuts, *a))
    chunker = make_chunker(strategy="fixed", size=64, overlap=8, unit="tokens", tokenizer="minilm", backend="tokie")
    assert [(c.start_char, c.end_char, c.size, c.needs_review) for c in chunker.chunk(text)] == want
    assert len(built) == 1 and len(built[0]) > 5  # the block path ran


def test_a_long_text_without_block_cuts_is_indexed_in_one_pass(monkeypatch):
    # No space or newline within a block: one pass up to INDEX_ONE_PASS_CHARS, none past it.
    text = ("naïve\u3000café\u3000" * 900)[:-1]
    monkeypatch.setattr(sizing, "INDEX_BLOCK_CHARS", 5_000)
    assert token_index.block_cuts(text, 5_000) is None
    fast = TOKIE.for_text(text)
    index = fast._build_index(text)
    assert index is not None and len(index.starts) == fast._fast.count_tokens(text)
    monkeypatch.setattr(sizing, "INDEX_ONE_PASS_CHARS", 9_000)
    assert fast._build_index(text) is None


def test_a_document_over_the_unknown_limit_has_no_index_block_by_block_either():
    text = " ".join(["≅x"] * (token_index.MAX_UNKNOWN + 5) + ["word"] * 50)  # [UNK] each
    assert TOKIE._build_index(text) is None  # one pass
    cuts = token_index.block_cuts(text, 500)
    assert cuts is not None and len(cuts) > 10
    assert token_index.build_blocks(text, cuts, TOKIE._flat_ids, TOKIE._token_chars, TOKIE._unk,
                                    TOKIE._normalised_chars) is None
    few = " ".join(["≅x"] * 40 + ["word"] * 50)
    assert token_index.build_blocks(few, token_index.block_cuts(few, 50), TOKIE._flat_ids, TOKIE._token_chars,
                                    TOKIE._unk, TOKIE._normalised_chars) is not None
