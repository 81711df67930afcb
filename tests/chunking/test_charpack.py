"""The character packer (``chunking/charpack.py``) must give ``pack_rows``' rows, field for field:
the same edges, sizes, levels, flags and exactness, for any text, budget, character bound and set of
finders, and so the same recursive and paragraphs chunks. It is speed work; no boundary may move."""
from conftest import chroma_texts, sizer
from hypothesis import HealthCheck, given, settings, strategies as st

from chunkwise.chunking import boundaries, charpack, recursive
from chunkwise.chunking.levels import Level
from chunkwise.chunking.pack import merge_cuts, pack_rows
from chunkwise.chunking.word_ends import word_ends
from chunkers import make_chunker

# Long words (a single-character leaf, and one longer than twice a small bound: a run), CJK (each
# character a word; stops without a space), soft and non-ASCII spaces (cuts next to them are dirty),
# marks inside words ("3.14", "e.g."), blank lines with spaces inside; ideographic spaces (U+3000), which
# are whitespace to ``skip_ws`` yet words to ``_FINE_WORD``, so a finer level can cut inside the
# whitespace a piece starts after (where a newly built level moves the base).
PIECES = ["the", "Cat", "sat", "mat.", "e.g.", "3.14", "Why?", "No!", "don't", "naïve", "東京。", "日本語です",
          "x" * 40, "y" * 130, "…", "?!", "Dr.", "a.b.c", "—", "■"]
SPACES = [" ", "  ", "\n", "\n\n", "\n \n", "\t", "\xa0", "\x0b", "\u3000", "\u3000\u3000", "\n\u3000", " \x85 "]
texts = st.lists(st.tuples(st.sampled_from(PIECES), st.sampled_from(SPACES)), min_size=1, max_size=120).map(
    lambda parts: "".join(w + s for w, s in parts))
FINDERS = {
    "none": (),
    "marks": (recursive._sentence_finder((".", "?", "!")),),
    "heuristic": (recursive._sentence_finder(("<sentence>",)),),
    "both": (recursive._sentence_finder(("<sentence>", ".")),),
    "sentences": (boundaries.sentences,),
}
SLOW = settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
CHARS = sizer("chars")


def _top(text: str, kind: str):
    if kind == "paragraphs":
        return boundaries.paragraphs(text)
    if kind == "lines":
        return boundaries.paragraphs(text) + boundaries.literal(text, "\n", Level.LINE)
    if kind == "merged":
        return charpack.merge_levels([(Level.BLOCK, boundaries.paragraph_starts(text)),
                                      (Level.LINE, boundaries.literal_positions(text, "\n"))], 0, len(text))
    ends = word_ends(text, cjk_alone=True, as_array=True)  # one level, as a tuple: the flat top level
    return (ends, [Level.WORD] * len(ends)) if ends is not None and len(ends) else []


@SLOW
@given(texts, st.sampled_from(["paragraphs", "lines", "merged", "words"]), st.sampled_from(sorted(FINDERS)),
       st.integers(1, 90), st.sampled_from([None, 0, 1, 7, 3]), st.sampled_from([1, 4]))
def test_rows_equal_the_generic_packer(text, top, finders, budget, chars, copies):
    text = text * copies  # long enough for segments over 4x the budget (eager children)
    max_chars = None if chars is None else max(1, budget + chars - 3)
    cuts = _top(text, top)
    fine = FINDERS[finders]
    fast = charpack.pack_chars(text, 0, len(text), cuts, CHARS, budget, fine=fine, max_chars=max_chars)
    slow = pack_rows(text, 0, len(text), cuts, CHARS, budget, fine=fine, max_chars=max_chars)
    assert fast == slow
    # Without the flags (what a chunker asks for characters): every field but ``exact`` the same.
    bare = charpack.pack_chars(text, 0, len(text), cuts, CHARS, budget, fine=fine, max_chars=max_chars, flags=False)
    assert [row[:5] + row[6:] for row in bare] == [row[:5] + row[6:] for row in slow]


@settings(max_examples=150, deadline=None)
@given(texts, st.lists(st.sampled_from([".", "?", "!", "。", "…", "x", "\u3000"]), min_size=1, max_size=4))
def test_mark_ends_off_the_code_points_are_the_regex_scans(text, marks):
    marks = tuple(marks)
    assert recursive._mark_ends(text, marks) == boundaries.mark_ends(text, marks)
    ascii_text = text.encode("ascii", "ignore").decode()  # the one-byte array
    assert recursive._mark_ends(ascii_text, marks) == boundaries.mark_ends(ascii_text, marks)


