"""Issue 25 items 2 and 6: positions never measure hidden text. A staff caller who reads the
sections around a finance-only section must not learn its length (the gap between two visible
offsets) or its chunk count (the gap in chunk indices): a document the caller may not read all of
is served without offsets or chunk indices, in search results (every expansion), the document
lookup, MCP answers and the integrations' metadata; a caller who reads all of it gets them."""
import re

import pytest

from chunkwise.config import ChunkConfig
from chunkwise.embed import make_embedder
from chunkwise.mcp import tools
from chunkwise.pipeline import ingest
from chunkwise.retrieve import Retriever
from chunkwise.retrieve.documents import visible_document
from conftest import BACKENDS, module_location

CONFIG = ChunkConfig(strategy="structure", size=48, header="path")
SECRET = " ".join(f"The acquisition of company {i} closes at a price of {i * 7} million." for i in range(40))
HANDBOOK = ("# Handbook\n\n## Leave\n\nStaff book leave in the portal after asking the team lead.\n\n"
            f"## Deal\n<!-- acl: finance -->\n\n{SECRET}\n\n"
            "## Pensions\n<!-- acl: staff -->\n\nPension contributions are matched up to five percent.\n")
PLAIN = "# Tools\n\nThe pension calculator and the leave planner are on the intranet.\n"
CHARS = re.compile(r"chars \d+-\d+")


@pytest.fixture(scope="module", params=BACKENDS)
def db(request, tmp_path_factory):
    root = tmp_path_factory.mktemp("positions")
    (root / "handbook.md").write_text(HANDBOOK, encoding="utf-8")
    (root / "tools.md").write_text(PLAIN, encoding="utf-8")
    location = module_location(request, tmp_path_factory, request.param)
    ingest([root], location, CONFIG, embedder=make_embedder("hashing"), acl=["staff"])
    return location


def _results(db, query, groups, **options):
    with Retriever(db) as r:
        return r.search(query, groups, k=5, mode="bm25", **options).to_dict()


@pytest.mark.parametrize("expand", ["none", "neighbours", "parent"])
def test_search_gives_no_positions_in_a_document_with_hidden_parts(db, expand):
    found = _results(db, "pension contributions matched", ["staff"], expand=expand, budget=400)
    handbook = [r for r in found["results"] if r["doc_id"] == "handbook.md"]
    assert handbook and all(SECRET[:30] not in r["text"] for r in handbook)
    for r in handbook:
        assert r["start_char"] is None and r["end_char"] is None
        assert r["hit"]["start_char"] is None and r["hit"]["end_char"] is None
        answer = tools.search_answer(found)["results"][found["results"].index(r)]
        assert not CHARS.search(answer["citation"]) and answer["start_char"] is None
    assert all(not CHARS.search(o["detail"]) for o in found["omitted"])
    tools_md = [r for r in found["results"] if r["doc_id"] == "tools.md"]
    assert all(r["start_char"] is not None for r in tools_md)  # all of it readable: positions as stored


def test_a_caller_who_reads_everything_gets_the_documents_positions(db):
    found = _results(db, "pension contributions matched", ["staff", "finance"])
    r = next(r for r in found["results"] if r["doc_id"] == "handbook.md")
    assert HANDBOOK[r["start_char"]:r["end_char"]].strip() and r["hit"]["start_char"] > len(SECRET)


def test_the_document_lookup_gives_no_positions_or_indices_for_a_partial_reader(db):
    with Retriever(db) as r:
        partial = visible_document(r.store, "handbook.md", ["staff"]).to_dict()
        whole = visible_document(r.store, "handbook.md", ["staff", "finance"]).to_dict()
    assert partial["boundaries"] == [] and partial["records"]
    assert all(rec["start_char"] is None and rec["chunk_index"] is None for rec in partial["records"])
    assert all(SECRET[:30] not in rec["text"] for rec in partial["records"])
    assert not any(CHARS.search(c["citation"]) for c in tools.fetch_answer(partial, None)["chunks"])
    indices = [rec["chunk_index"] for rec in whole["records"]]
    assert indices == list(range(len(indices))) and len(whole["boundaries"]) == len(indices)


def test_integration_metadata_follows_the_same_rule(db):
    from chunkwise.integrations._common import passage_metadata

    with Retriever(db) as r:
        result = r.search("pension contributions matched", ["staff"], k=5, mode="bm25")
    assert "handbook.md" in result.withheld and "tools.md" not in result.withheld
    for rank, p in enumerate(result.passages, 1):
        meta = passage_metadata(p, rank, result.withheld)
        assert (meta["start_index"] is None) == (p.doc_id == "handbook.md")


def test_boxes_are_positions_too():
    """A PDF box covers a whole block, so it shows where the unreadable part of a block lies: a
    withheld document's hits, references and records lose their boxes with their offsets."""
    from chunkwise.retrieve.positions import hide_record, hide_span

    box = [[3, 72.0, 90.5, 540.0, 410.25]]
    hit = {"chunk_id": "c", "start_char": 10, "end_char": 90, "page": 3, "boxes": box, "text": "t"}
    assert hide_span(hit) == {**hit, "start_char": None, "end_char": None, "boxes": []}
    record = {"chunk_id": "c", "chunk_index": 4, "start_char": 10, "end_char": 90, "boxes": box}
    assert hide_record(record) == {**record, "start_char": None, "end_char": None, "chunk_index": None, "boxes": []}
    assert "boxes" not in hide_span({"doc_id": "d", "start_char": 1, "end_char": 2})  # no key invented
    assert hide_span({"doc_id": "d"}) == {"doc_id": "d"}
