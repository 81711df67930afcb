"""Context assembly that never loses a top hit to the budget (issue 15 item 1): bounded passages,
cut around the best chunk, expansion reasons that name the expansion, k distinct passages."""
import json

import pytest
from hypothesis import example, given, settings, strategies as st

from conftest import BACKENDS, ItemSource as Source, module_location, sizer, words

from chunkwise.cli.main import main
from chunkwise.config import ChunkConfig
from chunkwise.errors import ConfigError
from chunkwise.pipeline import ingest
from chunkwise.retrieve import Retriever
from chunkwise.retrieve.context import render
from chunkwise.retrieve.index import Item
from chunkwise.retrieve.merge import to_passage
from chunkwise.retrieve.passages import group_hits
from chunkwise.retrieve.store import finish

REASONS = {"budget", "passage_budget", "neighbours_over_budget", "parent_over_budget", "stale_link",
           "parent_not_permitted"}


def turns(doc="call.txt", n=11, words_per_turn=20, acl=lambda i: ("staff",), sections=1):
    """A transcript: ``n`` consecutive turns, one chunk each, separated by a newline."""
    text, items = "", []
    for i in range(n):
        turn = f"Speaker {i % 2}: " + " ".join(f"t{i}w{j}" for j in range(words_per_turn - 2)) + "."
        start = len(text)
        text += turn + "\n"
        items.append(Item(f"{doc}-{i:02d}", doc, i, start, start + len(turn), turn, acl=acl(i),
                          section_id=f"{doc}-s{i * sections // n}", source_version="v1"))
    return text, items


def ranked(items, order):
    return [items[i].hit(1.0 / r, r) for r, i in enumerate(order, start=1)]


# --- the measured failure: a merged passage larger than the budget -----------------------------

def test_a_budget_smaller_than_a_merged_passage_still_sends_the_best_chunk():
    _, call = turns()  # 11 turns x 20 words
    faq = Item("faq.md-00", "faq.md", 0, 0, 23, "Short answer here: yes.", source_version="v1")
    # Every turn matches; the answer sits in turn 6, ranked first, and the next hits spread out from
    # it, so unbounded they merge into one 220-word passage that a 100-word budget cannot take (the
    # old assembly dropped it whole and sent only the FAQ).
    hits = ranked(call, [6, 5, 7, 4, 8, 3, 9, 2, 10, 1, 0]) + [faq.hit(0.01, 12)]
    res = finish("q", "bm25", hits, None, ["staff"], "none", 100, words, k=2, passage_budget=None)
    first = res.passages[0]
    assert first.best_chunk_id == "call.txt-06"
    # The best chunk, then its best-ranked neighbours while they fit (4 x 20 words + the citation).
    assert first.chunk_ids == ("call.txt-04", "call.txt-05", "call.txt-06", "call.txt-07")
    assert first.text in res.context and res.context_tokens <= 100
    cut = [o for o in res.omitted if o.passage == 1]
    assert [o.reason for o in cut] == ["budget"] and len(cut[0].chunk_ids) == 7
    assert "around its best chunk" in cut[0].detail
    # Assembly went on with the next passage.
    assert [p.doc_id for p in res.passages] == ["call.txt", "faq.md"]
    assert len(res.omitted) == 1


def test_the_default_passage_budget_bounds_a_merged_passage_around_its_best_chunk():
    _, call = turns()
    hits = ranked(call, [6, 5, 7, 2, 9, 0, 10, 1, 3, 4, 8])
    plan = group_hits(hits, 3, words, passage_budget=70)
    sizes = [words(g.passage().text) for g in plan.groups]
    assert all(s <= 70 for s in sizes), sizes
    first = plan.groups[0]
    assert first.seed == "call.txt-06" and [p.chunk_id for p in first.pieces] == ["call.txt-05", "call.txt-06", "call.txt-07"]
    # The hits that touch a full passage start passages of their own: three distinct passages.
    assert len(plan.groups) == 3 and len({g.seed for g in plan.groups}) == 3


def test_a_hit_overlapping_a_full_passage_is_reported_not_sent_twice():
    text = " ".join(f"w{i}" for i in range(60))
    spans = [(0, 90), (60, 150), (120, 210)]  # overlapping windows
    items = [Item(f"c{i}", "doc", i, s, e, text[s:e], source_version="v1") for i, (s, e) in enumerate(spans)]
    plan = group_hits(ranked(items, [0, 2, 1]), None, lambda t: len(t), passage_budget=100)
    assert [[p.chunk_id for p in g.pieces] for g in plan.groups] == [["c0"], ["c2"]]
    assert [(o.chunk_ids, o.reason) for o in plan.omitted] == [(("c1",), "passage_budget")]


# --- expansion reasons name the expansion --------------------------------------------------------

