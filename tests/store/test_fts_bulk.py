"""The SQLite store writes the FTS rows of new chunks in bulk before each commit (store/sqlite/fts.py),
not per row by a trigger: whatever sequence of writes, edits, removals, id changes and failed
documents (rolled back inside a batch) a run makes, every committed state's full-text index is
exactly what FTS5 derives from the chunks table (its own ``integrity-check`` with rank 1), and a
term of every stored chunk is found by ``MATCH``."""
import sqlite3

from hypothesis import HealthCheck, given, settings, strategies as st

import pytest

from chunkwise.errors import ChunkwiseError
from chunkwise.store import DocumentDiff
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


def texts(seed: int, n: int) -> list[str]:
    return [f"{WORDS[(seed + i) % len(WORDS)]} {WORDS[(seed * 3 + i) % len(WORDS)]} section {seed} part {i}"
            for i in range(n)]


def fail_after_removing(store, doc) -> None:
    """A document write that deletes a stored chunk (the pending rows are indexed first), then fails
    (a tag outside the grammar), inside its own savepoint: everything it did is rolled back."""
    old = store.chunk_keys_of(doc)
    bad = records(doc, ["never stored"], acl=("bad tag!",))
    with pytest.raises(ChunkwiseError):
        store.write_document(row(doc, bad), lambda state, _: DocumentDiff(bad, (), sorted(old)[:1], {}, "m@1"))


step = st.tuples(st.sampled_from(["write", "fail", "remove", "rename", "commit"]), st.integers(0, 4),
                 st.integers(0, 7), st.integers(1, 4))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(step, min_size=1, max_size=14), st.booleans())
def test_the_index_matches_the_chunks_after_any_write_sequence(tmp_path_factory, steps, batched):
    path = tmp_path_factory.mktemp("fts") / "s.db"
    with SQLiteStore(path) as store:
        stored: set[str] = set()
        scope = store.batch() if batched else _nothing()
        with scope:
            for op, doc_n, seed, n in steps:
                doc = f"d{doc_n}"
                if op == "write":
                    write(store, doc, records(doc, texts(seed, n)))
                    stored.add(doc)
                elif op == "fail" and doc in stored:
                    fail_after_removing(store, doc)
                elif op == "remove":
                    store.remove_missing("/r", "", stored - {doc})
                    stored.discard(doc)
                elif op == "rename" and doc in stored:  # a new id for the same path: the old document replaced whole
                    new = f"{doc}-{seed}"
                    write(store, new, records(new, texts(seed, n)), path=doc)
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
