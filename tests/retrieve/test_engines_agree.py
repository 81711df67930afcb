"""Property: the FTS5 engine and the in-memory sparse engine return the same ranking and scores on
random corpora, queries, field weights and callers (one analyzer, one formula, by construction)."""
import tempfile
from pathlib import Path

from hypothesis import given, settings, strategies as st

from chunkwise.retrieve import Retriever
from chunkwise.store import DocumentDiff, DocumentRow, open_store
from chunkwise.store.writing import write_decided

WORDS = ["page", "pages", "paged", "paging", "run", "runs", "running", "café", "CAFE", "deploy", "rollback",
         "Owner", "owners", "the", "budget", "naïve", "naive", "42x"]
TAGS = ["runs", "running", "hr", "财务"]


def _record(doc, i, text, title, heading, acl):
    return {"chunk_id": f"{doc}-{i}", "doc_id": doc, "source_uri": doc, "chunk_index": i, "heading_path": heading,
            "start_char": i, "end_char": i + 1, "page": None, "acl": acl, "embed_model": "none", "embed_key": f"{doc}-{i}",
            "text": text, "embed_text": text, "size": 1, "title": title, "quality": "ready", "reasons": []}


words = st.lists(st.sampled_from(WORDS), max_size=12).map(" ".join)
# Documents as (title, [(text, heading path, access tags)]): what both ranking properties draw.
corpora = st.lists(st.tuples(words, st.lists(st.tuples(words, st.lists(words, max_size=2),
                                                       st.lists(st.sampled_from(TAGS), min_size=1, max_size=2,
                                                                unique=True)),
                                             min_size=1, max_size=5)), min_size=1, max_size=5)


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_fts5_and_sparse_rank_alike(data):
    docs = data.draw(corpora)
    query = data.draw(st.lists(st.sampled_from(WORDS), min_size=1, max_size=4).map(" ".join))
    groups = data.draw(st.lists(st.sampled_from(TAGS + ["nobody"]), min_size=1, max_size=2))
    weights = data.draw(st.sampled_from([None, "title=0,heading=0", "title=3,heading=0.5", "title=0,heading=2"]))
    k = data.draw(st.integers(1, 12))
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "s.db"
        with open_store(db) as store:
            store.add_root("/r")
            for d, (title, chunks) in enumerate(docs):
                recs = [_record(f"d{d}", i, text, title, heading, acl) for i, (text, heading, acl) in enumerate(chunks)]
                write_decided(store, DocumentRow(f"d{d}", "/r", f"d{d}", f"d{d}", "v", "i", title, "", "", "2026-01-01T00:00:00Z", len(recs)),
                                     lambda state, old, recs=recs: DocumentDiff(recs, (), (), {}, "none"))
        got = {}
        for engine in ("fts5", "sparse"):
            with Retriever(db, bm25=engine, embedder=None, field_weights=weights) as r:
                got[engine] = [(key, round(score, 5)) for key, score in r.rank(query, groups, k, "bm25")]
        assert got["fts5"] == got["sparse"]
