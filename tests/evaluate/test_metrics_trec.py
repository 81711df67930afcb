"""recall@k and MRR cross-checked against trec_eval (pytrec_eval, a test dependency only): each
span of a question is one trec query whose relevant documents are the passages holding it whole;
a question is answered at the rank where its *last* span is first held, so its reciprocal rank is
the smallest of its spans' ``recip_rank`` and it counts for recall@k when every span has
``success_k``."""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chunkwise.evaluate import metrics as m

pytrec_eval = pytest.importorskip("pytrec_eval")

KS = (1, 3, 5, 10)
ranges = st.tuples(st.sampled_from("abc"), st.integers(0, 40), st.integers(1, 20)).map(
    lambda t: (t[0], t[1], t[1] + t[2]))
questions = st.lists(st.tuples(st.lists(ranges, min_size=1, max_size=3), st.lists(ranges, max_size=12)),
                     min_size=1, max_size=8)


def trec(results):
    """Per question: (min recip_rank, {k: all spans success_k}) as trec_eval computes them."""
    qrels, run = {}, {}
    for q, (spans, passages) in enumerate(results):
        for i, span in enumerate(spans):
            qid = f"q{q}s{i}"
            # "absent" is judged relevant and never retrieved: a span no passage holds scores 0
            qrels[qid] = {"absent": 1, **{f"p{r}": 1 for r, p in enumerate(passages) if m.holds(p, span)}}
            run[qid] = {f"p{r}": float(len(passages) - r) for r in range(len(passages))} or {"none": 0.0}
    measures = {"recip_rank", "success." + ",".join(map(str, KS))}
    scores = pytrec_eval.RelevanceEvaluator(qrels, measures).evaluate(run)
    out = []
    for q, (spans, _) in enumerate(results):
        per_span = [scores[f"q{q}s{i}"] for i in range(len(spans))]
        out.append((min(s["recip_rank"] for s in per_span),
                    {k: all(s[f"success_{k}"] == 1.0 for s in per_span) for k in KS}))
    return out


@settings(max_examples=150, deadline=None)
@given(questions)
def test_recall_and_mrr_equal_trec_eval(results):
    expected = trec(results)
    assert m.mrr(results) == pytest.approx(sum(rr for rr, _ in expected) / len(results))
    for k in KS:
        assert m.recall_at_k(results, k) == pytest.approx(sum(hits[k] for _, hits in expected) / len(results))
    for (spans, passages), (rr, _) in zip(results, expected):
        assert m.reciprocal_rank(m.answered_rank(spans, passages)) == pytest.approx(rr)


def test_a_hand_case_through_trec_eval():
    spans = [("a", 10, 20), ("b", 0, 5)]
    passages = [("a", 0, 15), ("a", 5, 25), ("b", 0, 9)]  # the first cuts span a; b comes third
    [(rr, hits)] = trec([(spans, passages)])
    assert rr == pytest.approx(1 / 3) and (hits[1], hits[3]) == (False, True)
    assert m.mrr([(spans, passages)]) == pytest.approx(1 / 3)
