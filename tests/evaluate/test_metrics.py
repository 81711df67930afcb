import pytest
from hypothesis import given
from hypothesis import strategies as st

from chunkwise.evaluate import metrics as m
from chunkwise.evaluate.golden import Span


def test_holds_and_touches():
    assert m.holds(("a", 0, 10), ("a", 2, 10)) and not m.holds(("a", 0, 10), ("a", 2, 11))
    assert not m.holds(("b", 0, 10), ("a", 2, 5))
    assert m.touches(("a", 0, 10), ("a", 9, 20)) and not m.touches(("a", 0, 10), ("a", 10, 20))


def test_fits_and_straddle_on_a_hand_layout():
    chunks = [("a", 0, 100), ("a", 100, 200), ("a", 150, 260), ("b", 0, 50)]
    spans = [Span("a", 10, 40), Span("a", 90, 120), Span("a", 160, 230), Span("b", 40, 60), Span("c", 0, 1)]
    assert m.span_fits(spans, chunks) == [True, False, True, False, False]
    assert m.straddle_rate(spans, chunks) == pytest.approx(3 / 5)
    assert m.fits(spans[:1] + spans[2:3], chunks) and not m.fits(spans[:2], chunks)
    assert m.straddle_rate([], chunks) == 0.0


def test_ranks_recall_mrr_and_half_answers():
    s1 = [("a", 10, 20)]
    s2 = [("a", 10, 20), ("b", 0, 5)]
    p_hit2 = [("a", 0, 15), ("a", 5, 25), ("b", 0, 9)]  # top-1 cuts the span: a half-answer
    p_miss = [("c", 0, 99)]
    assert m.answered_rank(s1, p_hit2) == 2
    assert m.answered_rank(s2, p_hit2) == 3  # every span must be held whole
    assert m.answered_rank(s1, p_miss) is None and m.answered_rank([], p_hit2) is None
    results = [(s1, p_hit2), (s2, p_hit2), (s1, p_miss), (s1, [("a", 10, 20)])]
    assert m.recall_at_k(results, 1) == pytest.approx(1 / 4)
    assert m.recall_at_k(results, 2) == pytest.approx(2 / 4)
    assert m.recall_at_k(results, 3) == pytest.approx(3 / 4)
    assert m.mrr(results) == pytest.approx((1 / 2 + 1 / 3 + 0 + 1) / 4)
    assert m.half_answer(s1, p_hit2) and not m.half_answer(s1, p_miss) and not m.half_answer(s1, [])
    assert m.half_answer_rate(results) == pytest.approx(2 / 4)
    assert m.intact_in_top_k(s1, p_hit2, 2) and not m.intact_in_top_k(s1, p_hit2, 1)


def test_overlap_scores_by_hand():
    spans = [("a", 10, 20)]
    passages = [("a", 0, 15), ("a", 12, 30), ("b", 0, 10)]
    o = m.overlap_scores(spans, passages)
    # covered: [10,15) u [12,20) = 10 chars; retrieved 15 + 18 + 10 = 43 (other documents count too)
    assert (o.covered, o.retrieved, o.relevant) == (10, 43, 10)
    assert (o.recall, o.precision, o.iou) == (1.0, pytest.approx(10 / 43), pytest.approx(10 / 43))
    o = m.overlap_scores([("a", 10, 30), ("a", 50, 60)], [("a", 0, 20)])
    # covered 10 of 30; uncovered answer 20; IoU = 10 / (20 + 20)
    assert (o.recall, o.precision, o.iou) == (pytest.approx(1 / 3), 0.5, 0.25)
    assert m.overlap_scores(spans, []) == m.Overlap(0.0, 0.0, 0.0, 0, 0, 10)


def test_overlap_in_tokens_with_a_unit_measure():
    measure = m.unit_measure({"a": [0, 4, 8, 12, 16, 20]})  # six 4-char tokens
    assert measure("a", 0, 12) == 3 and measure("a", 5, 12) == 1 and measure("a", 9, 9) == 0
    o = m.overlap_scores([("a", 8, 16)], [("a", 0, 12)], measure)
    assert (o.covered, o.retrieved, o.relevant) == (1, 3, 2)
    assert o.iou == pytest.approx(1 / 4)
    with pytest.raises(KeyError, match="'zz'"):
        measure("zz", 0, 1)


ranges = st.tuples(st.sampled_from("ab"), st.integers(0, 60), st.integers(1, 25)).map(
    lambda t: (t[0], t[1], t[1] + t[2]))


