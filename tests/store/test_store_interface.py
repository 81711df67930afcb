"""The storage interface (store/base.py) as a contract every backend must meet. The ``store``
fixture opens one store per backend (tests/conftest.py: a SQLite file, a fresh database on the
session's pgserver PostgreSQL)."""
import pytest

from chunkwise.store import DocumentDiff, DocumentRow, StoreBusy, VersionLink, open_store
from chunkwise.store.writing import write_decided
from chunkwise.errors import IdentityConflict


@pytest.fixture
def store(db_location):
    s = open_store(db_location, timeout=0.2)
    yield s
    s.close()


def record(doc, i, text, acl=("staff",), quality="ready", key=None):
    return {"chunk_id": f"{doc}-{i}", "doc_id": doc, "source_uri": doc, "chunk_index": i, "heading_path": ["H"],
            "start_char": 10 * i, "end_char": 10 * i + len(text), "page": None, "page_end": None,
            "doc_updated_at": "", "ingested_at": "t", "language": "", "acl": list(acl), "content_hash": "h",
            "embed_model": "m@1", "embed_key": key or f"k-{text}", "text": text, "embed_text": text,
            "size": len(text.split()), "title": "", "author": "", "source_version": "v1", "chunker": "c",
            "header_mode": "none", "quality": quality, "reasons": [] if quality == "ready" else ["missing_acl"],
            "section_id": "s", "embed_window": ""}


def row(doc, path=None, root="/r", version="v1", n=2, versioning=""):
    return DocumentRow(doc, root, path or doc, path or doc, version, "inputs", "", "", "", "2026-01-01T00:00:00Z", n, versioning)


def put(store, doc, records, vectors=None, **kw):
    def decide(state, old):
        added = [r for r in records if r["chunk_id"] not in old]
        updated = [r for r in records if r["chunk_id"] in old]
        removed = [c for c in old if c not in {r["chunk_id"] for r in records}]
        return DocumentDiff(added, updated, removed, vectors or {}, "m@1")

    return write_decided(store, row(doc, n=len(records), **kw), decide)


def test_documents_records_and_diffs(store):
    store.add_root("/r")
    assert store.roots() == ["/r"]
    put(store, "a.md", [record("a.md", 0, "rollback the deploy"), record("a.md", 1, "page the owner")],
        {"k-rollback the deploy": [1.0, 0.0], "k-page the owner": [0.0, 1.0]})
    states = store.document_states("/r")
    assert states["a.md"].doc_id == "a.md" and states["a.md"].chunk_count == 2
    assert set(store.records_of("a.md")) == {"a.md-0", "a.md-1"}
    [held] = store.documents(["a.md", "b.md"])
    assert (held.doc_id, held.root, held.path) == ("a.md", "/r", "a.md")
    seen = []
    assert write_decided(store, row("a.md"), lambda state, old: seen.append((state, old)) or None) is None
    assert seen[0][0].source_version == "v1" and set(seen[0][1]) == {"a.md-0", "a.md-1"}
    put(store, "a.md", [record("a.md", 0, "rollback the deploy")])  # one chunk removed
    assert set(store.records_of("a.md")) == {"a.md-0"} and store.count() == 1
    with pytest.raises(IdentityConflict):
        put(store, "a.md", [record("a.md", 0, "x")], path="other.md")  # an id held by another path
    assert store.count() == 1


def test_vectors_and_runs(store):
    store.add_root("/r")
    put(store, "a.md", [record("a.md", 0, "one"), record("a.md", 1, "two")], {"k-one": [0.5, 0.5]})
    assert store.vectors(["k-one", "k-two"], values=False) == {"k-one": None}
    assert store.vectors(["k-one", "k-two"]) == {"k-one": [0.5, 0.5]}
    store.put_vectors("m@1", [("k-two", [1.0, 0.0]), ("k-unused", [0.0, 1.0])])
    with store.run("2026-01-01T00:00:00Z") as finish:
        assert finish("2026-01-01T00:01:00Z", {"added": 2}, {"embedder": "m@1"}) == 1  # the unused vector collected
    assert store.settings()["embedder"] == "m@1" and store.vectors(["k-unused"], values=False) == {}


