"""The cap bounds text, not only units (issue 10 item 7), and nothing is parked unreachable (issue 15
item 5): characters per chunk, fixed windows re-measured and whole-word, wide table headers, long
"sentences" such as tables under the sentence packer."""
import re

import pytest
from conftest import sizer

from chunkers import chunk_text
from chunkwise.chunking.base import CHARS_PER_UNIT
from chunkwise.chunking.router import STRATEGY_CLASSES
from chunkwise.enrich.records import READY, build_records
from chunkwise.types import Document

SEMANTIC = {"semantic_embedder": "hashing", "semantic_threshold": 0.2}


def options(strategy):
    if strategy == "sentence_window":
        return {"window": 2, "overlap": 1}
    return SEMANTIC if strategy == "semantic" else {}


@pytest.mark.parametrize("strategy", sorted(STRATEGY_CLASSES))
def test_a_word_counted_as_one_token_is_still_bounded_in_characters(strategy):
    # MiniLM's WordPiece maps any word over 100 characters to one [UNK]: 30,000 characters "fit" 2 tokens.
    text = "Intro words here. " + "x" * 30_000 + " and the end."
    chunks = chunk_text(text, strategy=strategy, size=64, format="text", **options(strategy))
    bound = 64 * CHARS_PER_UNIT["tokens"]
    assert all(len(c.embed_text) <= bound for c in chunks), max(len(c.embed_text) for c in chunks)
    assert all(c.text == text[c.start_char:c.end_char] for c in chunks)
    s = sizer("tokens")
    assert all(s.count(c.embed_text) == c.size <= 64 for c in chunks)
    inside = [c for c in chunks if set(c.text) == {"x"}]
    assert len(inside) >= 30_000 // bound and all(c.needs_review and "char_split" in c.reasons for c in inside)
    covered = "".join(c.text for c in chunks if "x" in c.text).count("x")
    assert covered >= 30_000  # nothing lost (overlapping strategies may repeat some)


def test_twenty_megabytes_without_spaces_in_tokens():
    text = "y" * 20_000_000
    chunks = chunk_text(text, strategy="recursive", size=256, format="text")
    bound = 256 * CHARS_PER_UNIT["tokens"]
    assert len(chunks) == -(-len(text) // bound)
    assert all(len(c.text) <= bound and "char_split" in c.reasons for c in chunks[:-1])


KOREAN = ("대한민국의 경제는 1994–95년에 빠르게 성장하였다. 정부는 수출 중심의 산업 정책을 추진했으며, "
          "반도체와 자동차 산업이 크게 발전했다. 1997년 외환 위기 이후 구조 조정이 진행되었고, 금융 시장은 "
          "개방되었다. 통계청 자료에 따르면 실업률은 1998년에 7.0%까지 상승했다가 점차 하락했다. ") * 30


@pytest.mark.parametrize("backend", ["tokenizers", "auto"])
def test_fixed_token_windows_never_exceed_the_cap_nor_start_mid_word(backend):
    chunks = chunk_text(KOREAN, strategy="fixed", size=100, overlap=20, backend=backend)
    s = sizer("tokens", "minilm", backend)
    assert [s.count(c.embed_text) for c in chunks] == [c.size for c in chunks]  # reported = re-measured
    assert max(c.size for c in chunks) <= 100
    for c in chunks:
        assert c.start_char == 0 or KOREAN[c.start_char - 1].isspace(), KOREAN[c.start_char - 5:c.start_char + 5]
        assert c.end_char == len(KOREAN) or KOREAN[c.end_char].isspace()
    assert not any(c.text.startswith("95") for c in chunks)
    # the overlap is whole words of at most 20 tokens
    for a, b in zip(chunks, chunks[1:]):
        shared = KOREAN[b.start_char:a.end_char]
        assert s.count(shared) <= 20


def test_fixed_words_keep_the_seed_windows_and_bound_characters():
    text = "alpha " * 10 + "z" * 5000 + " omega" * 3
    chunks = chunk_text(text, strategy="fixed", size=4, overlap=1, unit="words")
    assert all(len(c.embed_text) <= 4 * CHARS_PER_UNIT["words"] for c in chunks)
    assert any("char_split" in c.reasons for c in chunks)


WIDE = ("| " + " | ".join(f"Hospital department name {i} (annual figures)" for i in range(8)) + " |\n"
        "|" + "---|" * 8 + "\n" + "".join("| " + " | ".join(str(r * 8 + i) for i in range(8)) + " |\n"
                                          for r in range(60)))


@pytest.mark.parametrize("strategy", ["table", "auto"])
def test_a_table_header_wider_than_the_cap_is_not_repeated(strategy):
    text = "## Capacity\n\n" + WIDE
    chunks = chunk_text(text, strategy=strategy, size=64)
    tables = [c for c in chunks if c.kind == "table"]
    rows = WIDE.splitlines()[2:]
    assert len(tables) < len(rows)  # not thousands of 1-3-token slivers
    assert not any(c.needs_review for c in tables)  # whole rows a reader can read: served (issue 24 item 8)
    assert min(c.size for c in tables if not c.text.startswith("| Hospital")) > 16
    for row in rows:  # every row whole in some chunk: rows fit, so none is split
        assert any(row in c.text for c in tables), row
    s = sizer("tokens")
    assert all(s.count(c.embed_text) == c.size <= 64 for c in chunks)


TABLE_DOC = "# Rates\n\nThe table lists the contract rates per region.\n\n" + (
    "| Region | Rate | Contact | Notes |\n| --- | --- | --- | --- |\n" + "".join(
        f"| Region {i} | {i * 7} EUR per hour | ops-{i}@example.com | billed monthly in arrears |\n"
        for i in range(40))
) + "\nRates are reviewed every year. Questions go to finance.\n"


def test_sentences_128_on_a_table_leaves_nothing_in_review():
    chunks = chunk_text(TABLE_DOC, strategy="sentences", size=128)
    assert not any(c.needs_review for c in chunks), [c.reasons for c in chunks if c.needs_review]
    for line in TABLE_DOC.splitlines():
        if line.startswith("| Region "):
            assert any(line in c.text for c in chunks), line  # each row whole, so its answer is findable
    doc = Document("rates.md", "rates.md", "text/markdown", TABLE_DOC)
    records = build_records(doc, chunks, chunker="x", header_mode="none", embed_model="none", acl=["staff"],
                            now="2026-01-01T00:00:00Z")
    assert {r.quality for r in records} == {READY}


@pytest.mark.parametrize("strategy", ["sentences", "sentence_window", "semantic"])
def test_a_sentence_over_the_cap_packs_with_its_neighbours_unflagged(strategy):
    long = " ".join(f"clause {i} of the agreement" for i in range(60))  # one 300-word sentence
    text = f"Short intro. {long}. Short outro sentence."
    chunks = chunk_text(text, strategy=strategy, size=64, format="text", **options(strategy))
    assert not any(c.needs_review for c in chunks)
    assert all(re.fullmatch(r"\S.*\S", c.text, re.S) for c in chunks)
    if strategy != "sentence_window":  # windows count sentences; the packers let the tail join the next one
        assert any(c.text.endswith("Short outro sentence.") and "clause 59" in c.text for c in chunks)


def test_sentence_window_size_is_measured_when_sentences_touch():
    # found by the property test: "x 。" and "0" are two sentences (a CJK stop needs no space) of
    # 2 + 1 words, but "x 。0" is 2 words
    [chunk] = chunk_text("x 。0", strategy="sentence_window", window=2, overlap=0, size=3, unit="words")
    assert chunk.size == len(chunk.embed_text.split()) == 2
