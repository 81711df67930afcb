"""HTML extraction: main content only, nothing hidden, structure with offsets, no network."""
import hashlib
import socket
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("selectolax")

from fixtures import INJECTION, KNOWN_HTML, assert_spans, block_with, write_article_html  # noqa: E402

from chunkwise.errors import DependencyError  # noqa: E402
from chunkwise.extract import html  # noqa: E402
from chunkwise.normalise import is_furniture, strip_furniture  # noqa: E402


def _main(data: bytes, name: str, **options):
    """The main content as chunking reads it: the extraction without the page furniture it reports."""
    return strip_furniture(html.extract(data, name, **options))


@pytest.fixture
def article(tmp_path):
    return write_article_html(tmp_path / "coastal notes.html")


def _extract(tmp_path, markup: str, name: str = "page.html"):
    path = tmp_path / name
    path.write_text(markup, encoding="utf-8")
    return _main(path.read_bytes(), name)


def test_known_sentence_under_its_heading(article):
    data = article.read_bytes()
    doc = _main(data, "coastal notes.html")
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


def test_page_chrome_is_reported_as_furniture_and_never_chunked(article):
    """Banner, navigation, aside and footer all say "chrome": extraction reports them in place as
    furniture blocks (Docling's groundtruth keeps a page's menus), chunks never hold them."""
    from chunkwise.pipeline.chunk import chunk_document

    doc = html.extract(article.read_bytes(), "a.html")
    chrome = [b for b in doc.blocks if "chrome" in doc.text[b.start:b.end]]
    assert chrome and all(is_furniture(b) and b.kind != "heading" for b in chrome)
    assert all("chrome" not in doc.text[b.start:b.end] for b in doc.blocks if not is_furniture(b))
    assert "chrome" not in strip_furniture(doc).text and KNOWN_HTML in strip_furniture(doc).text
    chunks = chunk_document(doc)
    assert chunks and not any("chrome" in c.text for c in chunks)
    assert any(KNOWN_HTML in c.text for c in chunks)
    for c in chunks:  # offsets still point into the extracted text
        assert doc.text[c.start_char:c.end_char].split()[:3] == c.text.split()[:3]
    assert_spans(doc)


def test_structure_headings_lists_code_table(article):
    doc = _main(article.read_bytes(), "a.html")
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
    doc = _main(article.read_bytes(), "a.html")
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
    assert KNOWN_HTML in _main(article.read_bytes(), "a.html").text


def test_missing_selectolax_says_how_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "selectolax.lexbor", None)
    with pytest.raises(DependencyError, match=r"chunkwise\[html\]"):
        html.extract(b"<p>x</p>", "x.html")


# ---------------------------------------------------------------- main content judged by trafilatura

PROSE = ("The harbour committee met on the first Monday of the month to review the logbooks, the repairs "
         "to the eastern pier and the accounts of the lamp-oil fund, as it had done for forty years. ")


def _news_page(article: str, wrap: str = "main") -> str:
    """A realistic page: site chrome around one long article, furniture inside the article."""
    return f"""<!doctype html><html lang="de"><head><title>Hafen</title></head><body>
<header><a href="/">Hafenblatt</a><nav><a href="/a">Politik</a> <a href="/b">Sport</a></nav></header>
<div class="cookie"><a href="/c">Cookies</a></div>
<{wrap}>{article}</{wrap}>
<div class="sidebar"><h3>Beliebt</h3><ul><li><a href="/x">Ein anderer Artikel über etwas</a></li>
<li><a href="/y">Noch ein Artikel, den man lesen könnte</a></li></ul></div>
<footer><a href="/impressum">Impressum</a> <a href="/ds">Datenschutz</a></footer></body></html>"""


def _article(extra: str = "") -> str:
    return f"""<article><h1>Neue Mole für den Nordhafen</h1><p class="date">31. Mai 2012</p>
<div class="share"><a href="/fb">Facebook</a> <a href="/tw">Tweet</a></div>
<p>{PROSE * 3}</p>
<h2>Die Kosten <span class="mw-editsection">[<a href="/edit">edit</a>]</span></h2>
<p>{PROSE * 2}</p>
<ul><li>Granit aus Bornholm</li><li>Stahlspundwand</li></ul>
<table><tr><th>Posten</th><th>Euro</th></tr><tr><td>Mole</td><td>4,2 Mio.</td></tr></table>
<pre><code class="language-python">def tide(hour):
    return hour % 12</code></pre>
<p>{KNOWN_HTML} {PROSE * 2}</p>{extra}</article>"""