def test_mark_ends_of_a_text_with_a_lone_surrogate():
    text = "a. b?\ud800 c!"
    assert recursive._mark_ends(text, (".", "?", "!")) == [2, 5, 9]


def test_merge_levels_is_merge_cuts():
    text = "a\n\nb\nc.\n \n\nd\n" * 3 + "\n"
    found = [(Level.LINE, boundaries.literal_positions(text, "\n")), (Level.BLOCK, boundaries.paragraph_starts(text)),
             (Level.SENTENCE, boundaries.literal_positions(text, "."))]
    pairs = [(p, level) for level, positions in found for p in positions]
    for start, end in ((0, len(text)), (1, len(text) - 1), (3, 9)):
        assert charpack.merge_levels(found, start, end) == merge_cuts(pairs, start, end)


def test_only_characters_without_overlap():
    text = "one two. three\n\nfour"
    assert charpack.pack_chars(text, 0, len(text), [], sizer("words"), 3) is None
    assert charpack.pack_chars(text, 0, len(text), [], CHARS, 3, overlap=1) is None
    assert charpack.pack_chars(text, 0, len(text), [], CHARS, 3) == pack_rows(text, 0, len(text), [], CHARS, 3)


def _chunks_both(monkeypatch, chunker, text):
    fast = chunker.chunk(text)
    monkeypatch.setattr(charpack, "fits", lambda sizer, overlap: False)  # pairs of cuts, the generic packer
    slow = chunker.chunk(text)
    monkeypatch.undo()
    return fast, slow


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.function_scoped_fixture])
@given(texts, st.sampled_from(["recursive", "paragraphs"]), st.integers(4, 120),
       st.sampled_from([None, ["\n\n", "\n", ".", "?", "!", " ", ""], ["\n\n", "<sentence>", ".", " "],
                        ["\n", "--", "!"], ["\n\n", " "]]), st.sampled_from(["none", "full"]))
def test_chunks_equal_the_generic_packer(monkeypatch, text, strategy, size, seps, header):
    kw = {"separators": seps} if strategy == "recursive" and seps else {}
    chunker = make_chunker(strategy=strategy, size=size, unit="chars", header=header,
                           title="Doc" if header == "full" else "", **kw)
    fast, slow = _chunks_both(monkeypatch, chunker, text * 3)
    assert fast == slow


def test_the_chroma_corpora_chunk_as_before(monkeypatch):
    seps = ["\n\n", "\n", ".", "?", "!", " ", ""]
    for size in (800, 150):
        chunker = make_chunker(strategy="recursive", size=size, unit="chars", separators=seps)
        for name, text in chroma_texts().items():
            fast, slow = _chunks_both(monkeypatch, chunker, text)
            assert fast == slow, name


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(["a", "b.", "\n", "\n\n", "\n \n", "\t", " ", "\r\n", "\x0b", "\x0c", "\n\t \n",
                                 "\n\n\n", " a", "日", "\ud800"]), max_size=40).map("".join))
def test_newlines_and_paragraphs_read_off_the_newlines(text):
    """The recursive chunker's usual pair of top levels ("\\n\\n", "\\n"), read off the newlines, is
    ``merge_levels`` of the regex scans (overlapping blank lines, blanks inside them, a text that
    opens with a newline or a blank line, a lone surrogate)."""
    found = [(Level.BLOCK, boundaries.paragraph_starts(text)), (Level.LINE, boundaries.literal_positions(text, "\n"))]
    assert recursive._newline_cuts(text) == charpack.merge_levels(found, 0, len(text))


def test_blank_lines_in_a_row_start_a_paragraph_every_other_newline():
    text = "\n\nab\n\n\ncd\n \n\n\n\ne\n"
    # paragraph_starts: 0 (dropped: a cut lies strictly inside), 4, 9, 12; never 5, 11, 13 (a match ended there)
    lines = [1, 4, 5, 6, 9, 11, 12, 13, 14, 16]
    blocks = {4, 9, 12}
    assert recursive._newline_cuts(text) == (lines, [Level.BLOCK if p in blocks else Level.LINE for p in lines])
