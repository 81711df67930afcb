"""The packer's array top level (``chunking/flat.py``) must pack exactly as the generic ``_Segments``:
same pieces (edges, sizes, levels, flags) for every sizer, budget, overlap and character bound, and
so the same fixed windows. The speed work may not move a chunk boundary."""
import pytest
from conftest import chroma_texts, sizer
from hypothesis import HealthCheck, given, settings, strategies as st

from chunkwise.chunking import flat
from chunkwise.chunking.levels import Level
from chunkwise.chunking.pack import child_of, clean_cut, pack
from chunkwise.chunking.word_ends import word_ends
from chunkers import make_chunker

SIZERS = {"tokie": sizer("tokens", "minilm", "tokie"), "chars": sizer("chars"), "words": sizer("words"),
          "tokenizers": sizer("tokens", "minilm", "tokenizers")}
# Words that cost many tokens for few characters (a long [UNK] word, CJK characters each a word),
# soft and non-ASCII spaces (cuts next to them are not clean), punctuation runs.
PIECES = ["the", "Cat", "sat", "on", "mat.", "e.g.", "3.14", "don't", "well-known", "naïve", "東京", "日本語です",
          "■", "a■b", "€5", "x" * 120, "supercalifragilistic", "Δt", "—", "…", "((([[[", "ﬁle", "İstanbul"]
SPACES = [" ", "  ", "\n", "\n\n", "\t", "\xa0", "\u3000", "\u2009", "\x0b", " \x85 "]
texts = st.lists(st.tuples(st.sampled_from(PIECES), st.sampled_from(SPACES)), min_size=1, max_size=120).map(
    lambda parts: "".join(w + s for w, s in parts))


def _both(monkeypatch, run):
    """``run()`` with the array top level, then with it switched off (the generic packer)."""
    used = []
    real = flat.flat_segments

    def spy(*a):
        out = real(*a)
        used.append(out is not None)
        return out

    monkeypatch.setattr(flat, "flat_segments", spy)
    fast = run()
    monkeypatch.setattr(flat, "flat_segments", lambda *a: None)
    slow = run()
    monkeypatch.setattr(flat, "flat_segments", real)
    return fast, slow, any(used)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                   HealthCheck.function_scoped_fixture])
@given(texts, st.sampled_from(sorted(SIZERS)), st.integers(1, 40), st.integers(0, 8), st.integers(1, 12),
       st.sampled_from([1, 2, 40]), st.booleans())
def test_flat_top_level_packs_as_the_generic_packer(monkeypatch, text, name, budget, overlap, chars, copies, cjk):
    text = text * copies  # long enough (> 2,048 characters) for the token index as well
    s = SIZERS[name]
    if name == "tokie" and s.for_text(text) is not s:
        s = s.for_text(text)
    overlap = min(overlap, budget - 1)
    ends = word_ends(text, cjk_alone=cjk, as_array=True)
    if ends is None:
        return
    cuts = (ends, [Level.WORD] * len(ends))
    fast, slow, used = _both(monkeypatch, lambda: pack(text, 0, len(text), cuts, s, budget, overlap=overlap,
                                                       max_chars=chars * budget))
    assert fast == slow
    assert all(type(p.start) is int and type(p.end) is int and type(p.size) is int for p in fast)
    if used and name != "chars":
        assert all(p.size <= budget for p in fast if not p.review)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.function_scoped_fixture])
@given(texts, st.sampled_from([("tokens", 16, 0), ("tokens", 32, 8), ("words", 10, 2), ("chars", 60, 0)]))
def test_fixed_windows_are_unchanged(monkeypatch, text, cfg):
    unit, size, overlap = cfg
    chunker = make_chunker(strategy="fixed", size=size, overlap=overlap, unit=unit)
    fast, slow, _ = _both(monkeypatch, lambda: chunker.chunk(text * 30))
    assert fast == slow
    measure = SIZERS["tokenizers"] if unit == "tokens" else SIZERS[unit]
    if unit == "tokens":
        assert all(measure.count(c.embed_text) <= size for c in fast)


def test_fixed_windows_on_the_chroma_corpora_use_the_arrays_and_are_unchanged(monkeypatch):
    chunker = make_chunker(strategy="fixed", size=256, overlap=0, unit="tokens", backend="tokie")
    for name, text in chroma_texts().items():
        fast, slow, used = _both(monkeypatch, lambda: chunker.chunk(text))
        assert used, name
        assert fast == slow, name


def test_several_levels_take_the_generic_packer():
    text = "one two. three four\n\nfive six"
    ctx_cuts = ([3, 8, 19], [Level.WORD, Level.SENTENCE, Level.BLOCK])
    from chunkwise.chunking.pack import _Ctx

    ctx = _Ctx(text, SIZERS["words"], (), 4, len(text) + 1)
    assert flat.flat_segments(ctx, 0, len(text), ctx_cuts, child_of, clean_cut) is None
    assert flat.flat_segments(ctx, 0, len(text), ([3, 8, 19], [Level.WORD] * 3), child_of, clean_cut) is not None


@pytest.mark.parametrize("n", [0, 1])
def test_few_cuts(n):
    text = "alpha beta"
    pieces = pack(text, 0, len(text), ([5][:n], [Level.WORD][:n]), SIZERS["words"], 1)
    assert [(p.start, p.end) for p in pieces] == [(0, 5), (6, 10)]
