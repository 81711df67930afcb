"""Ranking maths and the permission pre-filter of the in-memory index."""
import math
import sqlite3

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from chunkwise.access import acl_index, permitted
from chunkwise.errors import ConfigError
from chunkwise.retrieve.bm25 import SparseBM25, keep_informative, tokenize
from chunkwise.store.sqlite.sqlite_read import fts_match
from chunkwise.retrieve.fusion import rrf
from chunkwise.retrieve.ties import top_k
from chunkwise.retrieve.index import Item, MemoryIndex, SearchIndex

WORDS = "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu".split()


def reference_bm25(docs: list[list[str]], query: list[str], k1=1.2, b=0.75) -> list[float]:
    """Okapi BM25 written out term by term, with FTS5's idf floor."""
    n = len(docs)
    avg = sum(map(len, docs)) / n
    out = []
    for d in docs:
        s = 0.0
        for t in dict.fromkeys(query):
            df = sum(t in x for x in docs)
            if not df:
                continue
            idf = max(math.log((n - df + 0.5) / (df + 0.5)), 1e-6)
            tf = d.count(t)
            s += idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * len(d) / avg))
        out.append(s)
    return out


def test_sparse_bm25_equals_the_written_out_formula():
    rng = np.random.default_rng(3)
    docs = [list(rng.choice(WORDS, size=rng.integers(1, 30))) for _ in range(60)]
    bm = SparseBM25.build((" ".join(d) for d in docs), len(docs))
    query = ["alpha", "kappa", "mu", "unknown"]
    pos, vals = _all(bm, query)
    got = np.zeros(len(docs))
    got[pos] = vals
    assert np.allclose(got, reference_bm25(docs, query), rtol=1e-5)


def _all(bm, terms, informative=True):
    everything = np.ones(bm.n_rows, dtype=bool)
    return bm.scores(terms, everything, bm.stats(everything), informative)


def test_sparse_bm25_scores_a_subset_as_if_the_rest_did_not_exist():
    """The side channel closed: the statistics are the permitted rows' own."""
    rng = np.random.default_rng(4)
    docs = [list(rng.choice(WORDS, size=rng.integers(1, 30))) for _ in range(80)]
    mask = rng.random(len(docs)) < 0.4
    bm = SparseBM25.build((" ".join(d) for d in docs), len(docs))
    query = ["alpha", "kappa", "mu"]
    pos, vals = bm.scores(query, mask, bm.stats(mask), informative=False)
    assert mask[pos].all()
    sub = [d for d, m in zip(docs, mask) if m]
    want = dict(zip(np.flatnonzero(mask).tolist(), reference_bm25(sub, query)))
    got = dict(zip(pos.tolist(), vals.tolist()))
    assert got == pytest.approx({p: v for p, v in want.items() if v > 0}, rel=1e-5)


def test_sparse_bm25_ranks_like_sqlite_fts5():
    rng = np.random.default_rng(5)
    docs = [" ".join(rng.choice(WORDS, size=rng.integers(3, 40))) for _ in range(200)]
    db = sqlite3.connect(":memory:")
    db.execute("CREATE VIRTUAL TABLE f USING fts5(t)")
    db.executemany("INSERT INTO f(rowid, t) VALUES (?, ?)", enumerate(docs))
    bm = SparseBM25.build(docs, len(docs))
    for q in ("alpha gamma", "theta", "mu lambda kappa"):
        fts = dict(db.execute("SELECT rowid, -bm25(f) FROM f WHERE f MATCH ?", (" OR ".join(q.split()),)))
        pos, vals = _all(bm, q.split(), informative=False)
        mine = dict(zip(pos.tolist(), vals.tolist()))
        assert mine.keys() == fts.keys()
        for r in fts:
            assert mine[r] == pytest.approx(fts[r], rel=1e-4)


def test_terms_at_the_idf_floor_are_left_out_unless_nothing_else_is_left():
    assert keep_informative(["the", "rollback"], {"the": 50, "rollback": 3}, 100) == ["rollback"]
    assert keep_informative(["the", "a"], {"the": 50, "a": 90}, 100) == ["the", "a"]
    bm = SparseBM25.build(["the cat", "the dog", "the cow", "a bird"], 4)
    pos, _ = _all(bm, ["the", "cat"])
    assert pos.tolist() == [0]  # "the" is in 3 of 4 rows: its idf is FTS5's floor


def test_tokenize_is_the_one_analyzer():
    assert tokenize("Roll-back_now: Ärger 42x paged") == ["roll", "back", "now", "arger", "42x", "page"]


def test_rrf_by_hand():
    fused = rrf([["a", "b", "c"], ["c", "a"]])
    score = dict(fused)
    assert score["a"] == pytest.approx(1 / 61 + 1 / 62)
    assert score["c"] == pytest.approx(1 / 63 + 1 / 61)
    assert [x for x, _ in fused] == ["a", "c", "b"]
    # equal fused scores: the better single rank wins, then the id
    assert [x for x, _ in rrf([["x", "y"], ["y", "x"]])] == ["x", "y"]


def test_top_k_breaks_ties_by_the_tiebreak_not_by_partition_order():
    scores = np.array([1.0, 5.0, 5.0, 5.0, 2.0, 5.0])
    tiebreak = np.array([0, 9, 3, 7, 1, 2])
    assert top_k(scores, 3, tiebreak).tolist() == [5, 2, 3]


