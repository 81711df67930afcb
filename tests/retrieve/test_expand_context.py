"""merge_hits, expansion checks and context assembly on hand-made chunks."""
import pytest
from hypothesis import given, settings, strategies as st

from conftest import ItemSource as Source, sizer, words

from chunkwise.errors import BudgetExceeded, ParentNotPermitted, StaleLink
from chunkwise.retrieve.context import assemble
from chunkwise.retrieve.passages import group_hits
from chunkwise.retrieve.expand import expand_neighbours, expand_parent
from chunkwise.retrieve.index import Item
from chunkwise.retrieve.merge import merge_hits, stitch, to_passage
from chunkwise.retrieve.store import finish
from chunkwise.retrieve.types import Hit

TEXT = "".join(f"Sentence {i} of the manual says step {i}. " for i in range(40))


def chunks(size=120, overlap=0, sections=4, acl=lambda i: ("staff",), quality=lambda i: "ready"):
    out, start, i = [], 0, 0
    while start < len(TEXT):
        end = min(len(TEXT), start + size)
        out.append(Item(f"c{i:02d}", "doc", i, start, end, TEXT[start:end], acl=acl(i), quality=quality(i),
                        section_id=f"s{i * sections // 20}", source_version="v1", heading_path=(f"S{i * sections // 20}",)))
        if end == len(TEXT):
            break
        start, i = end - overlap, i + 1
    return out


def hit(item, rank, score=1.0):
    return item.hit(score, rank)


def test_merge_overlapping_and_touching_hits_keeps_best_rank_and_exact_text():
    items = chunks(size=100, overlap=40)
    hits = [hit(items[3], 1), hit(items[9], 2), hit(items[4], 3), hit(items[5], 4), hit(items[20], 5)]
    passages = merge_hits(hits)
    assert [p.rank for p in passages] == [1, 2, 5]
    first = passages[0]
    assert first.chunk_ids == ("c03", "c04", "c05")
    assert first.text == TEXT[first.start_char:first.end_char]
    touching = chunks(size=100, overlap=0)
    p = merge_hits([hit(touching[2], 1), hit(touching[3], 2)])
    assert len(p) == 1 and p[0].text.replace(" ", "") == TEXT[200:400].replace(" ", "")
    assert len(merge_hits([hit(touching[2], 1), hit(touching[3], 2)], touch=False)) == 2


def test_overfetch_then_merge_restores_k_distinct_passages():
    items = chunks(size=100, overlap=50)
    hits = [hit(items[i], r) for r, i in enumerate([4, 5, 6, 10, 11, 15, 16, 20, 21, 24, 25, 28], start=1)]
    assert len(merge_hits(hits[:5])) < 5
    assert len(merge_hits(hits, 5)) == 5


@settings(max_examples=100, deadline=None)
@given(size=st.integers(20, 200), overlap_frac=st.floats(0, 0.9), picks=st.sets(st.integers(0, 80), min_size=1, max_size=12))
def test_stitch_rebuilds_the_exact_source_slice(size, overlap_frac, picks):
    items = chunks(size=size, overlap=int(size * overlap_frac))
    chosen = sorted({p % len(items) for p in picks})
    for p in merge_hits([hit(items[i], r) for r, i in enumerate(chosen, start=1)], touch=False):
        assert p.text == TEXT[p.start_char:p.end_char]
    assert stitch([(0, 5, "abcde"), (3, 8, "defgh")]) == "abcdefgh"


def test_neighbours_and_parent():
    items = chunks()
    src = Source(items)
    p = to_passage(hit(items[6], 1))
    n = expand_neighbours(src, p, ["staff"])
    assert n.chunk_ids == ("c05", "c06", "c07") and n.expanded_from == ("c06",)
    assert n.text == TEXT[n.start_char:n.end_char]
    parent = expand_parent(src, p, ["staff"])
    assert set(parent.chunk_ids) == {it.chunk_id for it in items if it.section_id == items[6].section_id}


def test_a_forbidden_neighbour_is_not_added():
    items = chunks(acl=lambda i: ("secret",) if i == 7 else ("staff",))
    n = expand_neighbours(Source(items), to_passage(hit(items[6], 1)), ["staff"])
    assert n.chunk_ids == ("c05", "c06")


