"""Timing oracle, structurally: reading a document the caller may not see goes the same way, and
reads no more rows, than reading one that does not exist (the permission filter is in the lookup).
The measured times of both are in docs/_figures/server.md (benchmarks/hidden_lookup.py)."""
from __future__ import annotations

import pytest

from chunkwise import api
from chunkwise.config import ChunkConfig
from chunkwise.embed import make_embedder
from chunkwise.pipeline import ingest


def sections(n: int, word: str) -> str:
    return "".join(f"## Part {i}\n\nThe {word} clause {i} says what it says about item {i}.\n\n" for i in range(n))


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    root = tmp_path_factory.mktemp("hidden-lookup")
    docs = root / "docs"
    docs.mkdir()
    (docs / "secret.md").write_text("# Secret\n\n" + sections(300, "finance"), encoding="utf-8")
    (docs / "open.md").write_text("# Open\n\n" + sections(30, "staff"), encoding="utf-8")
    (docs / "mixed.md").write_text("# Mixed\n\n" + sections(5, "staff") + "## Pay\n<!-- acl: finance -->\n\n"
                                   + sections(100, "finance").replace("## Part", "### Pay part"), encoding="utf-8")
    db = root / "store.db"
    ingest([docs], db, ChunkConfig(strategy="structure", size=64), embedder=make_embedder("hashing"),
           acl_map={"secret.md": ["finance"], "open.md": ["staff"], "mixed.md": ["staff"]})
    return db


def vm_steps(retriever, call) -> tuple[int, object]:
    """SQLite virtual-machine steps (every row read costs several) of ``call()``, and its result."""
    count = [0]

    def tick():
        count[0] += 1
        return 0

    db = retriever.store.db
    db.set_progress_handler(tick, 1)
    try:
        found = call()
    finally:
        db.set_progress_handler(None, 1)
    return count[0], found


def steps(retriever, doc_id: str, groups) -> tuple[int, object]:
    """The steps of one document lookup."""
    return vm_steps(retriever, lambda: api.visible_document(retriever, doc_id, groups))


def test_a_hidden_document_reads_no_more_than_an_absent_one(store):
    retriever = api.open_retriever(str(store))
    try:
        with retriever.store.as_caller(["staff"]):  # the same snapshot for every lookup
            absent, none = steps(retriever, "no-such.md", ["staff"])
            hidden, also_none = steps(retriever, "secret.md", ["staff"])
            shown, doc = steps(retriever, "open.md", ["staff"])
            part, mixed = steps(retriever, "mixed.md", ["staff"])
        assert none is None and also_none is None
        assert hidden <= absent, (hidden, absent)
        # the counter sees rows: reading 30 permitted sections costs far more than reading nothing
        assert doc is not None and shown > absent + 30 * 5
        # a partly hidden document costs what its permitted part costs, not its 100 hidden sections
        visible = len(mixed.records)
        assert 0 < visible < 20 and part < shown, (visible, part, shown)
        with retriever.store.as_caller(["finance"]):
            _, secret = steps(retriever, "secret.md", ["finance"])
        assert secret is not None and len(secret.records) >= 300
    finally:
        retriever.close()


def withheld_steps(retriever, doc_ids, groups) -> tuple[int, frozenset]:
    """SQLite steps of a search's ``withheld`` (which documents lose their positions)."""
    from chunkwise.retrieve.positions import withheld

    return vm_steps(retriever, lambda: withheld(retriever, doc_ids, groups))


def test_withheld_reads_no_hidden_row(store):
    """A search's ``withheld`` counts a document's permitted chunks and compares the document row's
    count: a hidden id costs what an absent one costs, and a partly hidden document what its
    permitted part costs, not its 100 hidden sections (it used to read every chunk of the document)."""
    retriever = api.open_retriever(str(store))
    try:
        with retriever.store.as_caller(["staff"]):
            absent, none = withheld_steps(retriever, ["no-such.md"], ["staff"])
            hidden, also_none = withheld_steps(retriever, ["secret.md"], ["staff"])
            shown, whole = withheld_steps(retriever, ["open.md"], ["staff"])
            part, mixed = withheld_steps(retriever, ["mixed.md"], ["staff"])
        assert none == frozenset() and whole == frozenset() and mixed == {"mixed.md"}
        assert hidden <= absent, (hidden, absent)
        assert shown > absent + 30, (shown, absent)  # the counter sees the 30 permitted rows
        assert part < shown, (part, shown)  # 100 hidden sections are never visited
        with retriever.store.as_caller(["staff", "finance"]):
            _, all_read = withheld_steps(retriever, ["mixed.md", "secret.md", "open.md"], ["staff", "finance"])
        assert all_read == frozenset()
    finally:
        retriever.close()


def test_the_index_follows_every_write(store, tmp_path):
    """``chunk_access`` follows every write (inserted rows by the store, schema 11; re-tagging and
    removals by triggers): re-tagging and removing rows change what a caller reads."""
    from chunkwise.store import open_store

    with open_store(str(store)) as s:
        rows = s.db.execute("SELECT count(*) FROM chunk_access").fetchone()[0]
        servable = s.db.execute("SELECT count(*) FROM chunks c, json_each(c.acl) WHERE c.acl_index != ''").fetchone()[0]
        assert rows == servable > 0
        with s.db:
            s.db.execute("UPDATE chunks SET acl = '[\"hr\"]', acl_index = 'g6872' WHERE doc_id = 'open.md'")
        assert s.records_of("open.md", ["staff"]) == {}
        assert len(s.records_of("open.md", ["hr"])) >= 30
        with s.db:
            s.db.execute("DELETE FROM chunks WHERE doc_id = 'open.md'")
        assert s.records_of("open.md", ["hr"]) == {}
        assert s.db.execute("SELECT count(*) FROM chunk_access WHERE doc_id = 'open.md'").fetchone()[0] == 0


def test_postgres_filters_inside_the_lookup(pg_url, tmp_path):
    """The same rule on PostgreSQL: ``visible_records`` carries ``servable AND acl && groups`` in its
    query, so hidden rows never leave the server; hidden and absent give the same empty answer."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "secret.md").write_text("# Secret\n\n" + sections(20, "finance"), encoding="utf-8")
    (docs / "mixed.md").write_text("# Mixed\n\n" + sections(3, "staff") + "## Pay\n<!-- acl: finance -->\n\n"
                                   + sections(10, "finance").replace("## Part", "### Pay part"), encoding="utf-8")
    ingest([docs], pg_url, ChunkConfig(strategy="structure", size=64), embedder=make_embedder("hashing"),
           acl_map={"secret.md": ["finance"], "mixed.md": ["staff"]})
    retriever = api.open_retriever(pg_url)
    try:
        assert retriever.store.records_of("secret.md", ["staff"]) == {}
        assert retriever.store.records_of("no-such.md", ["staff"]) == {}
        assert api.visible_document(retriever, "secret.md", ["staff"]) is None
        staff = list(retriever.store.records_of("mixed.md", ["staff"]).values())
        assert staff and all("finance" not in r["text"] for r in staff)
        assert len(retriever.store.records_of("mixed.md", ["finance"])) >= 10
    finally:
        retriever.close()

