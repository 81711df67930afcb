"""The web page in a real browser (Debian's chromium driven by playwright) against real servers: it loads
with no console errors and no request outside the server, a search from the URL renders cited
passages inside their documents, hostile document text stays text, a caller without the group sees
nothing, each groups mode works from the browser, and a screenshot is something a person can read."""
from __future__ import annotations

import io
from urllib.parse import parse_qs, urlsplit

import pytest
from browsing import Loaded, chromium, needs_chromium

from .serving import SECRET

pytestmark = needs_chromium
HIT = ".chunk.hit"  # a passage shown inside its document: the page has fetched and drawn everything
# (functions: the page's CSP refuses a string evaluated as JavaScript)
NOTHING = "() => document.querySelector('#status').textContent.startsWith('No passage')"
FAILED = "() => document.querySelector('#status').textContent.startsWith('Search failed')"


@pytest.fixture(scope="module")
def browser():
    with chromium() as b:
        yield b


def test_search_from_the_url_renders_cited_passages_in_their_documents(browser, body_server, tmp_path):
    loaded = Loaded(browser, body_server.url + "/?q=rollback+deploy&groups=sre&mode=bm25", HIT)
    page = loaded.page
    try:
        assert loaded.errors == [] and loaded.dialogs == [] and loaded.outside(body_server.url) == []
        first = page.locator(".result").first
        cite = first.locator(".cite").inner_text()
        assert "runbook.md" in cite and "Runbook › Rollback" in cite and "chars " in cite and "#1" in cite
        assert "rollback" in [m.lower() for m in first.locator(".passage mark").all_inner_texts()]
        # the passage inside its document: boundaries of every visible chunk, the hit highlighted
        doc = first.locator(".doc")
        labels = doc.locator(".boundary").all_inner_texts()
        assert len(labels) >= 2 and all(label.startswith("chunk ") and "chars " in label for label in labels)
        hit = doc.locator(".chunk.hit")
        assert hit.count() >= 1 and hit.first.locator("mark").count() >= 1
        assert page.locator("#groups").input_value() == "sre" and page.locator("#mode").input_value() == "bm25"
        assert "searched as sre" in page.locator("#status").inner_text()
        shot = page.screenshot(full_page=False)
        (tmp_path / "page.png").write_bytes(shot)
        assert_readable(shot)
    finally:
        loaded.close()


def assert_readable(png: bytes) -> None:
    from PIL import Image, ImageStat

    img = Image.open(io.BytesIO(png)).convert("L")
    assert img.size == (1280, 900)
    stat = ImageStat.Stat(img)
    assert stat.stddev[0] > 20, "the screenshot is (nearly) blank"
    dark = sum(img.histogram()[:100]) / (img.size[0] * img.size[1])
    assert 0.01 < dark < 0.5, f"{dark:.3f} of the pixels are dark text: not a page of results"


def test_hostile_document_text_stays_text(browser, body_server):
    loaded = Loaded(browser, body_server.url + "/?q=quartz&groups=sre&mode=bm25", HIT)
    page = loaded.page
    try:
        assert loaded.errors == [] and loaded.dialogs == []
        assert page.evaluate("typeof window.__pwned") == "undefined"
        assert page.locator("#results img, #results script, #results b").count() == 0
        text = page.locator("#results").inner_text()
        assert "<script>window.__pwned = 1</script>" in text
        assert '"><img src=x onerror="window.__pwned=2">' in text
        assert "\x1b" not in text and "␛[31mred␛[0m" in text  # ESC shown as a visible mark, never raw
        assert "Hostile heading ␛[2J" in page.locator(".result .cite").first.inner_text()  # ESC in a heading too
        assert loaded.outside(body_server.url) == []
    finally:
        loaded.close()


