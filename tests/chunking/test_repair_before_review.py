"""A unit longer than the cap is repaired, not parked (issue 24 item 8): a table row, a code line or a
word longer than the budget is cut at the best finer level that keeps the cap (sentence, word,
token) and the rest of it joins what follows; such chunks are served. Only a cut inside one unit
(``char_split``) stays in review."""
import pytest
from hypothesis import given, settings, strategies as st

from chunkwise import chunk_text

SIZE_REASONS = {"split_below_floor", "word_split", "table_row_split", "table_header_not_repeated"}
LONG_CELL = " ".join(f"evidence{i} of the incident timeline" for i in range(60))  # ~300 tokens


def covered(text, chunks, start, end):
    """Every non-space character of text[start:end] lies in some chunk."""
    spans = sorted((c.start_char, c.end_char) for c in chunks)
    return all(ch.isspace() or any(a <= i < b for a, b in spans) for i, ch in enumerate(text[start:end], start))


@pytest.mark.parametrize("strategy", ["structure", "table", "auto"])
def test_a_table_row_longer_than_the_cap_is_cut_at_words_and_served(strategy):
    table = "| id | note |\n|---|---|\n| 1 | short |\n| 2 | " + LONG_CELL + " |\n| 3 | short again |\n"
    text = "# Incidents\n\n" + table + "\nAfter the table.\n"
    chunks = chunk_text(text, strategy=strategy, size=64, acl=["a"])
    assert all(c.size <= 64 for c in chunks)
    assert not [c.reasons for c in chunks if c.needs_review]
    at = text.index(LONG_CELL)
    assert covered(text, chunks, at, at + len(LONG_CELL))
    # cut between words: no chunk starts or ends inside a word of the row
    for c in chunks:
        assert c.start_char == 0 or not (text[c.start_char - 1].isalnum() and text[c.start_char].isalnum())
        assert c.end_char == len(text) or not (text[c.end_char - 1].isalnum() and text[c.end_char].isalnum())


def test_a_code_line_longer_than_the_cap_is_served():
    line = "values = [" + ", ".join(f"'item_{i}'" for i in range(200)) + "]"
    text = "# Config\n\n```python\nimport os\n" + line + "\nprint(values)\n```\n"
    chunks = chunk_text(text, strategy="structure", size=64, acl=["a"])
    assert all(c.size <= 64 for c in chunks) and not any(c.needs_review for c in chunks)
    at = text.index(line)
    assert covered(text, chunks, at, at + len(line))


def test_a_word_longer_than_the_cap_is_cut_at_its_tokens_and_served():
    url = "https://example.com/" + "/".join(f"segment{i}" for i in range(150))  # one "word", ~600 tokens
    text = f"See {url} for the runbook.\n"
    chunks = chunk_text(text, strategy="structure", size=64, acl=["a"])
    assert len(chunks) > 5 and all(c.size <= 64 for c in chunks)
    assert not any(c.needs_review for c in chunks)


def test_a_cut_inside_one_unit_still_goes_to_review():
    # one WordPiece [UNK] of 30,000 characters: only a cut inside the unit can bound it in characters
    text = "Intro. " + "x" * 30_000 + " end."
    chunks = chunk_text(text, strategy="structure", size=64, format="text", acl=["a"])
    flagged = [c for c in chunks if c.needs_review]
    assert flagged and all(c.reasons == ("char_split",) for c in flagged)


ROW_WORDS = st.lists(st.sampled_from(["alpha", "beta", "gamma", "delta", "rollback", "x1", "42"]), min_size=1,
                     max_size=120).map(" ".join)


@settings(max_examples=40, deadline=None)
@given(st.lists(ROW_WORDS, min_size=1, max_size=6), st.sampled_from([32, 48, 64]),
       st.sampled_from(["structure", "table", "auto"]))
def test_tables_of_any_row_length_are_capped_covered_and_never_parked_for_size(rows, size, strategy):
    table = "| n | text |\n|---|---|\n" + "".join(f"| {i} | {r} |\n" for i, r in enumerate(rows))
    text = "# T\n\n" + table
    chunks = chunk_text(text, strategy=strategy, size=size, acl=["a"])
    assert all(c.size <= size for c in chunks)
    assert not any(set(c.reasons) & SIZE_REASONS for c in chunks if c.needs_review)
    assert covered(text, chunks, text.index("| n |"), len(text))
