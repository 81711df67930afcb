"""No side channel: what a caller sees (scores, order, tie-breaks, omissions, headings) does not
change when documents they may not read are added, in every mode and both BM25 engines, on SQLite
and on PostgreSQL (where "fts5" is the server's BM25 over permitted postings)."""
import json

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from chunkwise.config import ChunkConfig
from chunkwise.embed import make_embedder
from chunkwise.pipeline import ingest
from chunkwise.retrieve import Retriever
from chunkwise.retrieve.index import Item, MemoryIndex
from backends import query
from conftest import BACKENDS, module_location

CONFIG = ChunkConfig(strategy="structure", size=64, header="path")
STAFF = {
    "staff/handbook.md": "# Handbook\n\n## Leave\n\nStaff take leave after asking the team lead.\n\n"
                         "## Salary\n\nSalary reviews happen each spring for all staff.\n",
    "staff/tools.md": "# Tools\n\nThe salary calculator and the leave planner are on the intranet.\n",
    "staff/same.md": "# Same\n\nIdentical sentence about the salary band.\n\n## Again\n\nIdentical sentence about the salary band.\n",
}
FORBIDDEN = {
    f"hr/secret{i}.md": f"# Secret {i}\n\n" + "Salary salary salary bonus for executives. " * (i + 1) + "\n"
    for i in range(12)
}
QUERIES = ["salary review", "leave", "salary band identical", "bonus salary executives", "intranet planner"]


def _write(root, files):
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def _observe(db):
    out = {}
    for bm25 in ("fts5", "sparse"):
        with Retriever(db, bm25=bm25) as r:
            for q in QUERIES:
                out[bm25, q, "rank"] = [(next(r.store.chunks(keys=[i])).record["chunk_id"], round(s, 6))
                                        for i, s in r.rank(q, ["staff"], 10, "bm25")]
                for mode in ("bm25", "dense", "hybrid"):
                    for expand in ("none", "neighbours", "parent"):
                        res = r.search(q, ["staff"], k=4, mode=mode, expand=expand, budget=200)
                        d = res.to_dict()
                        out[bm25, q, mode, expand] = (
                            [(p["chunk_ids"], round(p["score"], 6), p["heading_path"]) for p in d["results"]],
                            d["omitted"])
    return out


@pytest.fixture(scope="module", params=BACKENDS)
def stores(request, tmp_path_factory):
    base = tmp_path_factory.mktemp("side")
    emb = make_embedder("hashing")
    acl_map = {"staff/*": ["staff"], "hr/*": ["hr"]}
    a, b = (module_location(request, tmp_path_factory, request.param) for _ in range(2))
    _write(base / "a", STAFF)
    ingest([base / "a"], a, CONFIG, embedder=emb, acl_map=acl_map)
    _write(base / "b", {**FORBIDDEN, **STAFF})  # forbidden files sort first: other rowids too
    ingest([base / "b"], b, CONFIG, embedder=emb, acl_map=acl_map)
    return a, b


def test_scores_ties_and_omissions_do_not_depend_on_forbidden_documents(stores):
    alone, crowded = stores
    a, b = _observe(alone), _observe(crowded)
    assert a == b
    assert any(v for k, v in a.items() if k[2] == "rank")  # the observation is not empty
    for key, value in a.items():
        if key[2] == "rank":
            assert value == a["sparse" if key[0] == "fts5" else "fts5", key[1], "rank"]  # engines agree


def test_fts5_scores_equal_bm25_over_the_permitted_rows_only(stores):
    """BM25F over the permitted rows: the term's count in body + title + heading (weights 1 and 2 here),
    the body's length, the permitted rows' df, row count and mean body length."""
    _, crowded = stores
    from chunkwise.lexical import analyze
    from chunkwise.store import open_store

    term = analyze("salary")[0]
    with open_store(crowded, readonly=True) as store:  # the stored analysed fields, on either backend
        servable = store.servable_rows(lexical=True)
    rows = {key: f.terms() for key, tags, f in zip(servable.keys, servable.tags, servable.lexical) if "staff" in tags}
    n, avg = len(rows), sum(len(b) for b, _, _ in rows.values()) / len(rows)
    for weights, (wt, wh) in ((None, (2.0, 1.5)), ("title=0,heading=2", (0.0, 2.0))):
        with Retriever(crowded, bm25="fts5", embedder=None, field_weights=weights) as r:
            got = dict(r.rank("salary", ["staff"], 50, "bm25"))
        tf = {rid: b.count(term) + wt * t.count(term) + wh * h.count(term) for rid, (b, t, h) in rows.items()}
        df = sum(1 for v in tf.values() if v)
        idf = max(np.log((n - df + 0.5) / (df + 0.5)), 1e-6)
        want = {rid: idf * f * 2.2 / (f + 1.2 * (0.25 + 0.75 * len(rows[rid][0]) / avg)) for rid, f in tf.items() if f}
        assert want and got == pytest.approx(want, rel=1e-5)
    assert any(h.count(term) for _, _, h in rows.values())  # the heading field is exercised