def test_article_inside_aside_is_kept_and_chrome_dropped(tmp_path):
    doc = _extract(tmp_path, _news_page(_article(), wrap="aside"))
    assert doc.text.count(KNOWN_HTML) == 1 and doc.text.startswith("Neue Mole für den Nordhafen")
    for gone in ("Hafenblatt", "Politik", "Impressum", "Datenschutz", "Cookies", "Beliebt", "anderer Artikel"):
        assert gone not in doc.text, gone
    assert_spans(doc)


@pytest.mark.parametrize("wrap", ["main", "div", "aside", "section"])
def test_furniture_inside_the_article_is_dropped_structure_kept(tmp_path, wrap):
    doc = _extract(tmp_path, _news_page(_article(), wrap=wrap))
    for gone in ("31. Mai 2012", "Facebook", "Tweet", "[edit]", "edit"):
        assert gone not in doc.text, (wrap, gone)
    heads = [(b.text, b.level) for b in doc.blocks if b.kind == "heading"]
    assert heads == [("Neue Mole für den Nordhafen", 1), ("Die Kosten", 2)]
    items = [doc.text[b.start : b.end] for b in doc.blocks if b.kind == "list_item"]
    assert items == ["Granit aus Bornholm", "Stahlspundwand"]
    (table,) = [b for b in doc.blocks if b.kind == "table"]
    assert table.meta["header"] == ["Posten", "Euro"]
    (code,) = [b for b in doc.blocks if b.kind == "code"]
    assert code.meta == {"lang": "python"} and "return hour % 12" in doc.text[code.start : code.end]
    assert doc.text.count(KNOWN_HTML) == 1
    assert_spans(doc)


HIDING = ["font-size:1px", "font-size: 0.5px", "font-size:0", "position:absolute; left:-9999px",
          "text-indent:-10000px", "position:absolute; clip: rect(0 0 0 0)", "clip-path: inset(50%)",
          "color: transparent", "color: rgba(0, 0, 0, 0)", "opacity:0.0", "max-height:0"]


@pytest.mark.parametrize("style", HIDING)
def test_invisible_text_is_never_extracted(tmp_path, style):
    carrier = f'<p style="{style}">{INJECTION}</p>'
    for page in (_news_page(_article(carrier)), f"<p>Visible</p>{carrier}"):  # judged and short pages
        doc = _extract(tmp_path, page)
        assert INJECTION not in doc.text and "Ignore previous" not in doc.text, style
        assert "Visible" in doc.text or KNOWN_HTML in doc.text


@pytest.mark.parametrize("cls", ["sr-only", "visually-hidden", "screen-reader-text", "d-none"])
def test_screen_reader_only_text_is_not_extracted(tmp_path, cls):
    doc = _extract(tmp_path, _news_page(_article(f'<span class="x {cls}">{INJECTION}</span>')))
    assert INJECTION not in doc.text and KNOWN_HTML in doc.text


def test_visible_small_print_is_kept(tmp_path):
    doc = _extract(tmp_path, '<p style="font-size:12px; color: #333; left: 10px">Readable</p>')
    assert doc.text == "Readable"


def test_without_trafilatura_tag_rules_still_drop_chrome(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "trafilatura", None)
    doc = _extract(tmp_path, _news_page(_article(), wrap="main"))
    assert KNOWN_HTML in doc.text and "Impressum" not in doc.text and "Politik" not in doc.text
    assert any("trafilatura is not installed" in w for w in doc.warnings)


def test_main_content_off_keeps_every_visible_block(tmp_path):
    path = tmp_path / "p.html"
    path.write_text(_news_page(_article()), encoding="utf-8")
    doc = html.extract(path.read_bytes(), "p.html", main_content=False)
    assert "31. Mai 2012" in doc.text and "Impressum" not in doc.text  # chrome by tag still dropped


