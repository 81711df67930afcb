"""The narrow storage contract (store/base.py ``Store``), method by method, with real records, on
SQLite and on PostgreSQL (the ``backend`` fixture of tests/conftest.py: a SQLite file, a fresh
database on the session's pgserver). Every test runs the same assertions on both backends: a
backend that differs from the contract fails here, not in a retrieval test three layers up.

The records come from the real pipeline (``enrich.records.build_records`` through ``api``'s ids),
so ids, occurrences and embed keys are those ingest writes."""
import time

import pytest

from chunkwise import ids
from chunkwise.errors import IdentityConflict, StoreTimeout
from chunkwise.store import DocumentDiff, DocumentRow, VersionLink, open_store
from chunkwise.store.writing import DocumentWrites, write_decided


@pytest.fixture
def store(db_location):
    s = open_store(db_location, timeout=0.5)
    yield s
    s.close()


def records(doc, texts, acl=("staff",), quality="ready", model="m@1"):
    """A document's records as ingest makes them: ids from ``ids.chunk_ids`` (occurrences counted)."""
    out = []
    for i, (cid, chash) in enumerate(ids.chunk_ids(doc, texts)):
        text = texts[i]
        out.append({"chunk_id": cid, "doc_id": doc, "source_uri": doc, "chunk_index": i, "heading_path": ["H"],
                    "start_char": 20 * i, "end_char": 20 * i + len(text), "page": None, "page_end": None,
                    "doc_updated_at": "", "ingested_at": "t", "language": "", "acl": list(acl),
                    "content_hash": chash, "embed_model": model, "embed_key": ids.embed_key(model, text),
                    "text": text, "embed_text": text, "size": len(text.split()), "title": "", "author": "",
                    "source_version": "v1", "chunker": "c", "header_mode": "none", "quality": quality,
                    "reasons": [] if quality == "ready" else ["missing_acl"], "section_id": "s", "embed_window": ""})
    return out


def row(doc, recs, path=None, root="/r", version="v1", versioning=""):
    return DocumentRow(doc, root, path or doc, path or doc, version, "inputs", "", "", "", "2026-01-01T00:00:00Z",
                       len(recs), versioning)


def vec(text):
    """A deterministic 3-d vector per text (unit-ish, distinct)."""
    h = ids.sha256_hex(text)
    return [int(h[0:2], 16) / 255 + 0.01, int(h[2:4], 16) / 255 + 0.01, int(h[4:6], 16) / 255 + 0.01]


def owner(store, doc_id):
    """(root, path) of the document holding ``doc_id``, or None: what ingest asks before giving an id."""
    held = store.documents([doc_id])
    return (held[0].root, held[0].path) if held else None


def write(store, doc, recs, **kw):
    """What pipeline/write.py does: the set difference against the store's fresh state."""
    calls = []

    def decide(state, old):
        calls.append((state, dict(old)))
        new = {r["chunk_id"]: r for r in recs}
        added = [r for c, r in new.items() if c not in old]
        updated = [r for c, r in new.items() if c in old and old[c] != r]
        removed = sorted(c for c in old if c not in new)
        if not (added or updated or removed) and state is not None:
            return None
        vectors = {r["embed_key"]: vec(r["embed_text"]) for r in added + updated}
        return DocumentDiff(added, updated, removed, vectors, "m@1")

    diff = write_decided(store, row(doc, recs, **kw), decide)
    return diff, calls


def test_both_backends_share_one_write_protocol(store):
    assert isinstance(store, DocumentWrites)  # write_document, remove_missing, relink_versions: written once
    assert type(store).write_document is DocumentWrites.write_document


