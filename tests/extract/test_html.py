"""HTML extraction: main content only, nothing hidden, structure with offsets, no network."""
import hashlib
import socket
import sys

import pytest

pytest.importorskip("selectolax")

from fixtures import INJECTION, KNOWN_HTML, assert_spans, block_with, write_article_html  # noqa: E402

from chunkwise.errors import DependencyError  # noqa: E402
from chunkwise.extract import html  # noqa: E402


@pytest.fixture
def article(tmp_path):
    return write_article_html(tmp_path / "coastal notes.html")


def _extract(tmp_path, markup: str, name: str = "page.html"):
    path = tmp_path / name
    path.write_text(markup, encoding="utf-8")
    return html.extract(path.read_bytes(), name)


def test_known_sentence_under_its_heading(article):
    data = article.read_bytes()
    doc = html.extract(data, "coastal notes.html")
    assert doc.text.count(KNOWN_HTML) == 1
    block, heading = block_with(doc, KNOWN_HTML)
    assert block.kind == "paragraph" and (heading.text, heading.level) == ("Keepers", 2)
    assert (doc.media_type, doc.sha256) == ("text/html", hashlib.sha256(data).hexdigest())
    assert doc.metadata == {"title": "Coastal Notes", "language": "en"}
    assert_spans(doc)


def test_hidden_and_non_content_text_is_absent(article):
    doc = html.extract(article.read_bytes(), "a.html")
    assert "Ignore previous instructions" not in doc.text and INJECTION not in doc.text
    for gone in ("script text", "style text", "document.write", "color: red", "leaked"):
        assert gone not in doc.text


def test_page_chrome_is_dropped(article):
    doc = html.extract(article.read_bytes(), "a.html")
    assert "chrome" not in doc.text  # banner, navigation, aside and footer all say "chrome"


def test_structure_headings_lists_code_table(article):
    doc = html.extract(article.read_bytes(), "a.html")
    heads = [(b.text, b.level) for b in doc.blocks if b.kind == "heading"]
    assert heads == [("Coastal Notes", 1), ("Keepers", 2), ("Equipment", 3)]
    items = [(doc.text[b.start : b.end], b.level) for b in doc.blocks if b.kind == "list_item"]
    assert items == [("Lamp oil", 1), ("Logbooks", 1), ("Leather ledger", 2)]
    (code,) = [b for b in doc.blocks if b.kind == "code"]
    assert code.meta == {"lang": "python"}
    assert doc.text[code.start : code.end] == "```python\ndef beam(angle):\n    return angle % 360\n```"
    (table,) = [b for b in doc.blocks if b.kind == "table"]
    assert table.meta["header"] == ["Station", "Ships | day"]
    assert doc.text[table.start : table.end].split("\n")[:2] == ["| Station | Ships \\| day |", "| --- | --- |"]
    assert [doc.text[s:e] for s, e in table.meta["rows"]] == ["| North Point | 12 |", "| South Reef | 7 |"]


def test_inline_elements_flow_with_whitespace_collapsed(article):
    doc = html.extract(article.read_bytes(), "a.html")
    block, _ = block_with(doc, "Intro paragraph")
    assert doc.text[block.start : block.end] == "Intro paragraph with a link and bold text."


def test_without_main_the_body_is_used_minus_chrome(tmp_path):
    doc = _extract(tmp_path, "<nav>Menu</nav><h1>Title</h1><div>Loose <b>body</b> text<p>Para</p>tail</div>"
                             "<footer>Legal</footer><div role='navigation'>Crumbs</div>")
    assert [doc.text[b.start : b.end] for b in doc.blocks] == ["Title", "Loose body text", "Para", "tail"]
    assert_spans(doc)


def test_lone_article_is_preferred(tmp_path):
    doc = _extract(tmp_path, "<div>Sidebar promo</div><article><header><h1>Story</h1></header>"
                             "<p>Body</p><footer>Share this</footer></article>")
    assert doc.text == "Story\n\nBody"


def test_hidden_main_falls_back_and_stays_hidden(tmp_path):
    doc = _extract(tmp_path, f"<main hidden><p>{INJECTION}</p></main><p>Visible</p>"
                             f"<p style='opacity:0'>{INJECTION}</p><p style='font-size: 0px'>{INJECTION}</p>")
    assert doc.text == "Visible"


def test_forms_dropped_but_a_page_wide_form_wrapper_kept(tmp_path):
    doc = _extract(tmp_path, "<body><form id='aspnet'><h1>Page</h1><p>Content</p></form>"
                             "<form><label>Search the site</label><input name='q'></form></body>")
    assert doc.text == "Page\n\nContent"


def test_th_row_header_and_first_row_header(tmp_path):
    doc = _extract(tmp_path, "<table><tr><td>a</td><td>b</td></tr><tr><td>1</td><td>2</td></tr></table>")
    (table,) = doc.blocks
    assert table.meta["header"] == ["a", "b"] and doc.text == "| a | b |\n| --- | --- |\n| 1 | 2 |"


def test_charset_and_invalid_bytes(tmp_path):
    latin = '<meta charset="windows-1252"><p>caf\xe9</p>'.encode("cp1252")
    assert html.extract(latin, "l.html").text == "café"
    broken = html.extract(b"<p>ok \xff\xfe bytes</p>", "b.html")
    assert "\ufffd" in broken.text and any("U+FFFD" in w for w in broken.warnings)


def test_deep_nesting_and_empty_page(tmp_path):
    deep = "<div>" * 3000 + "<p>deep text</p>" + "</div>" * 3000
    assert _extract(tmp_path, deep).text == "deep text"
    empty = _extract(tmp_path, "<html><body><script>x()</script></body></html>")
    assert empty.text == "" and empty.warnings == ("no visible main content",)


def test_never_touches_the_network(article, monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("extraction tried to open a network connection")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    assert KNOWN_HTML in html.extract(article.read_bytes(), "a.html").text


def test_missing_selectolax_says_how_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "selectolax.lexbor", None)
    with pytest.raises(DependencyError, match=r"chunkwise\[html\]"):
        html.extract(b"<p>x</p>", "x.html")
