"""The web page points at the hit: a question answered by a FAQ entry inside a runbook is shown under
the FAQ entry's heading with its answer first, the rest of the passage as context around it, and
only the words the search analyzer matched are marked (stemmed forms yes, stopwords never)."""
from __future__ import annotations

import pytest
from browsing import Loaded, chromium, needs_chromium

from .serving import Server

pytestmark = needs_chromium

RUNBOOK = """# Payments runbook

This runbook covers the payments service: deploys, rollbacks, paging and the usual questions.

## Deploys

Deploys go out through the release pipeline every weekday morning. The pipeline runs the smoke tests,
then shifts traffic in three steps. Watch the error-rate panel while traffic shifts.

## FAQ

### Who can approve a hotfix?

Any staff engineer of the payments team can approve a hotfix outside the release window.

### How do I rotate the webhook signing secret?

Run `payctl secrets rotate --webhook` from the bastion; the old secret stays valid for 24 hours.

### Where are the dashboards?

The dashboards live in the observability folder named payments-prod.
"""
STOPWORDS = {"how", "do", "i", "the", "a", "is"}


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    from chunkwise.config import ChunkConfig
    from chunkwise.pipeline import ingest

    root = tmp_path_factory.mktemp("page-hit")
    (root / "docs").mkdir()
    (root / "docs" / "runbook.md").write_text(RUNBOOK, encoding="utf-8")
    (root / "docs" / "secrets.md").write_text("# Secrets\n\nEvery secret is rotated yearly.\n", encoding="utf-8")
    db = root / "store.db"
    ingest([root / "docs"], db, ChunkConfig(strategy="structure", size=40), embedder=None, acl_map={"*": ["sre"]})
    s = Server(db, "--insecure-groups-in-body", log=root / "serve.log")
    yield s
    s.stop()


def test_the_page_shows_the_hit_first_and_marks_no_stopword(server):
    with chromium() as browser:
        q = "how+do+I+rotate+the+webhook+signing+secret"
        loaded = Loaded(browser, server.url + f"/?q={q}&groups=sre&mode=bm25&k=2", ".chunk.hit")
        page = loaded.page
        try:
            assert loaded.errors == [] and loaded.outside(server.url) == []
            first = page.locator(".result").first
            cite = first.locator(".cite").inner_text()
            assert "FAQ › How do I rotate the webhook signing secret?" in cite
            assert first.locator(".cite .tags").inner_text() == "tags sre"  # the result's access tags
            assert "runbook.md" in first.locator(".cite .source").inner_text()
            hit = first.locator(".passage").inner_text()
            assert "Run `payctl secrets rotate --webhook` from the bastion" in hit
            assert "approve a hotfix" not in hit  # another entry is context, not the hit
            marks = [m.lower() for m in page.locator("#results mark").all_inner_texts()]
            assert {"rotate", "secrets", "signing", "webhook"} <= set(marks)  # stemmed forms too
            assert not set(marks) & STOPWORDS
            around = first.locator("div.around").inner_text()  # the passage's other chunk, after the hit
            assert "dashboards" in around and "payctl" not in around
            assert first.locator(".chunk.hit").inner_text().count("payctl") == 1
        finally:
            loaded.close()


def test_expansion_is_context_around_the_hit(server):
    import httpx

    body = {"query": "how do I rotate the webhook signing secret", "groups": ["sre"], "mode": "bm25", "k": 1,
            "expand": "neighbours"}
    r = httpx.post(server.url + "/search", json=body, timeout=60).json()["results"][0]
    assert r["hit"]["heading_path"][-1] == "How do I rotate the webhook signing secret?"
    assert "approve a hotfix" in r["context"]["before"] and r["marks"]["hit"]
    assert r["context"]["before"] + r["hit"]["text"] + r["context"]["after"] == r["text"]


def test_per_document_from_the_api_and_the_page(server):
    import httpx

    body = {"query": "rotate secret webhook", "groups": ["sre"], "mode": "bm25", "k": 2}
    assert httpx.post(server.url + "/search", json=body, timeout=60).json()["per"] == "passage"
    grouped = httpx.post(server.url + "/search", json={**body, "per": "document"}, timeout=60).json()
    assert grouped["per"] == "document"
    assert [r["document_rank"] for r in grouped["results"]][0] == 1
    assert list(dict.fromkeys(r["doc_id"] for r in grouped["results"])) == ["runbook.md", "secrets.md"]
    with chromium() as browser:
        loaded = Loaded(browser, server.url + "/?q=rotate+secret+webhook&groups=sre&mode=bm25&k=2&per=document",
                        ".chunk.hit")
        page = loaded.page
        try:
            assert loaded.errors == []
            assert page.locator("#per").input_value() == "document"
            heads = page.locator(".doc-group").all_inner_texts()
            assert heads == ["Document 1: runbook.md", "Document 2: secrets.md"]
            assert "2 document(s)" in page.locator("#status").inner_text()
        finally:
            loaded.close()