def test_the_protocol_is_narrow_and_every_backend_implements_it(store):
    """The Store protocol's methods (about 20, not 41) and its ranker's are all there, callable."""
    from chunkwise.store.base import LocalRanker, ServerRanker, Store

    def methods(proto):
        return {n for n, v in vars(proto).items() if callable(v) and not n.startswith("_")}

    # 29 until the eighth session (issue 26 item 1) folded them to 22: write_streamed into
    # write_document (write_decided is a plan over it), visible_records into records_of(doc_id, groups),
    # visible_count into count(doc_id, groups), missing_vectors into vectors(keys, values=False),
    # start_run and finish_run into run(now), chunks_by_key, document_chunks and iter_chunks into chunks()
    assert len(methods(Store)) <= 22
    for name in methods(Store):
        assert callable(getattr(store, name)), name
    ranker = ServerRanker if store.capabilities.native_search else LocalRanker
    for name in methods(ranker):
        assert callable(getattr(store.ranker, name)), name
    assert not hasattr(store, "count_missing") and not hasattr(store, "document_version")


def test_occurrences_give_repeated_passages_distinct_stable_ids():
    got = ids.chunk_ids("d", ["same words", "other", "same   words", "same words"])
    assert len({cid for cid, _ in got}) == 4  # a repeated passage is another record
    assert got[0][1] == got[2][1] == got[3][1]  # whitespace-insensitive content hash
    assert ids.chunk_ids("d", ["same words", "other"]) == got[:2]  # an id depends on what comes before only
    assert got[0][0] == ids.chunk_id("d", got[0][1], 0) and got[3][0] == ids.chunk_id("d", got[0][1], 2)


def test_write_rewrite_idempotently_then_change(store):
    store.add_root("/r")
    recs = records("a.md", ["rollback the deploy", "page the owner", "rollback the deploy"])
    diff, calls = write(store, "a.md", recs)
    assert len(diff.added) == 3 and calls == [(None, {})]
    assert len(store.records_of("a.md")) == 3 and store.count() == 3  # the repeated passage kept twice
    state = store.document_states("/r")["a.md"]
    assert (state.doc_id, state.source_version, state.inputs, state.chunk_count) == ("a.md", "v1", "inputs", 3)
    gen = store.generation()

    diff, calls = write(store, "a.md", recs)  # the same records again: decide sees them, writes nothing
    assert diff is None and set(calls[0][1]) == {r["chunk_id"] for r in recs}
    assert calls[0][0].source_version == "v1" and store.count() == 3
    assert store.generation() == gen  # nothing committed, nothing stale

    changed = records("a.md", ["rollback the deploy", "page the on-call owner"])
    diff, _ = write(store, "a.md", changed, version="v2")
    assert [r["text"] for r in diff.added] == ["page the on-call owner"] and len(diff.removed) == 2
    assert {r["text"] for r in store.records_of("a.md").values()} == {"rollback the deploy", "page the on-call owner"}
    assert store.document_states("/r")["a.md"].source_version == "v2"
    assert gen is None or store.generation() > gen
    # the vectors the removed chunks used are collected in the same transaction
    assert store.vectors([ids.embed_key("m@1", "page the owner")], values=False) == {}


def test_identity_id_change_and_conflict(store):
    store.add_root("/r")
    write(store, "a.md", records("a.md", ["one"]))
    assert owner(store, "a.md") == ("/r", "a.md") and owner(store, "zz") is None
    with pytest.raises(IdentityConflict, match="already held"):
        write(store, "a.md", records("a.md", ["two"]), path="b.md")
    assert store.count() == 1 and set(store.document_states("/r")) == {"a.md"}
    # the file's front matter gives it another id: the document is replaced whole
    write(store, "new-id", records("new-id", ["one"]), path="a.md")
    assert owner(store, "a.md") is None and owner(store, "new-id") == ("/r", "a.md")
    assert [d.doc_id for d in store.documents()] == ["new-id"] and store.count() == 1