def test_a_share_class_on_the_article_wrapper_does_not_drop_the_article(tmp_path):
    # WordPress's Hueman theme wraps the whole post in <div class="entry themeform share">
    post = (f'<div class="entry themeform share"><div class="entry-inner"><p>{PROSE * 2}</p>'
            f'<p>{KNOWN_HTML} {PROSE}</p><h2>Die Kosten</h2><p>{PROSE}</p>'
            '<div class="sharedaddy"><a href="/fb">Facebook</a> <a href="/tw">Tweet</a></div></div></div>')
    for judged in (True, False):
        doc = _main(_news_page(f"<article><h1>Neue Mole</h1>{post}</article>", wrap="div").encode(),
                           "p.html", main_content=judged)
        assert doc.text.count(KNOWN_HTML) == 1 and "Die Kosten" in doc.text, judged
        assert "Facebook" not in doc.text and "Tweet" not in doc.text
        assert_spans(doc)


def test_judge_misses_a_lead_paragraph_and_a_teaser_in_a_heading_tag():
    from chunkwise.extract.html_main import select
    from chunkwise.extract.html_walk import Candidate

    lead = "Im Nordhafen wird eine neue Idee ausprobiert, die der Hafenausschuss lange geprüft hat: " * 2
    teaser = "Kurz vor der Sitzung des Ausschusses mehren sich Stimmen, die eine zweite Mole fordern"
    cands = [Candidate("paragraph", "Politik Sport Wetter", links=1.0, chrome=True),
             Candidate("heading", "Neue Mole", 1, "Neue Mole"),
             Candidate("paragraph", lead),
             Candidate("paragraph", "31. Mai 2012"),
             Candidate("paragraph", PROSE * 2),
             Candidate("heading", teaser, 2, teaser),
             Candidate("heading", "Mehr", 2, "Mehr"),
             Candidate("paragraph", PROSE + " Ende."),
             Candidate("paragraph", "Das war der Bericht aus dem Nordhafen, einmal anders, und das ist ein Satz "
                                    "nach dem letzten Block, den der Richter behielt, ohne Wert für den Artikel.")]
    judged = PROSE * 2 + "\n" + PROSE + " Ende."  # trafilatura kept only the two middle paragraphs
    kept = [c.body for c in select(cands, judged)]
    assert kept == ["Neue Mole", lead, PROSE * 2, teaser, PROSE + " Ende."]  # the h1: the article's title


def test_judge_drops_link_lines_and_chrome_prose_it_did_not_keep():
    from chunkwise.extract.html_main import select
    from chunkwise.extract.html_walk import Candidate

    aside = "Melden Sie sich für unseren Newsletter an und erhalten Sie jede Woche die wichtigsten Nachrichten " * 2
    cands = [Candidate("paragraph", PROSE * 2),
             Candidate("paragraph", "Nächster Artikel: Die Mole", links=0.9),
             Candidate("paragraph", aside, chrome=True),
             Candidate("paragraph", PROSE + " Ende.")]
    judged = PROSE * 2 + "\nNächster Artikel: Die Mole\n" + PROSE + " Ende."
    assert [c.body for c in select(cands, judged)] == [PROSE * 2, PROSE + " Ende."]


def test_noscript_that_swallows_the_page_does_not_hide_it():
    """A ``<div>`` opened in a ``<noscript>`` puts the whole page inside it in a scripting-off parse;
    a browser running scripts shows the page and never the noscript's content."""
    page = (b"<html><body><noscript><div id='nojs'></noscript><div><h1>Bears</h1><p>" + PROSE.encode() * 3
            + b"</p></div><noscript>Enable JavaScript</div></noscript></body></html>")
    doc = html.extract(page, "n.html")
    assert "Bears" in doc.text and PROSE.strip() in doc.text and "JavaScript" not in doc.text
    unclosed = html.extract(b"<p>Kept words here.</p><noscript><p>never closed", "u.html", main_content=False)
    assert unclosed.text == "Kept words here."