@pytest.mark.parametrize("expand", ["neighbours", "parent"])
def test_an_expansion_that_does_not_fit_is_reported_under_its_own_name(expand):
    _, call = turns(sections=2)
    hits = ranked(call, [3])
    res = finish("q", "bm25", hits, Source(call), ["staff"], expand, 30, words, k=1)
    assert [p.chunk_ids for p in res.passages] == [("call.txt-03",)]
    assert [(o.reason, o.passage) for o in res.omitted] == [(f"{expand}_over_budget", 1)]
    roomy = finish("q", "bm25", hits, Source(call), ["staff"], expand, None, words, k=1)
    assert roomy.passages[0].expanded_from == ("call.txt-03",) and not roomy.omitted


def test_neighbours_that_do_not_fit_are_cut_one_by_one_not_dropped_with_the_hit():
    _, call = turns()
    res = finish("q", "bm25", ranked(call, [3]), Source(call), ["staff"], "neighbours", 50, words, k=1)
    assert len(res.passages[0].chunk_ids) == 2 and "call.txt-03" in res.passages[0].chunk_ids
    assert [o.reason for o in res.omitted] == ["neighbours_over_budget"]


def test_stale_expansion_keeps_the_hit_and_says_why():
    _, call = turns()
    res = finish("q", "bm25", ranked(call, [3]), Source(call, version="v2"), ["staff"], "neighbours", None, words, k=1)
    assert [p.chunk_ids for p in res.passages] == [("call.txt-03",)]
    assert [o.reason for o in res.omitted] == ["stale_link"]


def test_neighbour_expansion_never_takes_another_passages_hit():
    _, call = turns()
    res = finish("q", "bm25", ranked(call, [3, 5]), Source(call), ["staff"], "neighbours", None, words, k=2)
    assert [p.chunk_ids for p in res.passages] == [("call.txt-02", "call.txt-03", "call.txt-04"),
                                                   ("call.txt-05", "call.txt-06")]


def test_a_parent_holding_two_passages_makes_one_and_the_next_hit_refills_k():
    _, call = turns(n=10, sections=2)  # sections: turns 0-4 and 5-9
    _, faq = turns("faq.md", n=4, sections=4)
    hits = ranked(call, [1, 3]) + [faq[2].hit(0.1, 3)]
    res = finish("q", "bm25", hits, Source(call + faq), ["staff"], "parent", None, words, k=2)
    assert [p.chunk_ids for p in res.passages] == [tuple(f"call.txt-{i:02d}" for i in range(5)), ("faq.md-02",)]


# --- k distinct passages through a real store ----------------------------------------------------

@pytest.fixture(scope="module", params=BACKENDS)
def transcript_store(request, tmp_path_factory):
    root = tmp_path_factory.mktemp("docs")
    (root / "call.md").write_text(
        "# Call\n\n" + "\n\n".join(f"Rollback turn {i}: the rollback of release {i} was rolled back, rollback "
                                   f"again, rollback notes." for i in range(6)) + "\n", encoding="utf-8")
    (root / "runbook.md").write_text(
        "# Runbook\n\n" + "Deploys go out on Tuesdays after the freeze lifts and the pager is handed over. " * 3
        + "A rollback is done from the release page.\n", encoding="utf-8")
    db = module_location(request, tmp_path_factory, request.param)
    ingest([root], db, ChunkConfig(strategy="paragraphs", size=40), acl=("staff",))
    return db


