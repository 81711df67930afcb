"""Debian's chromium driven by playwright, for the tests that look at a page (the eval report, the
serve page): one launch recipe, one recorder of console errors, page errors, dialogs and requests."""
from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path

import pytest

CHROMIUM = Path("/usr/bin/chromium")
needs_chromium = pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium at /usr/bin/chromium "
                                                                  "(.ci/run installs it: apt-get install -y chromium)")
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--no-first-run"]


@contextmanager
def chromium():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        try:
            yield b
        finally:
            b.close()


class Loaded:
    """A page with every console error, page error, dialog and request recorded; ``wait_for`` a
    selector before looking (pages that fetch their content)."""

    def __init__(self, browser, url: str, wait_for: str | None = None, timeout_ms: int = 60_000):
        self.page = browser.new_page(viewport={"width": 1280, "height": 900})
        self.errors, self.dialogs, self.requests = [], [], []
        self.page.on("console", lambda m: m.type == "error" and self.errors.append(m.text))
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.page.on("dialog", lambda d: (self.dialogs.append(d.message), d.dismiss()))
        self.page.on("request", lambda r: self.requests.append(r.url))
        self.page.goto(url, wait_until="load")
        if wait_for:
            self.page.wait_for_selector(wait_for, timeout=timeout_ms)
        self.page.wait_for_timeout(100)  # let a late onerror or timer fire if one was (wrongly) created

    def outside(self, base: str) -> list[str]:
        """Requests that went anywhere but ``base``."""
        return [u for u in self.requests if not u.startswith(base + "/")]

    def close(self) -> None:
        self.page.close()
