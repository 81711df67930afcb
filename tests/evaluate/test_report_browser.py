"""The report in a real browser (Debian's chromium, driven by playwright): it loads with no console
errors or requests, nothing in the data executes, the plots draw, a straddled answer is visibly marked,
and a screenshot is something a person can read."""
import io
from pathlib import Path

import pytest

from chunkwise.evaluate.report import render_report, write_report
from browsing import Loaded, chromium, needs_chromium
from test_report import sample_data

pytestmark = needs_chromium


@pytest.fixture(scope="module")
def browser():
    with chromium() as b:
        yield b


@pytest.fixture(scope="module")
def report(browser, tmp_path_factory):
    path = write_report(sample_data(), tmp_path_factory.mktemp("report") / "report.html")
    loaded = Loaded(browser, path.as_uri())
    yield loaded
    loaded.page.close()


def test_loads_clean_and_offline(report):
    assert report.errors == [] and report.dialogs == []
    assert [u for u in report.requests if not u.startswith("file://")] == []
    assert report.page.evaluate("typeof window.__pwned") == "undefined"
    assert report.page.title().startswith("chunkwise eval <script>")  # shown as text, not run


def test_escaping_alone_stops_the_payload(browser, tmp_path):
    """Without the Content-Security-Policy the escaping is all that stands between the data and the page."""
    html = render_report(sample_data())
    start = html.index('<meta http-equiv="Content-Security-Policy"')
    bare = tmp_path / "bare.html"
    bare.write_text(html[:start] + html[html.index(">", start) + 1:], encoding="utf-8")
    loaded = Loaded(browser, bare.as_uri())
    try:
        assert "Content-Security-Policy" not in loaded.page.content()
        assert loaded.page.evaluate("typeof window.__pwned") == "undefined"
        assert loaded.dialogs == [] and loaded.errors == []
        assert loaded.page.locator("main img").count() == 0
    finally:
        loaded.page.close()


@pytest.mark.parametrize("pid", ["plot-recall", "plot-straddle", "plot-context"])
def test_plots_render_with_marks(report, pid):
    svg = report.page.locator(f"#{pid} svg")
    box = svg.bounding_box()
    assert box and box["width"] > 100 and box["height"] > 100
    marks = report.page.locator(f"#{pid} .mark")
    assert marks.count() > 0
    for i in range(marks.count()):
        m = marks.nth(i).bounding_box()
        assert m and m["width"] > 0 and m["height"] > 0
        assert box["x"] <= m["x"] and m["x"] + m["width"] <= box["x"] + box["width"] + 1
        assert box["y"] <= m["y"] and m["y"] + m["height"] <= box["y"] + box["height"] + 1
    fills = set(report.page.eval_on_selector_all(f"#{pid} circle.mark", "cs => cs.map(c => getComputedStyle(c).fill)"))
    assert fills and "none" not in fills


STYLE = "e => { const s = getComputedStyle(e); return [s.textDecorationStyle, s.textDecorationColor, s.color, s.fontWeight]; }"


def test_straddled_answer_is_visibly_marked(report):
    page = report.page
    straddled = page.locator(".doc:not([hidden]) .seg.ans.straddled").first
    intact = page.locator(".doc:not([hidden]) .seg.ans:not(.straddled)").first
    straddled.scroll_into_view_if_needed()
    assert straddled.is_visible() and intact.is_visible()
    assert straddled.evaluate(STYLE) != intact.evaluate(STYLE)
    plain = page.locator(".doc:not([hidden]) .seg:not(.ans)").first
    assert intact.evaluate(STYLE) != plain.evaluate(STYLE)
    tag = page.locator(".doc:not([hidden]) .qtag.straddled").first
    assert "\u2702" in tag.evaluate("e => getComputedStyle(e, '::before').content")
    assert tag.bounding_box()["width"] > 0


def test_document_selector_and_question_links(report):
    page = report.page
    docs = page.locator("article.doc")
    page.select_option("#doc-select", "1")
    assert docs.nth(1).is_visible() and not docs.nth(0).is_visible()
    shown = page.locator("li.q:visible")
    assert shown.count() > 0 and all(shown.nth(i).get_attribute("data-doc") in ("1", "-1") for i in range(shown.count()))
    page.select_option("#doc-select", "0")
    link = page.locator('li.q[data-doc="0"] a[data-goto]').last
    target = link.get_attribute("data-goto")
    link.click()
    assert docs.nth(0).is_visible()
    assert page.locator(f'[id="{target}"]').is_visible()
    box = page.locator(f'[id="{target}"]').bounding_box()
    assert 0 <= box["y"] <= 900  # scrolled into the viewport
    page.locator("li.q details").first.locator("summary").click()
    assert page.locator("li.q details .hit").first.is_visible()


def test_screenshot_is_readable(report, tmp_path):
    from PIL import Image, ImageStat

    report.page.evaluate("window.scrollTo(0, 0)")
    path = tmp_path / "report.png"
    png = report.page.screenshot(path=str(path), full_page=True)
    assert path.stat().st_size > 50_000
    img = Image.open(io.BytesIO(png)).convert("RGB")
    assert img.width == 1280 and img.height > 1500
    assert ImageStat.Stat(img.convert("L")).stddev[0] > 20  # not blank
    assert len(img.getcolors(maxcolors=1 << 20)) > 200  # text, bands, plots: many colours
    plots = report.page.locator("#plots").bounding_box()
    region = img.crop((0, int(plots["y"]), 1280, int(plots["y"] + plots["height"])))
    header = img.crop((0, 0, 1280, int(plots["height"])))
    assert region.tobytes() != header.tobytes()
    blue, orange = (0x00, 0x72, 0xB2), (0xD5, 0x5E, 0x00)
    colors = {c for _, c in region.getcolors(maxcolors=1 << 20)}
    assert blue in colors and orange in colors  # the series were painted
