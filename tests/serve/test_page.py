"""The web page in a real browser (Debian's chromium driven by playwright) against real servers: it loads
with no console errors and no request outside the server, a search from the URL renders cited
passages inside their documents, hostile document text stays text, a caller without the group sees
nothing, each groups mode works from the browser, and a screenshot is something a person can read."""
from __future__ import annotations

import io
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
from .serving import SECRET

CHROMIUM = Path("/usr/bin/chromium")
pytestmark = pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium at /usr/bin/chromium "
                                                               "(.ci/run installs it: apt-get install -y chromium)")
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--no-first-run"]


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        yield b
        b.close()


class Loaded:
    """A page with every console error, page error, dialog and request recorded."""

    def __init__(self, browser, url: str, wait_for: str | None = ".chunk.hit"):
        self.page = browser.new_page(viewport={"width": 1280, "height": 900})
        self.errors, self.dialogs, self.requests = [], [], []
        self.page.on("console", lambda m: m.type == "error" and self.errors.append(m.text))
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.page.on("dialog", lambda d: (self.dialogs.append(d.message), d.dismiss()))
        self.page.on("request", lambda r: self.requests.append(r.url))
        self.page.goto(url, wait_until="load")
        if wait_for:
            self.page.wait_for_selector(wait_for, timeout=60_000)
        self.page.wait_for_timeout(150)  # let a late onerror or timer fire if one was (wrongly) created

    def outside(self, base: str) -> list[str]:
        return [u for u in self.requests if not u.startswith(base + "/")]

    def close(self):
        self.page.close()


def test_search_from_the_url_renders_cited_passages_in_their_documents(browser, body_server, tmp_path):
    loaded = Loaded(browser, body_server.url + "/?q=rollback+deploy&groups=sre&mode=bm25")
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
    loaded = Loaded(browser, body_server.url + "/?q=quartz&groups=sre&mode=bm25")
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
    loaded = Loaded(browser, body_server.url + f"/?q={SECRET}+reconciliation&groups=sre&mode=bm25", wait_for=None)
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
    dense = Loaded(browser, body_server.url + f"/?q={SECRET}+reconciliation&groups=sre&mode=hybrid")
    try:
        shown = dense.page.locator("#results").inner_text()
        assert shown and SECRET not in shown and "quarterly" not in shown and "ledger.md" not in shown
        assert dense.errors == []
    finally:
        dense.close()
    # the same URL with the group shows the passage
    allowed = Loaded(browser, body_server.url + f"/?q={SECRET}+reconciliation&groups=finance&mode=bm25")
    try:
        assert SECRET in allowed.page.locator("#results").inner_text() and allowed.errors == []
    finally:
        allowed.close()


def test_the_form_makes_a_shareable_url(browser, body_server):
    loaded = Loaded(browser, body_server.url + "/", wait_for=None)
    page = loaded.page
    try:
        page.fill("#q", "pager rotation")
        page.fill("#groups", "sre")
        page.select_option("#mode", "hybrid")
        page.click("#go")
        page.wait_for_selector(".chunk.hit", timeout=60_000)
        query = parse_qs(urlsplit(page.url).query)
        assert query == {"q": ["pager rotation"], "groups": ["sre"], "mode": ["hybrid"]}
        assert page.locator("#share-link").get_attribute("href") == "/?" + urlsplit(page.url).query
        assert loaded.errors == []
    finally:
        loaded.close()


def test_header_mode_from_the_browser(browser, header_server):
    loaded = Loaded(browser, header_server.url + "/?q=octopus&groups=%E8%B4%A2%E5%8A%A1&mode=bm25")  # 财务
    try:
        assert "cjk.md" in loaded.page.locator(".result .cite").first.inner_text()
        assert "searched as 财务" in loaded.page.locator("#status").inner_text()
        assert loaded.errors == [] and loaded.outside(header_server.url) == []
    finally:
        loaded.close()


def test_tokens_mode_from_the_browser(browser, tokens_server):
    loaded = Loaded(browser, tokens_server.url + "/?q=rollback&mode=bm25&groups=finance", wait_for=None)
    page = loaded.page
    try:
        page.wait_for_selector("#token", state="visible", timeout=30_000)
        assert page.locator("#groups").is_hidden()
        page.fill("#token", "sre-token-0123456789abcdef")
        page.click("#go")
        page.wait_for_selector(".chunk.hit", timeout=60_000)
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
