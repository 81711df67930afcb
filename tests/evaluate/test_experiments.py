"""Seed 001's overlap, merge and header experiments, reproduced on chunkwise's parts.

Figures are checked against the seed's with tolerances from the sampling error (3 binomial standard
errors over the questions asked here, combined with the seed's own), on corpora small enough to keep
each test within a few seconds."""
from __future__ import annotations

import argparse
import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chunkwise.api import make_chunker, n_windows
from chunkwise.cli.bench import add_bench_parser
from chunkwise.config import ChunkConfig
from chunkwise.errors import ConfigError
from chunkwise.evaluate import experiments as ex

pytest.importorskip("numpy")


def test_fact_corpus_is_the_seeds_corpus():
    corpus = ex.fact_corpus(0)
    lengths = [f.end - f.start for f in corpus.facts]
    # seed 001 block 2 prints: 100 documents, 94,519 words, 800 facts, evidence 18 / 26.1 / 34 words
    assert (len(corpus.docs), sum(map(len, corpus.docs)), len(corpus.facts)) == (100, 94_519, 800)
    assert (min(lengths), round(sum(lengths) / len(lengths), 1), max(lengths)) == (18, 26.1, 34)
    fact = corpus.facts[3]
    assert fact.query == "which committee approved the zortalka library"
    a, b = corpus.char_span(fact)
    assert corpus.texts()[fact.doc][a:b] == ("the zortalka library was built in the nemiho district tube begero line "
                                            "gerotu nemine mimiro it was approved by the linden committee in 1935 "
                                            "ligeli libebe")


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 2**16), docs=st.integers(1, 3), facts=st.integers(1, 3),
       size=st.integers(20, 80), frac=st.floats(0.0, 0.9))
def test_chunk_offsets_agree_with_the_window_arithmetic(seed, docs, facts, size, frac):
    """A fact fits a chunkwise window (by character offsets) exactly when the seed's word windows
    [t, t+S) with t = 0, D, 2D, ... contain it; evidence of at most O + 1 words always fits."""
    overlap = int(size * frac)
    corpus = ex.fact_corpus(seed, docs, facts, n_filler_words=60)
    chunker = make_chunker(ChunkConfig(strategy="fixed", size=size, overlap=overlap, unit="words"))
    texts = corpus.texts()
    chunks = [chunker.chunk(t) for t in texts]
    for f in corpus.facts:
        a, b = corpus.char_span(f)
        assert texts[f.doc][a:b].split() == list(corpus.docs[f.doc][f.start:f.end])
        n = len(corpus.docs[f.doc])
        starts = [i * (size - overlap) for i in range(n_windows(n, size, overlap))]
        by_words = any(t <= f.start and f.end <= min(t + size, n) for t in starts)
        by_chars = any(c.start_char <= a and b <= c.end_char for c in chunks[f.doc])
        assert by_chars == by_words
        if f.end - f.start <= overlap + 1:
            assert by_chars


@pytest.fixture(scope="module")
def sweep():
    return ex.overlap_sweep(100, (0, 10, 30, 34), seeds=[0], n_docs=60)


def test_overlap_sweep_matches_the_formula_and_the_seed(sweep):
    rows = {r.overlap: r for r in sweep.rows}
    for r in sweep.rows:
        assert r.questions == 480
        # measured straddling is a sample of the formula's probability (its long-document limit)
        assert abs(r.straddle_measured - r.straddle_formula) <= ex.sampling_tolerance(r.straddle_formula, r.questions)
        # a lexical ranker finds every fact that some chunk holds: recall is exactly 1 - straddling
        assert r.recall_given_fits == 1.0
        assert r.recall == pytest.approx(1 - r.straddle_measured)
        # the derivation: evidence of at most O + 1 words never straddles
        assert r.guaranteed_straddled == 0
        # the variance is the model's (recall ~ 1 - formula); the seed printed 3 decimals, so add half a unit
        seed_recall = ex.SEED_OVERLAP[r.overlap][3]
        tol = ex.sampling_tolerance(1 - r.straddle_formula, r.questions, ex.SEED_OVERLAP_QUESTIONS) + 0.0005
        assert abs(r.recall - seed_recall) <= tol
    assert rows[0].recall < rows[10].recall < rows[30].recall
    assert rows[30].guaranteed >= 0.8 * rows[30].questions  # at O=30 almost all evidence is within the guarantee
    assert rows[34].straddle_measured == 0.0 and rows[34].recall == 1.0  # all evidence <= 34 <= O + 1 words
    straddled = round(rows[0].straddle_measured * rows[0].questions)
    assert rows[0].half_answer_at_top1 >= 1 - ex.sampling_tolerance(1.0, straddled)  # seed: 100%


def test_overlap_inflation_is_the_closed_form(sweep):
    corpus = ex.fact_corpus(0, 60)
    total = sum(len(d) for d in corpus.docs)
    for r in sweep.rows:
        stored = sum(len(d) + (n_windows(len(d), 100, r.overlap) - 1) * r.overlap for d in corpus.docs)
        assert r.inflation == pytest.approx(stored / total, abs=1e-12)
    assert sweep.rows[-1].inflation < 100 / (100 - 34)  # short last windows keep it under S / (S - O)