def test_remove_missing_dry_run_then_for_real(store):
    store.add_root("/r")
    write(store, "ops/a.md", records("ops/a.md", ["alpha", "beta"]))
    write(store, "ops/b.md", records("ops/b.md", ["gamma"]))
    write(store, "hr/c.md", records("hr/c.md", ["delta"]))
    assert store.remove_missing("/r", "ops/", {"ops/a.md"}, dry_run=True) == 1
    assert store.count() == 4  # a dry run writes nothing
    assert store.remove_missing("/r", "ops/", {"ops/a.md"}) == 1
    assert set(store.document_states("/r")) == {"ops/a.md", "hr/c.md"}
    assert store.remove_missing("/r", "", {"ops/a.md", "hr/c.md"}) == 0
    assert not store.vectors([ids.embed_key("m@1", "gamma")], values=False)  # its vector went with it
    assert store.remove_missing("/r", "", set()) == 3 and store.count() == 0 and store.documents() == []


def test_roots_fold(store):
    store.add_root("/r/ops")
    write(store, "run.md", records("run.md", ["x"]), root="/r/ops")
    store.add_root("/r")
    store.add_root("/r")  # twice: nothing changes
    assert store.roots() == ["/r"] and set(store.document_states("/r")) == {"ops/run.md"}
    assert owner(store, "run.md") == ("/r", "ops/run.md")


def test_versions_replace_whole_and_filter_by_groups(store):
    store.add_root("/r")
    write(store, "v1.md", records("v1.md", ["leave is 30 days"]), versioning='{"version": "1"}')
    write(store, "v2.md", records("v2.md", ["leave is 45 days"], acl=("hr",)), versioning='{"version": "2"}')
    links = store.relink_versions(lambda docs: [VersionLink("v2.md", "v1.md", "detected", 0.8),
                                                VersionLink("v2.md", "gone.md", "declared")])
    assert links == [VersionLink("v2.md", "v1.md", "detected", 0.8)]
    assert store.version_links(None, None) == links
    assert store.version_links(["v1.md"], ["hr", "staff"]) == links
    assert store.version_links(["v1.md"], ["staff"]) == []  # staff cannot see v2
    assert store.relink_versions(lambda docs: []) == [] and store.version_links(None, None) == []


def test_vectors_runs_and_settings(store):
    store.add_root("/r")
    recs = records("a.md", ["one", "two"])
    write(store, "a.md", recs)
    k1, k2 = (r["embed_key"] for r in recs)
    assert store.vectors([k1, k2, "nope"], values=False) == {k1: None, k2: None}  # keys only
    got = store.vectors([k1, "nope"])
    assert set(got) == {k1} and got[k1] == pytest.approx(vec("one"), rel=1e-6)
    store.put_vectors("m@1", [("stray", [1.0, 0.0, 0.0])])
    with store.run("2026-01-01T00:00:00Z") as finish:
        assert finish("2026-01-01T00:01:00Z", {"added": 2}, {"embedder": "m@1"}) == 1
    assert store.settings()["embedder"] == "m@1" and store.vectors(["stray"], values=False) == {}


def test_reads_counts_and_chunks(store):
    store.add_root("/r")
    write(store, "a.md", records("a.md", ["kept words", "more kept words"]))
    write(store, "b.md", records("b.md", ["nobody may read"], acl=(), quality="review"))
    c = store.counts()
    assert (c.chunks, c.ready, c.servable, c.missing_acl, c.vectors, c.orphan_vectors) == (3, 2, 2, 1, 3, 0)
    assert store.count() == 3
    assert [d.doc_id for d in store.documents()] == ["a.md", "b.md"]
    chunks = list(store.chunks())
    assert [ch.record["text"] for ch in chunks] == ["kept words", "more kept words", "nobody may read"]
    assert [d.source_version for d in store.documents(["zz", "b.md", "a.md"])] == ["v1", "v1"]
    assert [d.doc_id for d in store.documents(["zz", "b.md", "a.md"])] == ["a.md", "b.md"]
    assert store.documents([]) == []
    by_key = {c.key: c for c in store.chunks(keys=[ch.key for ch in chunks])}
    assert {k: v.record["chunk_id"] for k, v in by_key.items()} == {ch.key: ch.record["chunk_id"] for ch in chunks}
    assert [ch.record["chunk_index"] for ch in store.chunks(doc_id="a.md")] == [0, 1]
    assert [r["text"] for r in store.records_of("a.md", ["staff"]).values()] == ["kept words", "more kept words"]
    assert store.records_of("a.md", ["hr"]) == {} and store.records_of("b.md", ["staff"]) == {}
    assert {t for ch in chunks for t in ch.acl} == {"staff"} and store.ranker.has_vectors()


