"""Issue 27 item 1 on the web page and the HTTP API: a PDF hit is cited with its page and where on
the page it is (a "region" line and the page number's tooltip), from the ``boxes`` the search
answer carries; the document view labels each chunk with its regions."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest
from browsing import Loaded, chromium, needs_chromium

from .serving import Server

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "extract"))
from boxes_fixtures import write_boxes_pdf  # noqa: E402


def _js(v: float) -> str:
    """A number as JavaScript prints it (72.0 -> "72")."""
    return str(int(v)) if v == int(v) else str(v)


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    pytest.importorskip("fpdf")
    from chunkwise.config import ChunkConfig
    from chunkwise.pipeline import ingest

    root = tmp_path_factory.mktemp("page-boxes")
    (root / "docs").mkdir()
    write_boxes_pdf(root / "docs" / "ledgers.pdf")
    db = root / "store.db"
    ingest([root / "docs"], db, ChunkConfig(size=20), embedder=None, acl_map={"*": ["sre"]})
    s = Server(db, "--insecure-groups-in-body", log=root / "serve.log")
    yield s
    s.stop()


def _hit(server) -> dict:
    import httpx

    body = {"query": "tides noted apart", "groups": ["sre"], "mode": "bm25", "k": 1}
    return httpx.post(server.url + "/search", json=body, timeout=60).json()["results"][0]["hit"]


def test_the_search_answer_carries_the_hits_boxes(server):
    import httpx

    hit = _hit(server)
    assert hit["page"] == 2 and {b[0] for b in hit["boxes"]} == {2}
    box = hit["boxes"][-1]  # the paragraph drawn at x 330, baselines 400 and 414
    assert box[1] == 330.0 and 380 < box[2] < 392 < 414 < box[4] < 420
    doc = httpx.get(server.url + "/documents/ledgers.pdf", headers={"X-Chunkwise-Groups": "sre"}, timeout=60)
    assert doc.status_code == 200 and all(r["boxes"] for r in doc.json()["records"])  # the document view's


@needs_chromium
def test_a_pdf_hit_shows_its_page_and_region(server):
    region = "; ".join(f"p. {b[0]} ({_js(b[1])}, {_js(b[2])})–({_js(b[3])}, {_js(b[4])})" for b in _hit(server)["boxes"])
    with chromium() as browser:
        loaded = Loaded(browser, server.url + "/?q=tides+noted+apart&groups=sre&mode=bm25&k=1", ".chunk.hit")
        page = loaded.page
        try:
            assert loaded.errors == []
            first = page.locator(".result").first
            assert first.locator(".cite .page").inner_text() == "p. 2"
            assert first.locator(".cite .page").get_attribute("title") == region
            assert first.locator(".cite .region").inner_text() == "region " + region
            assert region in first.locator(".chunk.hit .boundary").inner_text()
        finally:
            loaded.close()
