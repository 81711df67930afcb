"""A PDF chunk's (page, box) list survives the store on both backends (``db_location``: SQLite and
PostgreSQL): ingest keeps it in the record, ``records_of`` and ``visible_records`` give it back, and
a search hit carries it (``hit.boxes``), as do the served records of a document."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

from chunkwise import api
from chunkwise.config import ChunkConfig
from chunkwise.pipeline import ingest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "extract"))
from boxes_fixtures import write_boxes_pdf  # noqa: E402

pytest.importorskip("fpdf")


def test_boxes_round_trip_through_the_store_and_search(tmp_path, db_location):
    root = tmp_path / "docs"
    root.mkdir()
    write_boxes_pdf(root / "ledgers.pdf")
    config = ChunkConfig(size=20)
    s = ingest([root], db_location, config, embedder=None, acl=("public",))
    assert not s.errors, s.errors
    made = {r.chunk_id: r.boxes for r in api.chunk_file(root / "ledgers.pdf", config, root=root, acl=("public",))}
    assert len(made) > 1 and all(made.values())

    store = api.open_store(db_location)
    try:
        [doc] = [d.doc_id for d in store.documents()]
        stored = store.records_of(doc)
        visible = list(store.records_of(doc, ["public"]).values())
    finally:
        store.close()
    assert {cid: tuple(tuple(b) for b in r["boxes"]) for cid, r in stored.items()} == made
    assert {r["chunk_id"]: tuple(tuple(b) for b in r["boxes"]) for r in visible} == made

    result = api.search(db_location, "clerks copied the counts", ["public"], mode="bm25", k=1).to_dict()
    hit = result["results"][0]["hit"]
    assert [tuple(b) for b in hit["boxes"]] == list(made[hit["chunk_id"]])
    retriever = api.open_retriever(db_location)
    try:
        served = api.visible_document(retriever, doc, ["public"]).to_dict()["records"]
    finally:
        retriever.close()
    assert {r["chunk_id"]: tuple(tuple(b) for b in r["boxes"]) for r in served} == made


def test_a_store_written_before_boxes_reads_and_serves_without_them(tmp_path, db_location, monkeypatch):
    """Records stored before boxes existed (no ``boxes`` key) stay as they are on re-ingest (the
    record format is unchanged: nothing added, updated or re-embedded), read back as no boxes and are
    served with ``hit.boxes == []``; a markdown file's records never hold the key."""
    from chunkwise.enrich.records import ChunkRecord
    from chunkwise.extract import pdf as pdf_extract
    from chunkwise.pipeline.executors import InlineExecutor

    root = tmp_path / "docs"
    root.mkdir()
    write_boxes_pdf(root / "ledgers.pdf")
    (root / "notes.md").write_text("# Notes\n\nThe harbour office opens at six.\n", encoding="utf-8")
    config = ChunkConfig(size=20)
    with monkeypatch.context() as m:
        m.setattr(pdf_extract, "_boxed", lambda number, box: {})  # what extraction gave before boxes
        first = api.ingest([root], db_location, config, embedder="hashing", acl=["staff"], executor=InlineExecutor())
    before = _stored(db_location)
    assert first.added == len(before) > 2 and not any("boxes" in r for r in before.values())
    again = api.ingest([root], db_location, config, embedder="hashing", acl=["staff"])
    assert (again.added, again.removed, again.embedded, again.metadata_updated) == (0, 0, 0, 0)
    assert _stored(db_location) == before
    assert all(ChunkRecord.from_dict(r).boxes == () for r in before.values())
    hit = api.search(db_location, "clerks copied the counts", ["staff"], mode="bm25", k=1).to_dict()["results"][0]["hit"]
    assert hit["boxes"] == [] and hit["page"] in (1, 2)


def _stored(db) -> dict:
    store = api.open_store(db)
    try:
        return {cid: rec for d in store.documents() for cid, rec in store.records_of(d.doc_id).items()}
    finally:
        store.close()
