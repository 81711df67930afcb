"""A search transaction on PostgreSQL raises work_mem to ``SEARCH_WORK_MEM`` for itself only, and
never lowers a larger one (a term's bitmap over many heap pages turns lossy at the 4MB default:
BENCHMARKS, "PostgreSQL search at 100k and 1M chunks")."""
from chunkwise.store import open_store
from chunkwise.store.postgres.postgres_read import SEARCH_WORK_MEM


def _bytes(store, setting: str) -> int:
    return store.db.execute("SELECT pg_size_bytes(%s)", (setting,)).fetchone()[0]


def test_a_search_transaction_raises_work_mem_for_itself_only(pg_url):
    with open_store(pg_url) as store:
        store.db.execute("SET work_mem = '4MB'")
        with store.as_caller(["hr"]):
            inside = store.db.execute("SHOW work_mem").fetchone()[0]
        assert _bytes(store, inside) == _bytes(store, SEARCH_WORK_MEM) > _bytes(store, "4MB")
        assert store.db.execute("SHOW work_mem").fetchone()[0] == "4MB"  # transaction-local


def test_a_larger_work_mem_is_kept(pg_url):
    with open_store(pg_url) as store:
        store.db.execute("SET work_mem = '1GB'")
        with store.as_caller(["hr"]):
            assert store.db.execute("SHOW work_mem").fetchone()[0] == "1GB"
