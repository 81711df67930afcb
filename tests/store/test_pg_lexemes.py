"""The PostgreSQL row's lexical columns (``pg_lexemes.lexical``): each analysed term's count per
field, keyed by its tsvector lexeme — the term itself, or a digest for a term over PostgreSQL's
lexeme limit. The counting is written for speed (it runs for every chunk written); these tests hold
it to the plain definition, and check that a long word is indexed and found on a real server."""
from hypothesis import given, settings, strategies as st

from chunkwise.lexical import FIELDS, LexicalFields
from chunkwise.store.postgres.pg_lexemes import MAX_LEXEME_BYTES, lexeme, lexical

# Words near the limit in one-, three- and four-byte characters, and short ones.
WORDS = st.one_of(
    st.sampled_from(["rollback", "deploys", "deploy", "pager", "Café", "cafe"]),
    st.integers(500, 530).map(lambda n: "語" * n),  # 1,500-1,590 bytes: under the limit, past the fast path
    st.integers(680, 700).map(lambda n: "語" * n),  # over 2,046 bytes
    st.integers(505, 515).map(lambda n: "\U00020000" * n),  # 4-byte letters, either side of the limit
    st.integers(2040, 2050).map(lambda n: "x" * n),
)
TEXT = st.lists(WORDS, max_size=12).map(" ".join)


def plain(record) -> tuple[list[str], dict[str, list[int]], int]:
    fields = LexicalFields.of_record(record)
    counts: dict[str, list[int]] = {}
    for i, terms in enumerate(fields.terms()):
        for t in terms:
            counts.setdefault(lexeme(t), [0] * len(FIELDS))[i] += 1
    return sorted(counts), counts, len(fields.terms()[0])


@settings(max_examples=200, deadline=None)
@given(TEXT, TEXT, st.lists(TEXT, max_size=3))
def test_counts_are_the_plain_definition(text, title, headings):
    record = {"text": text, "embed_text": text, "title": title, "heading_path": headings}
    fields, terms, counts, length = lexical(record)
    assert fields == LexicalFields.of_record(record)
    assert (terms, counts, length) == plain(record)
    assert all(len(t.encode("utf-8")) <= MAX_LEXEME_BYTES for t in terms)


def test_a_word_over_the_lexeme_limit_is_found_on_postgres(tmp_path, pg_url):
    from chunkwise.config import ChunkConfig
    from chunkwise.embed import make_embedder
    from chunkwise.pipeline import ingest
    from chunkwise.retrieve import Retriever

    # One token each for the chunker (a word piece over 100 characters is one unknown token), so
    # the word stays whole in its chunk; 2,100 and 1,800 bytes.
    long_word, short = "x" * 2100, "y" * 1800
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.md").write_text(f"# Glossary\n\nThe term {long_word} means rollback.\n", encoding="utf-8")
    (tmp_path / "docs" / "b.md").write_text(f"# Other\n\nThe term {short} means deploy.\n", encoding="utf-8")
    ingest([tmp_path / "docs"], pg_url, ChunkConfig(strategy="structure", size=256),
           embedder=make_embedder("hashing"), acl="staff")
    with Retriever(pg_url) as r:
        for word, doc in ((long_word, "a.md"), (short, "b.md")):
            hits = r.rank(word, ["staff"], 5, "bm25")
            rows = {c.key: c for c in r.store.chunks(keys=[k for k, _ in hits])}
            assert [rows[k].record["doc_id"].rsplit("/", 1)[-1] for k, _ in hits] == [doc]
