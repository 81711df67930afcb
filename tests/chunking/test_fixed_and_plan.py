"""Fixed windows reproduce seed 000; the planner's closed forms match the real chunker (seed 001)."""
import random

import pytest

from chunkwise import ConfigError, plan
from chunkers import chunk_text
from chunkwise.api import n_windows, straddle_probability

POLICY = "Rollback failure page on-call within 15 minutes with deploy ID. Routine deploy notes archive within 14 days."


def words_of(chunks):
    return [c.text.split() for c in chunks]


def test_seed_000_four_windows():
    chunks = chunk_text(POLICY, strategy="fixed", size=6, overlap=2, unit="words")
    assert [c.text for c in chunks] == [
        "Rollback failure page on-call within 15",
        "within 15 minutes with deploy ID.",
        "deploy ID. Routine deploy notes archive",
        "notes archive within 14 days.",
    ]
    assert all(c.text == POLICY[c.start_char : c.end_char] for c in chunks)


@pytest.mark.parametrize("overlap,count,indexed", [(0, 3, 17), (2, 3, 21), (4, 5, 33)])
def test_seed_000_overlap_costs(overlap, count, indexed):
    chunks = chunk_text(POLICY, strategy="fixed", size=7, overlap=overlap, unit="words")
    assert len(chunks) == count
    assert sum(len(c.text.split()) for c in chunks) == indexed
    rule = ("rollback failure", "15 minutes", "deploy id")
    assert not any(all(t in c.text.lower() for t in rule) for c in chunks)  # 10-word rule never fits 7


def test_no_duplicated_tail_window():
    chunks = chunk_text(" ".join(["w"] * 12), strategy="fixed", size=6, overlap=0, unit="words")
    assert len(chunks) == 2


@pytest.mark.parametrize("size,overlap", [(6, 6), (6, 9), (0, 0)])
def test_bad_overlap_fails_fast_with_a_fix(size, overlap):
    with pytest.raises(ConfigError) as err:
        chunk_text(POLICY, strategy="fixed", size=size, overlap=overlap, unit="words")
    assert "size" in str(err.value)


def test_unknown_strategy_suggests_the_name():
    with pytest.raises(ConfigError, match="did you mean 'structure'"):
        chunk_text("x", strategy="structur")


@pytest.mark.parametrize("size,overlap", [(10, 0), (10, 2), (100, 25), (200, 50), (64, 31)])
def test_closed_forms_match_the_chunker(size, overlap):
    """Seed 001 block 1: chunk count and stored words, for every document length 1..699."""
    vocab = [f"w{i}" for i in range(50)]
    rng = random.Random(size * 1000 + overlap)
    for total in range(1, 700, 7 if size >= 100 else 1):
        text = " ".join(rng.choice(vocab) for _ in range(total))
        chunks = chunk_text(text, strategy="fixed", size=size, overlap=overlap, unit="words")
        assert len(chunks) == n_windows(total, size, overlap)
        assert sum(c.size for c in chunks) == total + (len(chunks) - 1) * overlap


def test_plan_table_of_seed_001():
    rows = {o: plan(200, o, 100_000) for o in (0, 20, 40, 50, 100)}
    assert [rows[o].chunks for o in rows] == [500, 556, 625, 667, 999]
    assert [rows[o].stored_units for o in rows] == [100_000, 111_100, 124_960, 133_300, 199_800]
    assert rows[50].limit_inflation == pytest.approx(4 / 3)
    assert rows[50].guaranteed_evidence == 51


@pytest.mark.parametrize("size,overlap,n0,n1", [(1000, 200, 172, 216), (2000, 500, 85, 113), (5000, 500, 34, 38)])
def test_published_azure_counts_within_one_percent(size, overlap, n0, n1):
    assert n1 / n0 == pytest.approx(plan(size, overlap).limit_inflation, rel=0.01)


@pytest.mark.parametrize("size,overlap,evidence", [(100, 0, 26), (100, 10, 26), (100, 20, 30), (50, 10, 12), (20, 5, 21)])
def test_straddle_probability_matches_measurement(size, overlap, evidence):
    """Place evidence at every offset of a long document; count how often no window holds it whole."""
    total = 6000
    chunks = chunk_text(" ".join(f"w{i}" for i in range(total)), strategy="fixed", size=size, overlap=overlap,
                        unit="words")
    windows = [(int(c.text.split()[0][1:]), int(c.text.split()[-1][1:]) + 1) for c in chunks]
    offsets = range(0, total - evidence - size)
    straddled = sum(not any(a <= s and s + evidence <= b for a, b in windows) for s in offsets)
    measured = straddled / len(offsets)
    assert measured == pytest.approx(straddle_probability(size, overlap, evidence), abs=0.01)
    if evidence <= overlap + 1:
        assert measured == 0


def test_plan_guarantee_holds_for_o_plus_one():
    p = plan(30, 9, 5000, 10)
    assert p.straddle_probability == 0.0
    assert straddle_probability(30, 9, 11) > 0


def test_token_windows_keep_words_whole():
    text = "Deferred tax expires. " * 200
    chunks = chunk_text(text, strategy="fixed", size=16, overlap=4, backend="tokenizers")
    for c in chunks:
        assert c.text[0].isalpha() and c.text[0] in "Dtde"
        assert not c.needs_review
    assert chunks[-1].end_char == len(text.rstrip())