def positions(rs):
    return {(d, i) for d, s, e in rs for i in range(s, e)}


@given(st.lists(ranges, min_size=1, max_size=4), st.lists(ranges, max_size=6))
def test_overlap_scores_match_a_character_set_reference(spans, passages):
    # Spans are made disjoint (as in Chroma's data); then every quantity is a plain set size.
    disjoint = []
    for s in spans:
        if not positions([s]) & positions(disjoint):
            disjoint.append(s)
    o = m.overlap_scores(disjoint, passages)
    covered = len(positions(disjoint) & positions(passages))
    retrieved = sum(e - s for _, s, e in passages)
    relevant = len(positions(disjoint))
    assert o.covered == covered and o.retrieved == retrieved and o.relevant == relevant
    assert o.recall == pytest.approx(covered / relevant)
    expect_iou = covered / (retrieved + relevant - covered) if retrieved + relevant - covered else 0
    assert o.iou == pytest.approx(expect_iou)


@given(st.lists(ranges, max_size=8), st.lists(ranges, max_size=8))
def test_span_fits_matches_brute_force(spans, chunks):
    assert m.span_fits(spans, chunks) == [any(m.holds(c, s) for c in chunks) for s in spans]


@given(st.lists(ranges, min_size=1, max_size=6))
def test_answered_rank_is_the_first_k_with_everything_intact(passages):
    spans = passages[-2:]  # every span is some passage, so the answer is always complete
    r = m.answered_rank(spans, passages)
    assert r is not None and m.intact_in_top_k(spans, passages, r)
    assert r == 1 or not m.intact_in_top_k(spans, passages, r - 1)


def test_inflation_sizes_coherence_duplicates():
    assert m.index_inflation([("a", 0, 10), ("a", 5, 15), ("b", 0, 5)], {"a": 15, "b": 5}) == pytest.approx(25 / 20)
    assert m.size_stats([3, 5, 10]) == m.SizeStats(3, 6.0, 10)
    assert m.size_stats([]) == m.SizeStats(0, 0.0, 0)
    texts = ["It ends.", "He said \"stop!\"  \n", "Is it (really?)", "mid sen", "", "a list:", "完了。"]
    assert m.boundary_coherence(texts) == pytest.approx(4 / 7)
    assert m.duplicate_rate([("a", 0, 10), ("a", 5, 15), ("b", 5, 15)]) == pytest.approx(5 / 30)
    assert m.duplicate_rate([("a", 0, 10), ("a", 5, 15), ("b", 5, 15)], k=1) == 0.0
    assert m.duplicate_rate([]) == 0.0


def test_context_latency_and_bytes(tmp_path):
    texts = {"a": "one two three four five"}
    words = lambda t: len(t.split())  # noqa: E731
    assert m.context_tokens([("a", 0, 7), ("a", 8, 13, "x y z")], words, texts) == 5
    with pytest.raises(ValueError, match="pass the documents"):
        m.context_tokens([("a", 0, 7)], words)
    assert m.percentile([4, 1, 3, 2], 50) == 2.5 and m.latency_p50([0.3]) == 0.3
    assert m.percentile([1, 2, 3, 4, 5], 90) == pytest.approx(4.6) and m.percentile([], 50) == 0.0
    with pytest.raises(ValueError):
        m.percentile([1], 101)
    assert m.index_bytes(["ab", "é"], vectors=2, dim=3) == 4 + 24
    db = tmp_path / "x.db"
    db.write_bytes(b"1234")
    (tmp_path / "x.db-wal").write_bytes(b"56")
    assert m.store_bytes(db) == 6 and m.store_bytes(tmp_path / "none.db") == 0


def test_score_and_summarise():
    spans = [("a", 10, 20)]
    qs = [m.score_question(spans, [("a", 0, 15), ("a", 5, 25)]), m.score_question(spans, [("b", 0, 10)])]
    assert qs[0].rank == 2 and qs[0].half_answer and qs[1].rank is None
    s = m.summarise(qs, ks=(1, 2))
    assert s["recall@1"] == 0.0 and s["recall@2"] == 0.5 and s["mrr"] == pytest.approx(0.25)
    assert s["half_answer_rate"] == 0.5 and s["overlap_recall"] == 0.5
    assert s["overlap_iou"] == pytest.approx((10 / 35) / 2)
    assert s["duplicate_rate"] == pytest.approx((10 / 35) / 2) and s["passages"] == 1.5
    assert m.summarise([]) == {}