def test_k2_returns_two_passages_when_six_consecutive_hits_merge(transcript_store, capsys):
    with Retriever(transcript_store) as r:
        top = r.hits(r.rank("rollback", ["staff"], 6, "bm25"), ["staff"])
        assert {h.doc_id for h in top} == {"call.md"}  # the six best hits are the six consecutive turns
        res = r.search("rollback", ["staff"], k=2, mode="bm25")
    assert [p.doc_id for p in res.passages] == ["call.md", "runbook.md"]
    assert len(res.passages[0].chunk_ids) >= 6
    assert main(["search", "rollback", "--db", str(transcript_store), "--groups", "staff", "--k", "2",
                 "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert len(out["results"]) == 2 and out["results"][0]["best_chunk_id"] in out["results"][0]["chunk_ids"]


def test_passage_budget_flag_and_bad_values(transcript_store, capsys):
    assert main(["search", "rollback", "--db", str(transcript_store), "--groups", "staff", "--k", "2",
                 "--passage-budget", "40", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert len(out["results"]) == 2 and all(r["doc_id"] == "call.md" for r in out["results"])
    for bad in ("0", "-3", "many"):
        with pytest.raises(SystemExit) as exit_:
            main(["search", "rollback", "--db", str(transcript_store), "--groups", "staff", "--passage-budget", bad])
        assert exit_.value.code == 2 and "--passage-budget" in capsys.readouterr().err
    assert main(["search", "rollback", "--db", str(transcript_store), "--groups", "staff", "--k", "2",
                 "--passage-budget", "none", "--json"]) == 0
    assert len(json.loads(capsys.readouterr().out)["results"]) == 2
    with Retriever(transcript_store) as r, pytest.raises(ConfigError):
        r.search("rollback", ["staff"], passage_budget=0)


# --- properties ----------------------------------------------------------------------------------

def corpus(overlap):
    """Two documents of 14 chunks (windows of 12 words, ``overlap`` shared), some chunks forbidden."""
    items = []
    for d, doc in enumerate(("a.md", "b.md")):
        toks = [f"{doc[0]}{i}" for i in range(200)]
        step = 12 - overlap
        for i in range(14):
            lo = i * step
            text = " ".join(toks[lo:lo + 12])
            start = len(" ".join(toks[:lo])) + (1 if lo else 0)
            acl = ("secret",) if (i * 7 + d) % 5 == 0 else ("staff",)
            items.append(Item(f"{doc}{i:02d}", doc, i, start, start + len(text), text, acl=acl,
                              section_id=f"{doc}s{i // 4}", source_version="v1"))
    texts = {doc: " ".join(f"{doc[0]}{i}" for i in range(200)) for doc in ("a.md", "b.md")}
    return items, texts


MEASURES = {"words": words}


def measure_of(name):
    if name not in MEASURES:
        MEASURES[name] = sizer("tokens", name).count
    return MEASURES[name]


@settings(max_examples=150, deadline=None)
@given(overlap=st.sampled_from([0, 3, 6]), picks=st.lists(st.integers(0, 27), min_size=1, max_size=16, unique=True),
       k=st.integers(1, 8), budget=st.one_of(st.none(), st.integers(1, 300)),
       passage_budget=st.one_of(st.none(), st.integers(1, 80)),
       expand=st.sampled_from(["none", "neighbours", "parent"]), tokenizer=st.sampled_from(["words", "cl100k_base"]))
@example(overlap=6, picks=[0, 1, 2], k=1, budget=None, passage_budget=1, expand="none", tokenizer="words")
def test_assembly_properties(overlap, picks, k, budget, passage_budget, expand, tokenizer):
    items, texts = corpus(overlap)
    allowed = {it.chunk_id for it in items if it.acl == ("staff",)}
    permitted = [it for it in items if it.chunk_id in allowed]
    hits = [permitted[i % len(permitted)].hit(1.0 / r, r) for r, i in enumerate(dict.fromkeys(
        p % len(permitted) for p in picks), start=1)]
    measure = measure_of(tokenizer)
    res = finish("q", "bm25", hits, Source(items), ["staff"], expand, budget, measure, k=k,
                 passage_budget=passage_budget)
    # The budget is never exceeded (counted exactly, citations included).
    assert measure(res.context) == res.context_tokens
    assert budget is None or res.context_tokens <= budget
    # The best-ranked permitted hit is sent whenever it alone fits.
    sent = [c for p in res.passages for c in p.chunk_ids]
    if budget is None or measure(render(to_passage(hits[0]), 1)) <= budget:
        assert hits[0].chunk_id in sent
        assert res.passages[0].best_chunk_id == hits[0].chunk_id
    # Passages are distinct, non-overlapping, exact slices of whole chunks, at most k of them.
    assert len(sent) == len(set(sent)) and len(res.passages) <= k
    for i, p in enumerate(res.passages):
        assert p.text == texts[p.doc_id][p.start_char:p.end_char]
        assert p.best_chunk_id in p.chunk_ids
        for q in res.passages[i + 1:]:
            assert p.doc_id != q.doc_id or p.end_char <= q.start_char or q.end_char <= p.start_char
    # Nothing outside the permitted set appears, sent or reported.
    assert set(sent) <= allowed
    assert {c for o in res.omitted for c in o.chunk_ids} <= allowed
    # What was found among the top k and not sent is reported, with a known reason.
    assert {h.chunk_id for h in hits[:k]} <= set(sent) | {c for o in res.omitted for c in o.chunk_ids}
    assert {o.reason for o in res.omitted} <= REASONS
    assert not any(o.reason.startswith("parent") for o in res.omitted) or expand == "parent"
    assert not any(o.reason.startswith("neighbours") for o in res.omitted) or expand == "neighbours"
    if expand == "none":
        by_id = {it.chunk_id: it for it in items}
        for p in res.passages:  # a merged passage stays within the passage budget (one chunk is never split)
            retrieved = [c for c in p.chunk_ids]
            assert passage_budget is None or len(retrieved) == 1 or measure(p.text) <= passage_budget, p
            assert all(by_id[c].chunk_id in allowed for c in retrieved)
        if budget is None:  # k distinct passages whenever the hits hold k
            assert len(res.passages) >= min(k, len(group_hits(hits, None, measure, passage_budget).groups))