def test_a_restricted_parent_heading_never_reaches_a_wider_child(tmp_path, db_location):
    """The document is hr's; a marker opens one section to staff: its chunks keep no trace of the
    hr-only heading above it (path, header, expansion)."""
    root = tmp_path / "kb"
    root.mkdir()
    (root / "pay.md").write_text(
        "# Payroll cuts 2025\n\nConfidential plan.\n\n## Holiday calendar\n<!-- acl: staff, hr -->\n\n"
        "Holidays are listed here.\n", encoding="utf-8")
    db = db_location
    assert not ingest([root], db, CONFIG, acl="hr").errors
    recs = [json.loads(r) | {"embed_text": e} for r, e in query(db, "SELECT record, embed_text FROM chunks")]
    child = [r for r in recs if "staff" in r["acl"]]
    assert child and all("Payroll" not in r["embed_text"] and "Payroll cuts 2025" not in r["heading_path"] for r in child)
    assert child[0]["heading_path"] == ["Holiday calendar"] and child[0]["embed_text"].startswith("Holiday calendar\n")
    parent = [r for r in recs if r["acl"] == ["hr"]]
    assert parent and parent[0]["heading_path"] == ["Payroll cuts 2025"]
    with Retriever(db) as r:
        res = r.search("holidays payroll", ["staff"], k=5, mode="bm25", expand="parent")
    assert res.passages and "Payroll" not in json.dumps(res.to_dict())


def test_a_wider_marker_inside_a_restricted_section_fails_closed(tmp_path, db_location):
    """A nested marker may only narrow: one naming staff inside an hr-only section is held for
    review and named in the run's errors; the rest of the document is served."""
    root = tmp_path / "kb"
    root.mkdir()
    (root / "pay.md").write_text(
        "# Payroll cuts 2025\n<!-- acl: hr -->\n\nConfidential plan.\n\n## Holiday calendar\n<!-- acl: staff, hr -->\n\n"
        "Holidays are listed here.\n", encoding="utf-8")
    db = db_location
    errors = ingest([root], db, CONFIG, acl="staff").errors
    assert [e["path"] for e in errors if "Holiday calendar" in e["error"] and "line 7" in e["error"]] == ["pay.md"]
    recs = [json.loads(r) for (r,) in query(db, "SELECT record FROM chunks")]
    held = [r for r in recs if r["quality"] == "review"]
    assert held and all(r["reasons"] == ["acl_not_subset"] and r["acl"] == [] for r in held)
    assert [r["acl"] for r in recs if r["quality"] == "ready"] == [["hr"]]
    with Retriever(db) as r:
        assert not r.search("holidays payroll", ["staff"], k=5, mode="bm25", expand="parent").passages
        assert r.search("confidential plan", ["hr"], k=5, mode="bm25").passages


WORDS = "salary leave bonus plan team spring review band".split()


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_memory_index_scores_ignore_forbidden_items(data):
    """Property: adding random forbidden items never changes a permitted caller's results."""
    rng = np.random.default_rng(data.draw(st.integers(0, 2**16)))
    n_ok, n_bad = data.draw(st.integers(1, 25)), data.draw(st.integers(1, 25))
    text = lambda: " ".join(rng.choice(WORDS, size=rng.integers(1, 12)))
    ok = [Item(f"a{i:03d}", "d", i, 0, 1, text(), acl=("staff",)) for i in range(n_ok)]
    bad = [Item(f"b{i:03d}", "e", i, 0, 1, text(), acl=("hr",)) for i in range(n_bad)]
    vec = lambda items: rng.standard_normal((len(items), 8)).astype(np.float32)
    va, vb = vec(ok), vec(bad)
    query = " ".join(data.draw(st.lists(st.sampled_from(WORDS), min_size=1, max_size=3)))
    qv = rng.standard_normal(8).astype(np.float32)
    alone = MemoryIndex(ok, va)
    crowded = MemoryIndex(bad + ok, np.vstack([vb, va]))
    for mode in ("bm25", "dense", "hybrid"):
        k = data.draw(st.integers(1, 10))
        got_a = [(h.chunk_id, round(h.score, 5)) for h in alone.search(query, ["staff"], k, mode, qv)]
        got_b = [(h.chunk_id, round(h.score, 5)) for h in crowded.search(query, ["staff"], k, mode, qv)]
        assert got_a == got_b, mode


def test_a_long_lived_fts5_retriever_scores_rows_written_after_it_opened(tmp_path, db_location):
    root = tmp_path / "kb"
    root.mkdir()
    (root / "a.md").write_text("# A\n\nThe budget, once.\n", encoding="utf-8")
    db = db_location
    ingest([root], db, CONFIG, acl="staff")
    with Retriever(db, embedder=None) as r:
        assert len(r.rank("budget", ["staff"], 5, "bm25")) == 1
        (root / "b.md").write_text("# B\n\nThe budget, budget twice.\n", encoding="utf-8")
        ingest([root], db, CONFIG, acl="staff")
        ranked = r.rank("budget", ["staff"], 5, "bm25")
        with Retriever(db, embedder=None) as fresh:
            assert ranked == fresh.rank("budget", ["staff"], 5, "bm25") and len(ranked) == 2
