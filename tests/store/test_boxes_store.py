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
        visible = store.visible_records(doc, ["public"])
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


def test_a_store_written_without_boxes_gets_them_in_place(tmp_path, db_location, monkeypatch):
    """Records stored before boxes existed (record format 2) get them on re-ingest: the same chunk
    ids, nothing added, removed or re-embedded, every kept record updated in place; the markdown
    file beside the PDF keeps its chunks."""
    from chunkwise.extract import pdf as pdf_extract
    from chunkwise.pipeline.executors import InlineExecutor

    root = tmp_path / "docs"
    root.mkdir()
    write_boxes_pdf(root / "ledgers.pdf")
    (root / "notes.md").write_text("# Notes\n\nThe harbour office opens at six.\n", encoding="utf-8")
    config = ChunkConfig(size=20)
    with monkeypatch.context() as m:
        m.setattr(sys.modules["chunkwise.pipeline.ingest"], "RECORD_FORMAT", 2)
        m.setattr(pdf_extract, "_boxed", lambda number, box: {})  # what extraction gave before boxes
        first = api.ingest([root], db_location, config, embedder="hashing", acl=["staff"], executor=InlineExecutor())
    before = _stored(db_location)
    assert first.added == len(before) > 2 and not any(r["boxes"] for r in before.values())
    again = api.ingest([root], db_location, config, embedder="hashing", acl=["staff"])
    after = _stored(db_location)
    assert set(after) == set(before)  # boxes are no part of a chunk id
    pdf_chunks = [cid for cid, r in after.items() if r["doc_id"] == "ledgers.pdf"]
    assert (again.added, again.removed, again.embedded) == (0, 0, 0) and again.metadata_updated >= len(pdf_chunks)
    assert all(after[cid]["boxes"] for cid in pdf_chunks)
    assert all(not r["boxes"] for r in after.values() if r["doc_id"] == "notes.md")
    assert {c: {k: v for k, v in r.items() if k not in ("boxes", "ingested_at")} for c, r in after.items()} \
        == {c: {k: v for k, v in r.items() if k not in ("boxes", "ingested_at")} for c, r in before.items()}


def _stored(db) -> dict:
    store = api.open_store(db)
    try:
        return {cid: rec for d in store.documents() for cid, rec in store.records_of(d.doc_id).items()}
    finally:
        store.close()