def test_table_spans_fill_the_grid_and_cells_never_run_together():
    page = (b"<table><tr><th>Year</th><th colspan=2>Result</th></tr>"
            b"<tr><td rowspan=2>2025</td><td>Q1</td><td>up</td></tr><tr><td>Q2</td><td>down</td></tr>"
            b"<tr><td><ul><li>one</li><li>two</li></ul></td><td>a<br>b</td></tr></table>")
    doc = html.extract(page, "t.html", main_content=False)
    assert doc.text == ("| Year | Result | Result |\n| --- | --- | --- |\n| 2025 | Q1 | up |\n| 2025 | Q2 | down |\n"
                        "| one two | a b |  |")
    wide = html.extract(b"<table><tr><td>x</td></tr><tr><td colspan=999999 rowspan=-3>wide</td></tr></table>", "w.html",
                        main_content=False)
    assert wide.text.count("wide") == 64  # a hostile span is capped


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(st.tuples(st.integers(1, 3), st.integers(1, 3)), min_size=1, max_size=4), min_size=1,
                max_size=5))
def test_any_spans_keep_every_cell_and_every_row(grid):
    """Whatever the spans: every cell's text is in the table, and every row is one pipe row."""
    rows = "".join("<tr>" + "".join(f"<td colspan={c} rowspan={r}>c{i}x{j}</td>" for j, (c, r) in enumerate(row))
                   + "</tr>" for i, row in enumerate(grid))
    doc = html.extract(f"<table>{rows}</table>".encode(), "g.html", main_content=False)
    lines = doc.text.splitlines()
    assert len(lines) == len(grid) + 1  # the separator row
    assert all(f"c{i}x{j}" in doc.text for i, row in enumerate(grid) for j in range(len(row)))
    assert len({line.count(" | ") for line in lines}) == 1  # one width


def test_judge_scraps_after_the_article_do_not_rescue_what_lies_before_them():
    """Past the article's end the judge keeps scraps (a copyright line); prose between the article and
    such a scrap is an author box or a sign-up text, not article text: it is not rescued. The same
    prose with the article still going on after it is."""
    from chunkwise.extract.html_main import TAIL_CHARS, select
    from chunkwise.extract.html_walk import Candidate

    box = "Die Autorin schreibt seit zwanzig Jahren über Häfen, Schiffe und das Leben an der Küste " * 2
    scrap = "Alle Rechte vorbehalten"
    assert len(scrap) < TAIL_CHARS
    cands = [Candidate("paragraph", PROSE * 2), Candidate("paragraph", box), Candidate("paragraph", scrap)]
    assert [c.body for c in select(cands, PROSE * 2 + "\n" + scrap)] == [PROSE * 2, scrap]
    cands[2] = Candidate("paragraph", PROSE + " Ende.")
    assert [c.body for c in select(cands, PROSE * 2 + "\n" + PROSE + " Ende.")] == [PROSE * 2, box, PROSE + " Ende."]


def test_ordered_list_items_carry_the_numbers_a_browser_draws():
    """``start``, ``reversed`` and ``value`` as a browser numbers; a hidden item is removed and not
    counted; an item's number goes before its first text only; lists in table cells too."""
    page = (b"<html><body><main><h1>Steps</h1><ol start='3'><li>alpha beta</li><li value='9'>gamma"
            b"<ol><li>inner</li></ol>tail</li><li hidden>secret</li><li>delta</li></ol>"
            b"<ol reversed><li>a</li><li>b</li></ol><ul><li>plain</li></ul>"
            b"<ol start='99999999999999999999'><li>absurd</li></ol>"
            b"<table><tr><th>h</th></tr><tr><td><ol><li>one</li><li>two</li></ol></td></tr></table></main></body></html>")
    doc = html.extract(page, "o.html", main_content=False)
    items = [doc.text[b.start:b.end] for b in doc.blocks if b.kind == "list_item"]
    assert items == ["3. alpha beta", "9. gamma", "1. inner", "tail", "10. delta", "2. a", "1. b", "plain", "1. absurd"]
    assert "| 1. one 2. two |" in doc.text and "secret" not in doc.text
    assert_spans(doc)


def test_list_numbers_do_not_change_what_the_judge_covers():
    """The judge's text has no list numbers; a short numbered item it kept is still found kept."""
    from chunkwise.extract.html_main import select
    from chunkwise.extract.html_walk import Candidate

    cands = [Candidate("paragraph", PROSE * 2), Candidate("list_item", "Mehl sieben", 1, marker="1."),
             Candidate("paragraph", PROSE + " Ende.")]
    assert [c.body for c in select(cands, PROSE * 2 + "\nMehl sieben\n" + PROSE + " Ende.")] == [
        PROSE * 2, "Mehl sieben", PROSE + " Ende."]