def test_a_caller_without_the_group_sees_nothing(browser, body_server):
    loaded = Loaded(browser, body_server.url + f"/?q={SECRET}+reconciliation&groups=sre&mode=bm25")
    page = loaded.page
    try:
        page.locator("#status", has_text="No passage").wait_for(timeout=60_000)  # (the CSP forbids eval'd waits)
        assert page.locator(".result").count() == 0
        assert "quarterly" not in page.content() and "ledger" not in page.content()
        assert not [u for u in loaded.requests if "/documents/" in u]
        # and asking for the document itself, as this caller, is a plain 404
        status = page.evaluate("""async () => (await fetch('/documents/ledger.md',
                                  {headers: {'X-Chunkwise-Groups': 'sre'}})).status""")
        assert status == 404
        assert loaded.dialogs == [] and loaded.outside(body_server.url) == []
    finally:
        loaded.close()
    # dense ranking always finds neighbours: the caller's own chunks, never the hidden ones
    dense = Loaded(browser, body_server.url + f"/?q={SECRET}+reconciliation&groups=sre&mode=hybrid", HIT)
    try:
        shown = dense.page.locator("#results").inner_text()
        assert shown and SECRET not in shown and "quarterly" not in shown and "ledger.md" not in shown
        assert dense.errors == []
    finally:
        dense.close()
    # the same URL with the group shows the passage
    allowed = Loaded(browser, body_server.url + f"/?q={SECRET}+reconciliation&groups=finance&mode=bm25", HIT)
    try:
        assert SECRET in allowed.page.locator("#results").inner_text() and allowed.errors == []
    finally:
        allowed.close()


def test_the_form_makes_a_shareable_url(browser, body_server):
    loaded = Loaded(browser, body_server.url + "/")
    page = loaded.page
    try:
        page.fill("#q", "pager rotation")
        page.fill("#groups", "sre")
        page.select_option("#mode", "hybrid")
        page.click("#go")
        page.wait_for_selector(HIT, timeout=60_000)
        query = parse_qs(urlsplit(page.url).query)
        assert query == {"q": ["pager rotation"], "groups": ["sre"], "mode": ["hybrid"]}
        assert page.locator("#share-link").get_attribute("href") == "/?" + urlsplit(page.url).query
        assert loaded.errors == []
    finally:
        loaded.close()


def test_header_mode_from_the_browser(browser, header_server):
    loaded = Loaded(browser, header_server.url + "/?q=octopus&groups=%E8%B4%A2%E5%8A%A1&mode=bm25", HIT)  # 财务
    try:
        assert "cjk.md" in loaded.page.locator(".result .cite").first.inner_text()
        assert "searched as 财务" in loaded.page.locator("#status").inner_text()
        assert loaded.errors == [] and loaded.outside(header_server.url) == []
    finally:
        loaded.close()


def test_tokens_mode_from_the_browser(browser, tokens_server):
    loaded = Loaded(browser, tokens_server.url + "/?q=rollback&mode=bm25&groups=finance")
    page = loaded.page
    try:
        page.wait_for_selector("#token", state="visible", timeout=30_000)
        assert page.locator("#groups").is_hidden()
        page.fill("#token", "sre-token-0123456789abcdef")
        page.click("#go")
        page.wait_for_selector(HIT, timeout=60_000)
        assert "searched as sre" in page.locator("#status").inner_text()  # the token's groups, not the URL's
        assert {r.split("/")[-1] for r in page.locator(".result .source").all_inner_texts()} <= {
            "runbook.md", "mixed.md", "hostile.md"}
        assert "token" not in page.url and "sre-token" not in page.url
        assert "groups" not in parse_qs(urlsplit(page.url).query)
        assert page.evaluate("sessionStorage.getItem('chunkwise.token')") == "sre-token-0123456789abcdef"
        # the search the page started from the URL before a token was typed was refused, not widened
        assert loaded.outside(tokens_server.url) == []
    finally:
        loaded.close()


