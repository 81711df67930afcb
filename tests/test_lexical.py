"""The one lexical analyzer (chunkwise.lexical): what a word is for every BM25 engine."""
import sqlite3

import pytest
from hypothesis import given, settings, strategies as st

from chunkwise.errors import ConfigError
from chunkwise.lexical import FieldWeights, LexicalFields, analyze, query_terms
from chunkwise.retrieve.fusion import Fusion


def test_stems_fold_case_and_diacritics():
    assert analyze("paged") == analyze("pages") == analyze("Paging") == analyze("PAGE") == ["page"]
    assert analyze("Café naïve Ärger") == analyze("CAFE NAIVE arger")
    assert analyze("ﬁle ｈｒ") == analyze("file hr")  # compatibility forms
    assert analyze("\u2121") == ["tel"]  # a compatibility decomposition in upper case is folded too
    assert analyze("roll_back, 42x; on-call") == ["roll", "back", "42x", "on", "call"]
    assert analyze("") == [] and analyze(" ,;- ") == []


def test_marks_of_other_scripts_stay_inside_their_word():
    assert analyze("हिन्दी भाषा") == ["हिन्दी", "भाषा"]  # the virama and vowel signs do not split it
    assert analyze("が") != analyze("か")  # the voicing mark is kept (only Latin/Greek/Cyrillic diacritics go)


def test_query_terms_are_distinct_in_order():
    assert query_terms("Pages page paging runs") == ["page", "run"]


TEXT = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=60)


@settings(max_examples=300, deadline=None)
@given(TEXT)
def test_terms_survive_the_index_tokenizer_whole(text):
    """What the stores rely on: FTS5's ascii tokenizer, over the space-joined terms, gives back exactly
    the terms (none is split, merged, case-changed or dropped)."""
    terms = analyze(text)
    assert all(t and not any(c.isspace() for c in t) for t in terms)
    db = sqlite3.connect(":memory:")
    db.execute("CREATE VIRTUAL TABLE f USING fts5(t, tokenize='ascii')")
    db.execute("CREATE VIRTUAL TABLE v USING fts5vocab(f, 'instance')")
    db.execute("INSERT INTO f(rowid, t) VALUES (1, ?)", (" ".join(terms),))
    assert [t for (t,) in db.execute("SELECT term FROM v ORDER BY offset")] == terms


@settings(max_examples=300, deadline=None)
@given(TEXT)
def test_analysis_is_stable(text):
    """Analysing the analysed text changes nothing but stems of stems: the fold is idempotent."""
    from chunkwise.lexical import _words

    folded = _words(text)
    assert _words(" ".join(folded)) == folded
    assert analyze(text) == analyze(text)


def test_fields_of_a_record():
    f = LexicalFields.of_record({"text": "Paged twice", "title": "Runbook", "heading_path": ["On-call", "Pager"]})
    assert f == LexicalFields("page twice", "runbook", "on call pager")
    assert f.terms() == (["page", "twice"], ["runbook"], ["on", "call", "pager"])


def test_weights_parse_and_fail_fast():
    assert FieldWeights.parse("title=2, heading=0.5") == FieldWeights(2.0, 0.5)
    assert FieldWeights.parse({"title": 3}).vector() == (1.0, 3.0, 1.5)  # heading keeps its default
    assert FieldWeights(0, 1).active() == ("body", "heading")
    for bad in ("title=x", "title", "body=2", "title=-1", "heading=inf"):
        with pytest.raises(ConfigError):
            FieldWeights.parse(bad)
    assert Fusion.parse("bm25=1,dense=0.5,k=30") == Fusion(1.0, 0.5, 30)
    for value in (FieldWeights(2, 0.25), Fusion(1, 0.5, 30)):
        assert type(value).parse(value.spec()) == value
    for bad in ("bm25=0,dense=0", "dense=-1", "sparse=1", "k=0.5", "k=0"):
        with pytest.raises(ConfigError):
            Fusion.parse(bad)