def test_access_tokens_are_single_fts_tokens_and_fail_closed():
    assert acl_index(["eng-oncall", "财务", "a b"], "ready").count(" ") == 2
    assert acl_index(["staff"], "review") == ""
    assert acl_index([], "ready") == ""
    db = sqlite3.connect(":memory:")
    db.execute("CREATE VIRTUAL TABLE f USING fts5(lex_body, lex_title, lex_heading, acl_index, tokenize='ascii')")
    db.execute("INSERT INTO f VALUES ('deploy', '', '', ?)", (acl_index(["team-a"], "ready"),))
    db.execute("INSERT INTO f VALUES ('deploy', '', '', ?)", (acl_index(["team", "a"], "ready"),))
    hit = lambda g: [r for (r,) in db.execute("SELECT rowid FROM f WHERE f MATCH ?", (fts_match(["deploy"], g),))]
    assert hit(["team-a"]) == [1]
    assert hit(["team"]) == [2]
    assert hit(["a"]) == [2]
    assert hit(["nobody"]) == []


def _corpus(draw):
    n = draw(st.integers(1, 40))
    tags = st.lists(st.sampled_from(["g0", "g1", "g2", "g3", "g4"]), max_size=2).map(tuple)
    items = []
    for i in range(n):
        text = " ".join(draw(st.lists(st.sampled_from(WORDS), min_size=1, max_size=8)))
        quality = draw(st.sampled_from(["ready", "ready", "ready", "review"]))
        items.append(Item(f"c{i:03d}", f"d{i % 4}", i, 0, len(text), text, acl=draw(tags), quality=quality))
    return items


@settings(max_examples=120, deadline=None)
@given(data=st.data())
def test_zero_leaks_and_k_results_whenever_k_are_permitted(data):
    items = _corpus(data.draw)
    rng = np.random.default_rng(len(items))
    vectors = rng.normal(size=(len(items), 8)).astype(np.float32)
    index = MemoryIndex(items, vectors)
    groups = data.draw(st.lists(st.sampled_from(["g0", "g1", "g2", "g3", "g4", "zz"]), min_size=1, max_size=3))
    k = data.draw(st.integers(1, 12))
    query = " ".join(data.draw(st.lists(st.sampled_from(WORDS), min_size=1, max_size=3)))
    visible = [it for it in items if permitted(it.acl, it.quality, groups)]
    matching = [it for it in visible if set(tokenize(it.text)) & set(tokenize(query))]
    qv = rng.normal(size=8)
    for mode in ("bm25", "dense", "hybrid"):
        hits = index.search(query, groups, k, mode, query_vector=qv)
        assert all(permitted(h.acl, "ready", groups) for h in hits)
        assert all(index.by_id[h.chunk_id].quality == "ready" for h in hits)
        want = {"bm25": len(matching), "dense": len(visible), "hybrid": len(visible)}[mode]
        assert len(hits) == min(k, want), mode
        assert len({h.chunk_id for h in hits}) == len(hits)
        assert index.search(query, groups, k, mode, query_vector=qv) == hits  # deterministic


def test_filtering_after_ranking_would_come_back_short():
    """The failure the pre-filter prevents: most of an unfiltered top-10 belongs to other groups."""
    items = [Item(f"c{i:03d}", "d", i, 0, 5, "deploy rollback steps " + ("x " * (i % 7)), acl=(f"g{i % 10}",))
             for i in range(200)]
    index = MemoryIndex(items)
    pre = index.search("deploy rollback", ["g3"], 10, "bm25")
    post = [h for h in index.search("deploy rollback", [f"g{i}" for i in range(10)], 10, "bm25") if "g3" in h.acl]
    assert len(pre) == 10 and len(post) < 10


def test_bad_calls_fail_with_a_fix():
    index = MemoryIndex([Item("c", "d", 0, 0, 1, "x")])
    with pytest.raises(ConfigError, match="groups"):
        index.search("x", [], 3, "bm25")
    with pytest.raises(ConfigError, match="mode"):
        index.search("x", ["all"], 3, "vector")
    with pytest.raises(ConfigError, match="vectors"):
        index.search("x", ["all"], 3, "dense", query_vector=[1.0])


def test_search_index_reads_only_permitted_slices():
    idx = SearchIndex(["a", "b", "c", "d"], [("x",), ("y",), ("x", "y"), ("z",)], [0, 1, 2, 3],
                      vectors=np.eye(4, dtype=np.float32))
    ranked = idx.rank_dense(np.array([1, 1, 1, 1], np.float32), ["y"], 10)
    assert sorted(k for k, _ in ranked) == ["b", "c"]
    assert idx.layout.slices(["x", "y"]) and idx.layout.slices(["nobody"]) == []


def test_sparse_bm25_equals_rank_bm25_okapi_where_no_idf_is_floored():
    """A standard implementation as the reference: rank_bm25's Okapi BM25 (same k1, b) over the same
    analysed terms gives the same scores whenever no term is in half the rows (where the two idf
    floors differ)."""
    from rank_bm25 import BM25Okapi

    rng = np.random.default_rng(11)
    vocab = [f"w{i}" for i in range(40)]
    docs = [list(rng.choice(vocab, size=rng.integers(1, 25))) for _ in range(120)]
    ref = BM25Okapi(docs, k1=1.2, b=0.75)
    bm = SparseBM25.build((" ".join(d) for d in docs), len(docs))
    for query in (["w1", "w7"], ["w3"], ["w0", "w5", "w39", "nowhere"]):
        assert all(2 * sum(t in d for d in docs) < len(docs) for t in query)
        pos, vals = _all(bm, query, informative=False)
        got = np.zeros(len(docs))
        got[pos] = vals
        assert np.allclose(got, ref.get_scores(query), rtol=1e-5)