def test_merge_hits_fewer_distinct_passages_and_over_fetch_restores_k():
    r = ex.merge_experiment(seed=0, size=100, overlap=50, k=5, fetch=15, n_docs=50)
    assert r.questions == 400 and r.raw_passages == 5.0
    # passages per question lie in 1..k, so their standard deviation is at most (k - 1) / 2
    tol = 3 * (r.k - 1) / 2 * math.sqrt(1 / r.questions + 1 / 800)
    seed_merged = ex.SEED_MERGE["merged"][0]
    assert abs(r.merged_passages - seed_merged) <= tol
    assert r.merged_passages + tol < r.k
    assert r.short_questions > 0.5
    assert r.merged_words < r.raw_words < r.refilled_words  # merging trims repeats; refilling adds new passages
    assert r.refilled_passages == r.k == ex.SEED_MERGE["refilled"][0]
    assert r.recall_refilled >= r.recall_raw


def test_merge_without_overlap_has_almost_nothing_to_merge():
    r = ex.merge_experiment(seed=1, size=100, overlap=0, k=5, fetch=5, n_docs=20)
    assert r.merged_passages > 4.9  # only two adjacent windows in one top-5 could merge, which is rare
    assert r.merged_words <= r.raw_words


def test_only_the_document_title_lifts_recall_at_1():
    res = ex.header_experiment(seeds=[0, 1])
    rows = {r.arm: r for r in res.rows}
    assert res.questions == 360
    for arm in ("no header", "section title only", "path without document title"):
        seed_r1 = ex.SEED_HEADERS[arm][1]
        assert abs(rows[arm].recall_at_1 - seed_r1) <= ex.sampling_tolerance(seed_r1, 360, ex.SEED_HEADER_QUESTIONS)
        assert rows[arm].recall_at_1_unnamed < 0.1  # without the product name: a guess among 30 manuals
    for r in res.rows:
        assert r.recall_at_1_named == 1.0  # when the body names the product the header has nothing to add
    assert rows["full path"].recall_at_1 == rows["full path"].recall_at_3 == 1.0
    words = [rows[a].words_per_chunk for a in ex.SEED_ARMS]
    assert words == sorted(words)
    # chunkwise's modes: heading paths start at the H1, so `title`, `path` and `full` all carry the product
    assert rows["none"].recall_at_1 < 0.5
    assert rows["title"].recall_at_1 == rows["path"].recall_at_1 == rows["full"].recall_at_1 == 1.0
    assert rows["path"].words_per_chunk == pytest.approx(rows["full path"].words_per_chunk)


def test_generators_refuse_impossible_sizes():
    with pytest.raises(ConfigError, match="unique name"):
        ex.fact_corpus(0, n_docs=300, facts_per_doc=8)
    with pytest.raises(ConfigError, match="products"):
        ex.product_manuals(0, n_products=200)
    with pytest.raises(ConfigError, match="overlap"):
        ex.overlap_sweep(100, (0, 100), seeds=[0], n_docs=1)
    with pytest.raises(ConfigError, match="fetch"):
        ex.merge_experiment(k=5, fetch=3, n_docs=1)


def _run(argv, capsys):
    parser = argparse.ArgumentParser(prog="chunkwise")
    add_bench_parser(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    code = args.func(args)
    return code, capsys.readouterr().out


def test_cli_bench_json_and_tables(capsys):
    code, out = _run(["bench", "overlap", "--seeds", "1", "--docs", "8", "--overlaps", "0,34", "--json"], capsys)
    doc = json.loads(out)
    assert code == 0 and [r["overlap"] for r in doc["rows"]] == [0, 34]
    assert doc["rows"][1]["straddle_measured"] == 0.0 and doc["seed_001"]["0"]["recall"] == 0.758
    code, out = _run(["bench", "overlap", "--seeds", "1", "--docs", "8", "--overlaps", "0"], capsys)
    assert code == 0 and "straddle (formula)" in out and "0.758" in out
    code, out = _run(["bench", "headers", "--seeds", "1", "--products", "6"], capsys)
    assert code == 0 and "path without document title" in out and "chunkwise --header" in out
    code, out = _run(["bench", "merge", "--docs", "6", "--mode", "hybrid", "--embedder", "hashing", "--json"], capsys)
    doc = json.loads(out)
    assert code == 0 and doc["mode"] == "hybrid" and doc["refilled_passages"] == 5.0


def test_cli_bench_bad_configuration_says_how_to_fix(capsys):
    with pytest.raises(ConfigError, match="overlap"):
        _run(["bench", "overlap", "--overlaps", "0,100", "--docs", "1", "--seeds", "1"], capsys)
    with pytest.raises(ConfigError, match="--embedder"):
        _run(["bench", "merge", "--mode", "dense", "--embedder", "none", "--docs", "1"], capsys)
    with pytest.raises(ConfigError, match="--seeds"):
        _run(["bench", "headers", "--seeds", "0"], capsys)
    with pytest.raises(SystemExit):
        _run(["bench", "overlap", "--overlaps", "a,b"], capsys)
