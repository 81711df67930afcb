"""The SQLite store's ``batch()`` (ingest's single writer) widens the page cache while it writes and
gives it back after; a document's chunks and vectors grow the generation once, and still grow it."""
from chunkwise.store.sqlite.sqlite import SQLiteStore, _BATCH_CACHE

from test_contract import records, row, write


def test_batch_widens_the_page_cache_and_gives_it_back(tmp_path):
    with SQLiteStore(tmp_path / "s.db") as store:
        before = store.db.execute("PRAGMA cache_size").fetchone()[0]
        assert before != _BATCH_CACHE
        with store.batch():
            assert store.db.execute("PRAGMA cache_size").fetchone()[0] == _BATCH_CACHE
            recs = records("d1", ["alpha beta", "gamma delta"])
            write(store, "d1", recs)
        assert store.db.execute("PRAGMA cache_size").fetchone()[0] == before


def test_a_document_with_chunks_and_vectors_grows_the_generation_once(tmp_path):
    with SQLiteStore(tmp_path / "s.db") as store:
        first = store.generation()
        recs = records("d1", ["alpha beta", "gamma delta"])
        write(store, "d1", recs)
        assert store.db.execute("SELECT count(*) FROM vectors").fetchone()[0] == 2
        assert store.generation() == first + 1
        store.put_vectors("m@1", [("k-alone", [0.5, 0.25, 0.125])])  # vectors alone still grow it
        assert store.generation() == first + 2


def test_a_batch_commit_that_fails_is_fatal_not_one_documents_error(tmp_path):
    """A commit that fails rolls back every document of the batch, not only the one being written:
    ``StoreWriteError`` (ingest stops and says so), never ``StoreBusy`` (ingest counts it against
    the current file and goes on, reporting the rolled-back documents as written). Here a reader
    holds the file while WAL is unavailable (rollback journal: COMMIT needs the exclusive lock)."""
    import sqlite3

    import pytest

    from chunkwise.errors import StoreWriteError

    path = tmp_path / "s.db"
    with SQLiteStore(path, timeout=0.1) as store:
        assert store.db.execute("PRAGMA journal_mode=DELETE").fetchone()[0] == "delete"
        before = store.db.execute("PRAGMA cache_size").fetchone()[0]
        reader = sqlite3.connect(path, isolation_level=None)
        with pytest.raises(StoreWriteError, match="since the last commit was rolled back"):
            with store.batch() as commit:
                write(store, "d1", records("d1", ["alpha beta"]))
                reader.execute("BEGIN")
                reader.execute("SELECT count(*) FROM chunks").fetchone()
                write(store, "d2", records("d2", ["gamma delta"]))
                commit()
        reader.execute("COMMIT")
        reader.close()
        assert store.documents() == []  # both rolled back, as the message says
        assert store.db.execute("PRAGMA cache_size").fetchone()[0] == before


def test_the_page_cache_is_given_back_when_the_batchs_last_commit_fails(tmp_path):
    import sqlite3

    import pytest

    from chunkwise.errors import StoreWriteError

    path = tmp_path / "s.db"
    with SQLiteStore(path, timeout=0.1) as store:
        store.db.execute("PRAGMA journal_mode=DELETE")
        before = store.db.execute("PRAGMA cache_size").fetchone()[0]
        reader = sqlite3.connect(path, isolation_level=None)
        with pytest.raises(StoreWriteError):
            with store.batch():
                write(store, "d1", records("d1", ["alpha beta"]))
                reader.execute("BEGIN")
                reader.execute("SELECT count(*) FROM chunks").fetchone()
        reader.execute("COMMIT")
        reader.close()
        assert store.db.execute("PRAGMA cache_size").fetchone()[0] == before
        write(store, "d2", records("d2", ["gamma delta"]))  # the connection writes on, outside any batch
        assert [d.doc_id for d in store.documents()] == ["d2"]