def test_retrieval_primitives_filter_inside_the_query(store):
    store.add_root("/r")
    put(store, "a.md", [record("a.md", 0, "rollback steps", acl=("sre",)),
                        record("a.md", 1, "rollback budget", acl=("finance",)),
                        record("a.md", 2, "rollback notes", acl=("sre",), quality="review")],
        {"k-rollback steps": [1.0, 0.0], "k-rollback budget": [0.0, 1.0]})
    hits = store.ranker.term_matches("rollback", ["sre"])
    chunks = {c.key: c for c in store.chunks(keys=[int(k) for k in hits.keys])}
    assert [chunks[int(k)].record["chunk_id"] for k in hits.keys] == ["a.md-0"]  # not finance's, not the review chunk
    assert len(store.ranker.term_matches("rollback", [])) == 0
    assert store.ranker.term_count("rollback") == 3 and store.ranker.term_count("rollback", ["sre"]) == 1
    assert store.ranker.term_count("nowhere") == 0
    sizes = dict(store.ranker.lexical_row_sizes())
    assert sorted(sizes.values()) == [2, 2, 2]
    servable = store.ranker.servable_rows(texts=True, vectors=True)
    assert len(servable.keys) == 2 and servable.vectors.shape == (2, 2) and sorted(servable.tags) == [("finance",),
                                                                                                       ("sre",)]
    assert sorted(servable.texts) == ["rollback budget", "rollback steps"]
    assert [c.record["chunk_index"] for c in store.chunks(doc_id="a.md")] == [0, 1, 2]
    assert [d.source_version for d in store.documents(["a.md", "zz"])] == ["v1"]
    assert store.ranker.has_vectors() and {t for c in store.chunks() for t in c.acl} == {"sre", "finance"}
    assert [c.record["chunk_id"] for c in store.chunks()] == ["a.md-0", "a.md-1", "a.md-2"]


def test_lexical_fields_are_analysed_once_and_matched_per_field(store):
    """What every backend indexes (chunkwise.lexical): stemmed, case- and diacritic-folded terms of the
    text (body), the document title and the visible heading path, matched whole; per-field counts
    and body lengths come back with the permitted rows; access tags are never analysed."""
    from chunkwise.lexical import LexicalFields, analyze

    store.add_root("/r")
    recs = [record("a.md", 0, "We paged the on-call owner; paging works. Café menu.", acl=("runs",)),
            record("a.md", 1, "Pages, pages and a PAGE.", acl=("running",)),
            record("a.md", 2, "Nothing to see.", acl=("runs",))]
    recs[0] |= {"title": "Paging Runbook", "heading_path": ["Escalation", "Pager duty"]}
    recs[1] |= {"title": "Paging Runbook", "heading_path": []}
    put(store, "a.md", recs)
    page = analyze("paged")[0]
    assert analyze("pages") == analyze("PAGING") == [page] and analyze("café") == analyze("CAFE")
    both = store.ranker.term_matches(page, ["runs", "running"])
    by_id = {next(store.chunks(keys=[int(k)])).record["chunk_id"]: (length, tuple(tf))
             for k, length, tf in zip(both.keys, both.lengths, both.tf)}
    # body, title, heading counts ("Pager" stems to its own term); body lengths in analysed terms
    assert by_id == {"a.md-0": (len(analyze(recs[0]["text"])), (2.0, 1.0, 0.0)),
                     "a.md-1": (len(analyze(recs[1]["text"])), (3.0, 1.0, 0.0))}
    assert len(store.ranker.term_matches(page, ["runs"])) == 1  # "run" and "running" are two tags, never stemmed together
    assert len(store.ranker.term_matches(page, ["run"])) == 0
    assert store.ranker.term_count(page) == 2 and store.ranker.term_count(page, ["running"]) == 1
    assert store.ranker.term_count(analyze("runbook")[0], None, ("body",)) == 0
    assert store.ranker.term_count(analyze("runbook")[0], None, ("title",)) == 2
    assert store.ranker.term_count(analyze("escalation")[0], ["runs"], ("heading",)) == 1
    assert store.ranker.term_count(analyze("cafe")[0], ["runs"], ("body",)) == 1
    assert store.ranker.term_count("g" + "runs".encode().hex()) == 0  # an access token is not a word of any field
    lexical = store.ranker.servable_rows(lexical=True).lexical
    assert lexical[0] == LexicalFields.of_record(recs[0]) and lexical[0].heading == "escal pager duti"


def test_gate_counts_and_documents(store):
    store.add_root("/r")
    put(store, "a.md", [record("a.md", 0, "kept"), record("a.md", 1, "nobody", acl=(), quality="review")],
        {"k-kept": [1.0]})
    c = store.counts()
    assert (c.chunks, c.ready, c.servable, c.missing_acl, c.missing_vectors, c.orphan_vectors) == (2, 1, 1, 1, 1, 0)
    assert c.review_reasons == {"missing_acl": 1} and c.embed_models == ["m@1"]
    assert sorted(c.record["embed_text"] for c in store.chunks()) == ["kept", "nobody"]
    [doc] = store.documents()
    assert (doc.doc_id, doc.root, doc.path, doc.chunk_count) == ("a.md", "/r", "a.md", 2)
    assert store.remove_missing("/r", "", set(), dry_run=True) == 2 and store.remove_missing("/r", "", set()) == 2
    assert store.count() == 0


