"""A chunk's (page, box) list (``ChunkRecord.boxes``): the boxes of the blocks its span overlaps, in
text order, each once; none for a format without pages; never part of the chunk id, the content
hash or the embed key, so records with and without boxes are the same chunks."""
from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

import pytest

from chunkwise import api
from chunkwise.enrich.boxes import box_finder
from chunkwise.enrich.records import ChunkRecord
from chunkwise.types import Block

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "extract"))
from boxes_fixtures import LINES, contains, drawn, write_boxes_pdf  # noqa: E402


def test_box_finder_takes_the_blocks_a_span_overlaps():
    a, b, c = (1, 0, 0, 5, 5), (1, 0, 10, 5, 15), (2, 0, 0, 5, 5)
    blocks = [Block("paragraph", 0, 10, meta={"boxes": (a,)}), Block("page_break", 10, 12, meta={"page": 2}),
              Block("list", 12, 40, meta={"boxes": (b, c)}), Block("list_item", 14, 20, meta={"boxes": (b,)})]
    find = box_finder(blocks)
    assert find(0, 10) == (a,)  # ends where the next block starts: not the next block's
    assert find(9, 13) == (a, b, c)
    assert find(15, 18) == (b, c)  # nested: the list's boxes, the item's once
    assert find(10, 12) == ()  # the page break has none
    assert find(40, 50) == ()
    assert box_finder([Block("paragraph", 0, 5)])(0, 5) == ()


@pytest.fixture(scope="module")
def pdf(tmp_path_factory):
    pytest.importorskip("fpdf")
    return write_boxes_pdf(tmp_path_factory.mktemp("boxes") / "ledgers.pdf")


def test_a_chunk_across_a_page_break_has_a_box_on_each_page(pdf):
    records = api.chunk_file(pdf, api.ChunkConfig(size=20))
    [across] = [r for r in records if "night and" in r.text]
    assert (across.page, across.page_end) == (1, 2)
    assert [b[0] for b in across.boxes] == [1, 2]
    assert contains(across.boxes[0], drawn(LINES[2][3])) and contains(across.boxes[1], drawn(LINES[3][3]))
    for r in records:  # every chunk's text lies in its boxes' pages
        assert r.boxes and {b[0] for b in r.boxes} == set(range(r.page, (r.page_end or r.page) + 1))


def test_boxes_change_no_id_hash_or_embed_key(pdf):
    from chunkwise.enrich.records import build_records
    from chunkwise.extract.pdf import extract
    from chunkwise.pipeline.chunk import chunk_document

    doc = extract(pdf.read_bytes(), "ledgers.pdf")
    bare = replace(doc, blocks=tuple(replace(b, meta={k: v for k, v in b.meta.items() if k != "boxes"})
                                     for b in doc.blocks))
    made = {}
    for name, d in (("with", doc), ("without", bare)):
        chunks = chunk_document(d, size=20)
        made[name] = build_records(d, chunks, chunker="c", header_mode="path", embed_model="m@1", now="t")
    assert all(r.boxes for r in made["with"]) and not any(r.boxes for r in made["without"])
    assert [replace(r, boxes=()) for r in made["with"]] == made["without"]


def test_records_round_trip_their_boxes_through_json(pdf):
    import json

    for r in api.chunk_file(pdf, api.ChunkConfig(size=20)):
        data = json.loads(r.to_json())
        assert data["boxes"] == [list(b) for b in r.boxes]
        assert ChunkRecord.from_dict(data) == r


def test_a_format_without_pages_has_no_boxes():
    records = api.chunk_text("# Title\n\nSome words about harbours.\n", doc_id="a.md")
    assert records and all(r.boxes == () and "boxes" not in r.to_dict() for r in records)  # stored as before boxes