def test_three_distinct_expansion_failures():
    items = chunks(quality=lambda i: "review" if i == 1 else "ready")
    p = to_passage(hit(items[0], 1))
    with pytest.raises(ParentNotPermitted):
        expand_parent(Source(items), p, ["staff"])
    with pytest.raises(StaleLink):
        expand_parent(Source(items, version="v2"), to_passage(hit(items[8], 1)), ["staff"])
    with pytest.raises(StaleLink):
        expand_neighbours(Source([it for it in items if it.chunk_id != "c08"]), to_passage(hit(items[8], 1)), ["staff"])
    with pytest.raises(BudgetExceeded):
        expand_parent(Source(items), to_passage(hit(items[8], 1)), ["staff"], budget=30, measure=words)
    assert {StaleLink, ParentNotPermitted, BudgetExceeded} == {type(e) for e in
                                                             (StaleLink("a"), ParentNotPermitted("b"), BudgetExceeded("c"))}


def test_two_children_of_one_parent_yield_one_copy():
    items = chunks()
    a, b = items[5], items[7]
    assert a.section_id == b.section_id
    result = finish("q", "bm25", [hit(a, 1), hit(b, 2)], Source(items), ["staff"], "parent", None, words, k=5)
    assert len(result.passages) == 1
    assert {"c05", "c07"} <= set(result.passages[0].chunk_ids)
    assert result.context.count(a.text) == 1 and result.context.count(b.text) == 1


def test_over_budget_parent_falls_back_to_the_retrieved_chunk_and_says_so():
    items = chunks()
    result = finish("q", "bm25", [hit(items[6], 1)], Source(items), ["staff"], "parent", 60, words, k=5)
    assert [p.chunk_ids for p in result.passages] == [("c06",)]
    assert [(o.reason, o.passage) for o in result.omitted] == [("parent_over_budget", 1)]


@settings(max_examples=60, deadline=None)
@given(budget=st.integers(1, 400), picks=st.lists(st.integers(0, 32), min_size=1, max_size=8, unique=True),
       expand=st.sampled_from(["none", "neighbours", "parent"]), tokenizer=st.sampled_from(["words", "cl100k_base"]))
def test_context_never_exceeds_the_budget_and_never_truncates(budget, picks, expand, tokenizer):
    items = chunks()
    hits = [hit(items[i % len(items)], r) for r, i in enumerate(picks, start=1)]
    measure = words if tokenizer == "words" else sizer("tokens", tokenizer).count
    result = finish("q", "bm25", hits, Source(items), ["staff"], expand, budget, measure, k=len(hits))
    assert result.context_tokens <= budget
    assert measure(result.context) == result.context_tokens
    spans = [(p.start_char, p.end_char) for p in result.passages]
    for p in result.passages:
        assert p.text == TEXT[p.start_char:p.end_char]  # whole passages only
        assert p.text.strip() in result.context
    assert all(a2 <= b1 or b2 <= a1 for i, (a1, a2) in enumerate(spans) for (b1, b2) in spans[i + 1:])  # no span twice
    sent = {c for p in result.passages for c in p.chunk_ids}
    missing = {h.chunk_id for h in hits} - sent
    reported = {c for o in result.omitted for c in o.chunk_ids}
    assert missing <= reported | sent  # what was found and not sent is reported


def test_assemble_reports_what_does_not_fit():
    items = chunks()
    plan = group_hits([hit(items[i], r) for r, i in enumerate([1, 3, 5], start=1)], None, words)
    ctx = assemble(plan.groups, 45, words)
    assert len(ctx.passages) == 1 and ctx.tokens <= 45
    assert [(o.reason, o.passage) for o in ctx.omitted] == [("budget", None), ("budget", None)]


def test_consecutive_chunks_with_a_whitespace_gap_touch():
    text = "First paragraph ends here.\n\nSecond paragraph starts here."
    a = Item("a", "doc", 0, 0, 26, text[:26], source_version="v1")
    b = Item("b", "doc", 1, 28, len(text), text[28:], source_version="v1")
    merged = merge_hits([hit(a, 1), hit(b, 2)])
    assert len(merged) == 1 and merged[0].text == text and merged[0].chunk_range == (0, 1)
    far = Item("c", "doc", 3, 40, 50, "x" * 10, source_version="v1")
    assert len(merge_hits([hit(a, 1), hit(far, 2)])) == 2


def test_hits_below_the_kth_passage_do_not_grow_passages_above_it():
    items = chunks(size=100, overlap=50)
    ranked = [items[4], items[10], items[16], items[5], items[3]]  # 5 and 3 overlap the top passage
    passages = merge_hits([hit(it, r) for r, it in enumerate(ranked, start=1)], 2)
    assert [p.chunk_ids for p in passages] == [("c04",), ("c10",)]
    passages = merge_hits([hit(it, r) for r, it in enumerate([items[4], items[5], items[10], items[16]], start=1)], 2)
    assert [p.chunk_ids for p in passages] == [("c04", "c05"), ("c10",)]