def test_version_links_are_replaced_whole_filtered_by_access_and_dropped_with_a_document(store):
    store.add_root("/r")
    put(store, "v1.md", [record("v1.md", 0, "leave is 30 days")], versioning='{"version": "1"}')
    put(store, "v2.md", [record("v2.md", 0, "leave is 45 days", acl=("hr",)),
                         record("v2.md", 1, "hidden", acl=("staff",), quality="review")], versioning='{"version": "2"}')
    put(store, "v3.md", [record("v3.md", 0, "leave is 60 days", acl=("hr", "staff"))])
    assert {d.doc_id: d.versioning for d in store.documents()} == {"v1.md": '{"version": "1"}',
                                                                   "v2.md": '{"version": "2"}', "v3.md": ""}
    seen = []

    def derive(docs):
        seen.append(sorted(d.doc_id for d in docs))
        return [VersionLink("v2.md", "v1.md", "detected", 0.9), VersionLink("v3.md", "v2.md", "declared"),
                VersionLink("v3.md", "gone.md", "declared"), VersionLink("v1.md", "v1.md", "declared")]

    links = store.relink_versions(derive)
    assert seen == [["v1.md", "v2.md", "v3.md"]]
    assert links == [VersionLink("v2.md", "v1.md", "detected", 0.9), VersionLink("v3.md", "v2.md", "declared", 1.0)]
    assert store.version_links(None, None) == links
    assert store.version_links(["v1.md"], None) == links[:1]
    assert store.version_links(["v2.md"], ["hr"]) == links[1:]  # hr may not see v1 (staff only)
    assert store.version_links(["v2.md"], ["hr", "staff"]) == links
    # staff sees v1 and v3 but not v2 (its staff chunk is in review): no link that names v2 is reported
    assert store.version_links(["v1.md", "v2.md", "v3.md"], ["staff"]) == []
    assert store.version_links(["v1.md"], ["nobody"]) == [] and store.version_links([], ["hr"]) == []
    assert store.relink_versions(lambda docs: derive(docs)[:1]) == links[:1]  # replaced, not added to
    assert store.version_links(None, None) == links[:1]
    store.relink_versions(derive)
    assert store.remove_missing("/r", "", {"v1.md", "v3.md"}) == 2  # v2 deleted: its links go with it
    assert store.version_links(None, None) == []


def test_roots_fold_inner_roots_and_prefixes_select(store):
    store.add_root("/r/ops")
    put(store, "run.md", [record("run.md", 0, "x")], root="/r/ops")
    store.add_root("/r")  # the wider root takes the inner one's documents, ids unchanged
    assert store.roots() == ["/r"]
    assert set(store.document_states("/r")) == {"ops/run.md"}
    assert set(store.document_states("/r", "ops/")) == {"ops/run.md"} and not store.document_states("/r", "hr/")


def _hold_write_lock(store):
    """Another writer in the middle of a transaction that blocks ``add_root``."""
    if store.location.startswith("postgresql://"):
        import psycopg

        from chunkwise.store.postgres.postgres import _ROOTS_LOCK

        holder = psycopg.connect(store.db.info.dsn, autocommit=True)
        holder.execute("BEGIN")
        holder.execute("SELECT pg_advisory_xact_lock(%s)", (_ROOTS_LOCK,))
    else:
        import sqlite3

        holder = sqlite3.connect(store.location, isolation_level=None)
        holder.execute("BEGIN IMMEDIATE")
    return holder


def test_a_second_writer_is_told_busy(store):
    holder = _hold_write_lock(store)
    try:
        with pytest.raises(StoreBusy, match="busy"):
            store.add_root("/elsewhere")
        assert store.count() == 0  # reads are not blocked
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    store.add_root("/elsewhere")  # the lock gone, the write goes through
    assert store.roots() == ["/elsewhere"]