def _texts(store, keys):
    chunks = {c.key: c for c in store.chunks(keys=[int(k) for k in keys])}
    return sorted(chunks[int(k)].record["text"] for k in keys)


def test_lexical_search_under_groups(store):
    """What the ranker reads: a term's permitted rows (the permission filter inside the query)."""
    from chunkwise.lexical import analyze

    store.add_root("/r")
    write(store, "a.md", records("a.md", ["rollback steps", "rollback notes"], acl=("sre",)))
    write(store, "b.md", records("b.md", ["rollback budget"], acl=("finance",)))
    write(store, "c.md", records("c.md", ["rollback draft"], acl=("sre",), quality="review"))
    term = analyze("rollback")[0]
    if store.capabilities.native_search:
        with store.ranker.snapshot():
            assert store.ranker.lexical_stats(["sre"])[0] == 2 and store.ranker.lexical_stats(["nobody"])[0] == 0
            assert store.ranker.lexical_df([term], ["sre"]) == {term: 2}
            assert store.ranker.lexical_df([term], ["sre", "finance"]) == {term: 3}
            post = store.ranker.lexical_postings([term], ["finance"])[term]
        matched, found = store.ranker.lexical_top([term], [1.0], ["sre"], 2.0, 5, 1.2, 0.75)
        assert matched == 2 and _texts(store, found) == ["rollback notes", "rollback steps"]
    else:
        assert store.ranker.term_count(term, ["sre"]) == 2 and store.ranker.term_count(term) == 4
        post = store.ranker.term_matches(term, ["finance"])
        assert _texts(store, store.ranker.term_matches(term, ["sre"]).keys) == ["rollback notes", "rollback steps"]
        assert sorted(n for _, n in store.ranker.lexical_row_sizes()) == [2, 2, 2, 2]
        everything = store.ranker.term_rows(term)  # unfiltered: for a caller that filters by its own bitmap
        assert _texts(store, everything) == ["rollback budget", "rollback draft", "rollback notes", "rollback steps"]
        assert len(store.ranker.term_rows(term, ("title",))) == 0
    assert _texts(store, post.keys) == ["rollback budget"]


def test_dense_candidates_under_groups(store):
    store.add_root("/r")
    write(store, "a.md", records("a.md", ["alpha text", "beta text"], acl=("sre",)))
    write(store, "b.md", records("b.md", ["gamma text"], acl=("finance",)))
    target = vec("beta text")
    if store.capabilities.native_search:
        keys, matrix = store.ranker.dense_candidates(target, ["sre"], 1)
        assert matrix.shape == (len(keys), 3) and _texts(store, keys)[:2] in (["beta text"], ["alpha text", "beta text"])
        assert "gamma text" not in _texts(store, store.ranker.dense_candidates(target, ["sre"], 5)[0])
        assert list(store.ranker.dense_candidates(target, ["nobody"], 5)[0]) == []
    else:
        rows = store.ranker.servable_rows(vectors=True, ranks=True)
        assert rows.vectors.shape == (3, 3) and sorted(rows.tags) == [("finance",), ("sre",), ("sre",)]
        assert sorted(store.ranker.chunk_ids(rows.keys).values()) == sorted(
            r["chunk_id"] for d in ("a.md", "b.md") for r in store.records_of(d).values())


def test_capabilities_are_typed_and_fixed(store):
    caps = store.capabilities
    assert caps.native_search == (caps.backend == "postgresql")
    assert caps.parallel_writes == (caps.backend == "postgresql") and caps.filtered_reads is False
    assert caps.batched_writes == (caps.backend == "sqlite")
    with pytest.raises(Exception):
        caps.native_search = not caps.native_search  # frozen


