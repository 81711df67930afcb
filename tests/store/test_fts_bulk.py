"""The SQLite store writes the FTS rows and the permission index (``chunk_access``) rows of new chunks
in bulk before each commit (store/sqlite/fts.py), not per row by a trigger: whatever sequence of
writes, edits, re-tagging, removals, id changes and failed documents (rolled back inside a batch) a
run makes, every committed state's full-text index is exactly what FTS5 derives from the chunks
table (its own ``integrity-check`` with rank 1), a term of every stored chunk is found by ``MATCH``,
and ``chunk_access`` holds exactly one row per tag of every servable chunk (what schema 8's trigger
derived), no more."""
import sqlite3

from hypothesis import HealthCheck, given, settings, strategies as st

import pytest

from chunkwise.errors import ChunkwiseError
from chunkwise.store import DocumentDiff
from chunkwise.store.writing import write_decided
from chunkwise.store.sqlite.sqlite import SQLiteStore

from test_contract import records, row, write

WORDS = ["ledger", "payout", "refund", "freeze", "owner", "window", "deploy", "rollback"]


def index_is_exact(path) -> None:
    con = sqlite3.connect(path)
    try:
        con.execute("INSERT INTO chunks_fts(chunks_fts, rank) VALUES ('integrity-check', 1)")
        stored = con.execute("SELECT rowid, lex_body FROM chunks").fetchall()
        for rowid, body in stored:
            term = body.split()[0]
            hits = {r for (r,) in con.execute("SELECT rowid FROM chunks_fts WHERE chunks_fts MATCH ?",
                                              (f'lex_body:"{term}"',))}
            assert rowid in hits, (rowid, term)
    finally:
        con.close()
    access_is_exact(path)


def access_is_exact(path) -> None:
    """``chunk_access`` is the set schema 8's insert trigger derived from the chunks table: (tag,
    document, chunk) for every tag of every chunk with access tokens (``acl_index`` not empty)."""
    con = sqlite3.connect(path)
    try:
        held = con.execute("SELECT tag, doc_id, chunk FROM chunk_access").fetchall()
        derived = con.execute("SELECT t.value, c.doc_id, c.rowid FROM chunks c, json_each(c.acl) t"
                              " WHERE c.acl_index != ''").fetchall()
        assert len(held) == len(set(held))
        assert set(held) == set(derived), (sorted(set(held) - set(derived))[:5], sorted(set(derived) - set(held))[:5])
    finally:
        con.close()


# (tags, quality): a chunk in review has no access rows, whatever its tags (never servable)
TAGS = [(("staff",), "ready"), (("staff", "hr"), "ready"), (("finance",), "ready"), ((), "review"),
        (("staff",), "review")]


def texts(seed: int, n: int) -> list[str]:
    return [f"{WORDS[(seed + i) % len(WORDS)]} {WORDS[(seed * 3 + i) % len(WORDS)]} section {seed} part {i}"
            for i in range(n)]


def fail_after_removing(store, doc) -> None:
    """A document write that deletes a stored chunk (the pending rows are indexed first), then fails
    (a tag outside the grammar), inside its own savepoint: everything it did is rolled back."""
    old = store.chunk_keys_of(doc)
    bad = records(doc, ["never stored"], acl=("bad tag!",))
    with pytest.raises(ChunkwiseError):
        write_decided(store, row(doc, bad), lambda state, _: DocumentDiff(bad, (), sorted(old)[:1], {}, "m@1"))


step = st.tuples(st.sampled_from(["write", "fail", "remove", "rename", "retag", "commit"]), st.integers(0, 4),
                 st.integers(0, 7), st.integers(1, 4))


def tagged(doc, seed, n, access):
    """A document's records with ``access``: (tags, quality)."""
    tags, quality = access
    return records(doc, texts(seed, n), acl=tags, quality=quality)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(step, min_size=1, max_size=14), st.booleans())