def test_server_search_primitives_filter_inside_the_query(store):
    if not store.capabilities.native_search:
        pytest.skip("SQLite ranks with FTS5 and in-memory indexes (tested through the retriever)")
    store.add_root("/r")
    put(store, "a.md", [record("a.md", 0, "rollback steps rollback", acl=("sre",)),
                        record("a.md", 1, "rollback budget", acl=("finance", "sre")),
                        record("a.md", 2, "rollback notes", acl=("sre",), quality="review")],
        {"k-rollback steps rollback": [1.0, 0.0], "k-rollback budget": [0.0, 1.0], "k-rollback notes": [1.0, 0.1]})
    with store.ranker.snapshot():
        assert store.ranker.lexical_stats(["sre"]) == (2, 2.5) and store.ranker.lexical_stats(["finance"]) == (1, 2.0)
        assert store.ranker.lexical_stats(["nobody"]) == (0, 1.0)
        one = store.ranker.lexical_postings(["rollback"], ["finance"])["rollback"]
        assert len(one) == 1 and one.tf.tolist() == [[1, 0, 0]] and one.lengths.tolist() == [2]  # body, title, heading
        got = store.ranker.lexical_postings(["rollback", "step", "absent"], ["sre"])  # analysed terms ("steps" -> "step")
        assert sorted(zip(got["rollback"].tf[:, 0].tolist(), got["rollback"].lengths.tolist())) == [(1, 2), (2, 3)]
        assert (got["step"].tf[:, 0].tolist(), got["step"].lengths.tolist()) == ([1], [3])  # never the review chunk
        assert len(got["absent"]) == 0
        assert store.ranker.lexical_df(["rollback", "step", "absent"], ["sre"]) == {"rollback": 2, "step": 1, "absent": 0}
        assert store.ranker.lexical_df(["rollback"], ["sre"], ("title", "heading")) == {"rollback": 0}
        assert len(store.ranker.lexical_postings(["rollback"], ["sre"], ("heading",))["rollback"]) == 0
        # BM25F in the server: the permitted rows holding a term (in the fields asked for) counted, only
        # the top n's candidates returned (body length, per-field counts), every row tied with the n-th.
        top = store.ranker.lexical_top
        matched, found = top(["rollback", "step"], [1.0, 2.0], ["sre"], 2.5, 1, 1.2, 0.75)
        assert matched == 2 and list(found.values()) == [(3, {"rollback": (2, 0, 0), "step": (1, 0, 0)})]
        matched, found = top(["rollback", "step"], [1.0, 2.0], ["sre"], 2.5, 2, 1.2, 0.75)
        assert matched == 2 and sorted(found.values(), key=lambda v: v[0]) == [
            (2, {"rollback": (1, 0, 0)}), (3, {"rollback": (2, 0, 0), "step": (1, 0, 0)})]
        assert top(["rollback"], [1.0], ["finance"], 2.0, 5, 1.2, 0.75) == (1, {one.keys[0]: (2, {"rollback": (1, 0, 0)})})
        assert top(["absent"], [1.0], ["sre"], 2.5, 3, 1.2, 0.75) == (0, {})
        assert top(["rollback"], [1.0], ["nobody"], 2.5, 3, 1.2, 0.75) == (0, {})
        assert top(["rollback"], [1.0], ["sre"], 2.5, 3, 1.2, 0.75, ("heading",), (1.0, 2.0, 1.5)) == (0, {})
        matched, found = top(["h"], [1.0], ["sre"], 2.5, 1, 1.2, 0.75, ("heading",), (1.0, 2.0, 1.5))
        assert matched == 2 and all(v[1] == {"h": (0, 0, 1)} for v in found.values())
    keys, matrix = store.ranker.dense_candidates([1.0, 0.05], ["sre"], 1)
    rows = {c.key: c for c in store.chunks(keys=keys)}
    assert rows[keys[0]].record["chunk_id"] == "a.md-0" and matrix.shape == (len(keys), 2)
    assert all(rows[k].quality == "ready" for k in keys)
    keys, _ = store.ranker.dense_candidates([1.0, 0.0], ["finance"], 5)
    assert [{c.key: c for c in store.chunks(keys=keys)}[k].record["chunk_id"] for k in keys] == ["a.md-1"]
    assert store.ranker.dense_candidates([1.0, 0.0], ["nobody"], 5)[0] == []
    put(store, "a.md", [record("a.md", 1, "rollback budget", acl=("finance", "sre"))])  # two chunks removed
    assert store.ranker.lexical_stats(["sre"]) == (1, 2.0) and store.ranker.lexical_stats(["legal"]) == (0, 1.0)
    put(store, "b.md", [record("b.md", i, "rollback budget", acl=("sre",), key=f"b{i}") for i in range(3)]
        + [record("b.md", 3, "rollback budget plans", acl=("sre",), key="b3")])
    matched, found = store.ranker.lexical_top(["rollback"], [1.0], ["sre"], 2.0, 1, 1.2, 0.75)
    assert matched == 5 and list(found.values()) == [(2, {"rollback": (1, 0, 0)})] * 4  # the four tied, not the longer