def test_batched_writes_is_what_batch_does(store, db_location):
    """``capabilities.batched_writes`` says whether ``batch()`` holds writes until its ``commit``: a
    backend that declares it and commits each write, or batches without declaring it, fails here."""
    store.add_root("/r")

    def seen_elsewhere() -> int:
        with open_store(db_location, readonly=True) as other:
            return other.count()

    with store.batch() as commit:
        write(store, "a.md", records("a.md", ["one", "two"]))
        before = seen_elsewhere()
        commit()
        after = seen_elsewhere()
        write(store, "b.md", records("b.md", ["three"]))
    assert (before, after) == ((0, 2) if store.capabilities.batched_writes else (2, 2))
    assert seen_elsewhere() == 3 and store.count() == 3  # the block's end commits the rest


def test_time_limit_stops_a_long_statement_and_leaves_the_store_usable(store):
    """``time_limit``: a statement running past it is stopped (``StoreTimeout``), on both backends; the
    limit ends with the block. (The endless statements are written per backend: no Store read is.)"""
    endless = ("SELECT pg_sleep(60)" if store.capabilities.backend == "postgresql" else
               "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) SELECT count(*) FROM n")
    started = time.monotonic()
    with pytest.raises(StoreTimeout):
        with store.time_limit(0.2):
            store.db.execute(endless).fetchone()
    assert time.monotonic() - started < 20
    with store.time_limit(30):
        store.add_root("/r")
        write(store, "a.md", records("a.md", ["one"]))
    assert store.count() == 1 and store.roots() == ["/r"]
    if store.capabilities.backend == "postgresql":
        assert store.db.execute("SHOW statement_timeout").fetchone()[0] == "0"  # reset after the block


def test_generation_grows_with_each_commit(store):
    first = store.generation()
    store.add_root("/r")
    write(store, "a.md", records("a.md", ["one"]))
    second = store.generation()
    if first is None:
        pytest.skip("this role cannot read the generation")
    assert second > first
    store.put_vectors("m@1", [("k", [1.0, 0.0, 0.0])])
    assert store.generation() > second


def test_the_folded_reads_answer_as_the_reads_they_replaced(store):
    """Issue 26 item 1 folded 29 methods to 22: each folded read gives, per mode, what its old method
    gave (``records_of``/``count`` with groups: the filtered path; ``chunks`` by document, by key or
    all; ``vectors`` without values: the keys only), and a mode that means nothing is refused."""
    store.add_root("/r")
    recs = records("a.md", ["one", "two", "three"])
    recs[2] = {**recs[2], "acl": ["hr"]}
    write(store, "a.md", recs)
    write(store, "b.md", records("b.md", ["four"]))
    assert store.count() == 4 and store.count("a.md") == 3 and store.count("zz.md") == 0
    assert store.count("a.md", ["staff"]) == len(store.records_of("a.md", ["staff"])) == 2
    assert store.count("a.md", ["nobody"]) == 0 and store.records_of("a.md", ["nobody"]) == {}
    assert set(store.records_of("a.md", ["hr"])) == {recs[2]["chunk_id"]} and len(store.records_of("a.md")) == 3
    by_doc = list(store.chunks(doc_id="a.md"))
    assert [c.record["chunk_index"] for c in by_doc] == [0, 1, 2]
    keys = [c.key for c in by_doc]
    assert sorted(c.key for c in store.chunks(keys=[*keys, 10**9])) == sorted(keys)  # an absent key is left out
    assert [c.record["doc_id"] for c in store.chunks()] == ["a.md", "a.md", "a.md", "b.md"]
    k = recs[0]["embed_key"]
    assert store.vectors([k, "nope"], values=False) == {k: None}
    assert store.vectors([k, "nope"])[k] == pytest.approx(vec("one"), rel=1e-6)
    with pytest.raises(ValueError):
        store.count(groups=["staff"])
    with pytest.raises(ValueError):
        store.chunks(doc_id="a.md", keys=keys)
