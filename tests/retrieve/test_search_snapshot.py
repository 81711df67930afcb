"""A search reads one snapshot of a SQLite store, however often an ingest commits during it.

CI saw ``StoreBusy("the store changed during every attempt to rank this query")`` while two
ingests wrote: the FTS ranker read row sizes, then postings, in separate autocommit reads, and a
document committed in between made every attempt stale. ``as_caller`` is now one WAL read
transaction around the whole search, so a commit in the middle is not seen at all (and the next
search sees it)."""
from __future__ import annotations

import pytest

from chunkwise.config import ChunkConfig
from chunkwise.embed import make_embedder
from chunkwise.pipeline import ingest
from chunkwise.retrieve import Retriever

CONFIG = ChunkConfig(strategy="structure", size=64, header="path")


def write(root, name, text):
    root.mkdir(parents=True, exist_ok=True)
    (root / name).write_text(text, encoding="utf-8")


@pytest.mark.parametrize("mode", ["bm25", "hybrid"])
def test_documents_committed_during_a_search_are_not_half_seen(tmp_path, mode):
    db = tmp_path / "index.db"
    write(tmp_path / "first", "base.md", "# Base\n\nfreeze the ledger before the payout run.\n")
    ingest([tmp_path / "first"], db, CONFIG, embedder=make_embedder("hashing"), acl_map={"base.md": ["staff"]})
    written = []

    with Retriever(db, embedder="hashing") as r:
        r.search("freeze ledger", ["staff"], k=3, mode=mode)  # sizes and statistics cached
        real = r.store.term_matches

        def commit_then_match(*args, **kwargs):  # another writer commits before every postings read
            n = len(written)
            write(tmp_path / f"more{n}", f"more{n}.md", f"# More {n}\n\nfreeze the ledger, again and again {n}.\n")
            ingest([tmp_path / f"more{n}"], db, CONFIG, embedder=make_embedder("hashing"),
                   acl_map={f"more{n}.md": ["staff"]})
            written.append(n)
            return real(*args, **kwargs)

        r.store.term_matches = commit_then_match
        during = r.search("freeze ledger", ["staff"], k=5, mode=mode)
        r.store.term_matches = real
        assert written, "the hook never ran: the test tests nothing"
        assert [p.source_uri.rsplit("/", 1)[-1] for p in during.passages] == ["base.md"]  # the snapshot's rows only
        after = r.search("freeze ledger", ["staff"], k=10, mode=mode)
        assert len(after.passages) == 1 + len(written)  # the next search sees every commit
