"""Pinned from the attack suite (seed 3531612709): a heading with no text of its own before a
section marked for another group. The heading was in no chunk, so a caller who may read every chunk
but not that heading was given the document's offsets (which show where the hidden heading sits)."""
from chunkwise.api import ChunkConfig
from chunkwise.embed import make_embedder
from chunkwise.pipeline import ingest
from chunkwise.retrieve import Retriever

DOC = """Heading t243q pager
=====

### Heading t244q team

<!-- acl: hr managers -->

Sentence t245q audit pager audit policy budget audit. Sentence t246q refund team audit budget.
"""


def test_a_heading_only_section_is_a_chunk_and_withholds_positions_from_who_may_not_read_it(tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "d20.md").write_text(DOC, encoding="utf-8")
    db = str(tmp_path / "a.db")
    ingest([tmp_path / "docs"], db, ChunkConfig(strategy="structure", size=48, header="path"),
           embedder=make_embedder("hashing"), acl="staff")
    with Retriever(db) as r:
        managers = r.search("budget", ["hr managers"], k=5, mode="bm25").to_dict()["results"]
        assert managers and all(h["start_char"] is None and h["hit"]["start_char"] is None for h in managers)
        assert "t243q" not in str(managers)
        both = r.search("budget", ["hr managers", "staff"], k=5, mode="bm25").to_dict()["results"]
        assert both and all(h["start_char"] is not None for h in both)
        staff = r.search("pager", ["staff"], k=5, mode="bm25").to_dict()["results"]
        assert [h["hit"]["text"] if "text" in h["hit"] else h["text"] for h in staff]
        assert "t243q" in str(staff) and "t245q" not in str(staff)