def test_the_index_matches_the_chunks_after_any_write_sequence(tmp_path_factory, steps, batched):
    path = tmp_path_factory.mktemp("fts") / "s.db"
    with SQLiteStore(path) as store:
        stored: dict[str, tuple[str, int, int]] = {}  # path -> (doc id, seed, n) of what it holds
        scope = store.batch() if batched else _nothing()
        with scope:
            for op, doc_n, seed, n in steps:
                doc = f"d{doc_n}"
                if op == "write":
                    write(store, doc, tagged(doc, seed, n, TAGS[(seed + n) % len(TAGS)]))
                    stored[doc] = (doc, seed, n)
                elif op == "retag" and doc in stored:  # the same chunks, other tags: updated in place
                    held, was_seed, was_n = stored[doc]
                    write(store, held, tagged(held, was_seed, was_n, TAGS[seed % len(TAGS)]), path=doc)
                elif op == "fail" and doc in stored:
                    fail_after_removing(store, doc)
                elif op == "remove":
                    store.remove_missing("/r", "", set(stored) - {doc})
                    stored.pop(doc, None)
                elif op == "rename" and doc in stored:  # a new id for the same path: the old document replaced whole
                    new = f"{doc}-{seed}"
                    write(store, new, tagged(new, seed, n, TAGS[n % len(TAGS)]), path=doc)
                    stored[doc] = (new, seed, n)
                elif op == "commit":
                    store.commit()
        index_is_exact(path)


class _nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def test_a_store_of_schema_9_keeps_its_index_when_upgraded(tmp_path, monkeypatch):
    """Chunks indexed by the old per-row trigger stay indexed after migration 10 drops it; chunks
    written afterwards are indexed without it."""
    import chunkwise.store.sqlite.sqlite as sqlite_module

    class TriggerIndexes(sqlite_module.PendingIndex):  # what a schema-9 writer did: nothing, the trigger indexes
        def flush(self):
            self.above = None

    path = tmp_path / "s.db"
    with monkeypatch.context() as m:
        m.setattr(sqlite_module, "MIGRATIONS", sqlite_module.MIGRATIONS[:9])
        m.setattr(sqlite_module, "LATEST", 9)
        m.setattr(sqlite_module, "PendingIndex", TriggerIndexes)
        with SQLiteStore(path) as store:
            assert store.db.execute("SELECT count(*) FROM sqlite_master WHERE name = 'chunks_ai'").fetchone()[0] == 1
            write(store, "a", records("a", texts(1, 3)))
    with SQLiteStore(path) as store:
        assert store.db.execute("SELECT count(*) FROM sqlite_master WHERE name = 'chunks_ai'").fetchone()[0] == 0
        write(store, "b", records("b", texts(2, 2)))
        write(store, "a", records("a", texts(3, 2)))  # an edit: the old trigger's rows are deleted
    index_is_exact(path)


def test_a_store_of_schema_10_keeps_its_permission_index_when_upgraded(tmp_path, monkeypatch):
    """Rows the insert trigger of schema 8 wrote stay after migration 11 drops it; chunks written
    afterwards get theirs from the store; an edit and a removal delete the old trigger's rows."""
    import chunkwise.store.sqlite.fts as fts_module
    import chunkwise.store.sqlite.sqlite as sqlite_module

    path = tmp_path / "s.db"
    with monkeypatch.context() as m:  # what a schema-10 writer did: FTS rows in bulk, access rows by the trigger
        m.setattr(sqlite_module, "MIGRATIONS", sqlite_module.MIGRATIONS[:10])
        m.setattr(sqlite_module, "LATEST", 10)
        m.setattr(fts_module, "_ACCESS", "SELECT ?")
        with SQLiteStore(path) as store:
            assert store.db.execute("SELECT count(*) FROM sqlite_master WHERE name = 'chunk_access_ai'").fetchone()[0] == 1
            write(store, "a", tagged("a", 1, 3, (("staff", "hr"), "ready")))
            write(store, "c", tagged("c", 4, 2, (("finance",), "ready")))
        access_is_exact(path)
    with SQLiteStore(path) as store:
        assert store.db.execute("SELECT count(*) FROM sqlite_master WHERE name = 'chunk_access_ai'").fetchone()[0] == 0
        write(store, "b", tagged("b", 2, 2, (("staff",), "review")))
        write(store, "a", tagged("a", 3, 2, (("finance",), "ready")))  # an edit: the old trigger's rows are deleted
        store.remove_missing("/r", "", {"a", "b"})  # and a removal
        assert store.records_of("a", ["staff"]) == {} and len(store.records_of("a", ["finance"])) == 2
    index_is_exact(path)


def test_a_write_without_the_flush_leaves_the_permission_index_short(tmp_path, monkeypatch):
    """The check above can fail: without the store's bulk insert (and no trigger since schema 11),
    a written chunk has no access row and ``access_is_exact`` says so."""
    import chunkwise.store.sqlite.fts as fts_module

    path = tmp_path / "s.db"
    monkeypatch.setattr(fts_module, "_ACCESS", "SELECT ?")
    with SQLiteStore(path) as store:
        write(store, "a", tagged("a", 1, 2, (("staff",), "ready")))
    with pytest.raises(AssertionError):
        access_is_exact(path)
