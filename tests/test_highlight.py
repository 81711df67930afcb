"""Marks for a reader come from the search analyzer: stemmed and folded forms match, stopwords never."""
from hypothesis import given, settings, strategies as st

from chunkwise.highlight import STOPWORDS, _wordish, spans, terms
from chunkwise.lexical import analyze


def marked(text, query):
    return [text[s:e] for s, e in spans(text, terms(query))]


def test_stemmed_and_folded_forms_match():
    text = "Deploys are deployed by the deploying robot. The Café closes; CAFE opens."
    assert marked(text, "deploy") == ["Deploys", "deployed", "deploying"]
    assert marked(text, "cafe") == ["Café", "CAFE"]


def test_stopwords_are_never_marked():
    assert terms("how do I rotate the key") == ("rotat", "key")
    assert terms("what is it") == () and marked("what is it", "what is it") == []
    # a query word that stems like a stopword (doe, the deer) still never marks the stopword "does"
    assert marked("Does the doe run?", "doe") == ["doe"]


def test_words_of_other_scripts_and_compatibility_forms():
    assert marked("हिन्दी भाषा और", "भाषा") == ["भाषा"]
    assert marked("call ℡ now", "tel") == ["℡"]
    assert marked("ｆｉｌｅ and ﬁles", "file") == ["ｆｉｌｅ", "ﬁles"]


TEXT = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=60)
WORDS = st.lists(st.sampled_from(["rotate", "rotating", "the", "Keys", "key", "is", "café", "cafe", "a", "ﬁle"]),
                 max_size=12).map(" ".join)


@settings(max_examples=300, deadline=None)
@given(st.one_of(TEXT, WORDS), st.one_of(TEXT, WORDS))
def test_spans_are_whole_words_whose_terms_the_query_has(text, query):
    wanted = terms(query)
    assert set(wanted) <= set(analyze(query))
    found = spans(text, wanted)
    assert all(s < e for s, e in found) and all(a[1] <= b[0] for a, b in zip(found, found[1:]))
    for s, e in found:
        assert set(analyze(text[s:e])) & set(wanted)
        assert text[s:e].casefold() not in STOPWORDS
        assert not (s > 0 and _wordish(text[s - 1])) and not (e < len(text) and _wordish(text[e]))


@settings(max_examples=200, deadline=None)
@given(WORDS, WORDS)
def test_every_word_of_a_query_term_is_marked(text, query):
    wanted = set(terms(query))
    expected = [w for w in text.split() if w.casefold() not in STOPWORDS and set(analyze(w)) & wanted]
    assert marked(text, query) == expected