def test_filters_narrow_the_results_and_live_in_the_url(browser, body_server):
    """Filters (documents, folder, file types, dates) from the form go to the server and into the
    URL; back returns to the unfiltered search with its own fields, forward to the filtered one."""
    only = ("(name) => { const s = [...document.querySelectorAll('.result .cite .source')].map(e => e.textContent);"
            " return document.querySelector('.chunk.hit') !== null && s.length > 0 && s.every(x => x.endsWith(name)); }")
    both = ("() => { const s = [...document.querySelectorAll('.result .cite .source')].map(e => e.textContent);"
            " return s.some(x => x.endsWith('runbook.md')) && s.some(x => x.endsWith('ledger.md')); }")
    loaded = Loaded(browser, body_server.url + "/?q=rollback&groups=sre,finance&mode=bm25", HIT)
    page = loaded.page
    try:
        page.wait_for_function(both, timeout=60_000)  # runbook.md and ledger.md both mention a rollback
        page.locator("#filters-summary").click()
        page.fill("#f-doc", "ledger.md")
        page.fill("#f-type", ".MD")
        page.click("#go")
        page.wait_for_function(only, arg="ledger.md", timeout=60_000)
        query = parse_qs(urlsplit(page.url).query)
        assert query["doc"] == ["ledger.md"] and query["type"] == ["md"] and "after" not in query
        assert "documents ledger.md" in page.locator("#filters-summary").inner_text()

        page.go_back()
        page.wait_for_function(both, timeout=60_000)
        assert page.locator("#f-doc").input_value() == "" and page.locator("#f-type").input_value() == ""
        page.go_forward()
        page.wait_for_function(only, arg="ledger.md", timeout=60_000)
        assert page.locator("#f-doc").input_value() == "ledger.md"

        if page.locator("#filters").get_attribute("open") is None:
            page.locator("#filters-summary").click()
        page.fill("#f-doc", "")
        page.fill("#f-folder", "runbook")  # a source prefix
        page.click("#go")
        page.wait_for_function(only, arg="runbook.md", timeout=60_000)
        assert parse_qs(urlsplit(page.url).query)["folder"] == ["runbook"]
        assert loaded.errors == []

        # a date range no document falls in (these are undated): nothing, said plainly; a reversed one is
        # named in the summary and refused by the server (400), its message shown
        page.fill("#f-folder", "")
        page.fill("#f-after", "2001-01-01")
        page.fill("#f-before", "2001-12-31")
        page.click("#go")
        page.wait_for_function(NOTHING, timeout=60_000)
        assert parse_qs(urlsplit(page.url).query)["after"] == ["2001-01-01"]
        page.fill("#f-after", "2002-01-01")
        page.click("#go")
        page.wait_for_function("() => document.querySelector('#status').textContent.startsWith('Search failed')",
                               timeout=60_000)
        assert "is later than updated_before" in page.locator("#status").inner_text()
        assert "empty date range" in page.locator("#filters-summary").inner_text()
        assert [e for e in loaded.errors if "status of 400" not in e] == []  # the browser logs the refused request
        assert loaded.outside(body_server.url) == []
    finally:
        loaded.close()


def test_back_shows_the_earlier_searchs_groups(browser, body_server):
    """The groups field follows the URL: back to a search made without groups runs it without
    groups (refused), not with the groups typed since (their results were shown for the wrong URL)."""
    loaded = Loaded(browser, body_server.url + f"/?q={SECRET}&mode=bm25")
    page = loaded.page
    try:
        page.wait_for_function(FAILED, timeout=60_000)  # no groups: the server refuses
        page.fill("#groups", "finance")
        page.click("#go")
        page.wait_for_selector(HIT, timeout=60_000)
        page.go_back()
        page.wait_for_function(FAILED, timeout=60_000)
        assert page.locator("#groups").input_value() == "" and page.locator(".result").count() == 0
        page.go_forward()
        page.wait_for_selector(HIT, timeout=60_000)
        assert page.locator("#groups").input_value() == "finance"
    finally:
        loaded.close()
