"""Main-content rules that read the page as a reader does: soft hyphens are not seen, and the page's
own summary of itself (its meta description) names the standfirst the judge left out."""
import pytest

pytest.importorskip("selectolax")
pytest.importorskip("trafilatura")

from fixtures import assert_spans  # noqa: E402

from chunkwise.extract import html  # noqa: E402
from chunkwise.normalise import without_furniture  # noqa: E402

PROSE = ("The harbour committee met on the first Monday of the month to review the logbooks, the repairs "
         "to the eastern pier and the accounts of the lamp-oil fund, as it had done for forty years. ")
DEK = "The committee voted to rebuild the eastern pier in granite before the winter storms arrive"


def _page(meta: str = "", body_extra: str = "", dek: str = DEK) -> bytes:
    """A news page whose standfirst sits in the page header, outside the article the judge keeps."""
    return f"""<!doctype html><html lang="en"><head><title>Pier</title>{meta}</head><body>
<header><nav><a href="/a">Politics</a> <a href="/b">Sport</a></nav><h1>A new pier</h1>
<p class="dek">{dek}</p></header>
<article><p>{PROSE * 3}</p><p>{PROSE * 2}</p><p>{body_extra}{PROSE * 2}</p></article>
<footer><a href="/imprint">Imprint</a></footer></body></html>""".encode()


def test_a_standfirst_the_meta_description_holds_is_main_content():
    without = html.extract(_page(), "p.html")
    assert DEK in without.text and DEK not in without_furniture(without)  # the judge left it out: furniture
    for key in ('name="description"', 'property="og:description"', 'name="twitter:description"'):
        doc = html.extract(_page(f'<meta {key} content="{DEK}. Read how the town will pay for it.">'), "p.html")
        assert DEK in without_furniture(doc), key
        assert "Read how the town" not in doc.text  # the summary is read, never written
        assert_spans(doc)


def test_a_short_site_wide_description_names_no_standfirst():
    """A tagline ("News from the harbour") is shorter than a standfirst: the header text that matches
    it stays furniture."""
    tagline = "News from the harbour town"
    doc = html.extract(_page(f'<meta name="description" content="{tagline}">', dek=tagline), "p.html")
    assert tagline in doc.text and tagline not in without_furniture(doc)


def test_soft_hyphens_are_not_seen_and_hyphenated_prose_is_still_judged_main():
    """A soft hyphen only marks where a browser may break a word. A page hyphenated throughout (a
    typography plugin) keeps its words whole, so the judge's text (which has no soft hyphens) covers
    its paragraphs: the last one, which no rule would rescue, is main content."""
    last = ("Das fa&shy;schis&shy;ti&shy;sche Re&shy;gime reih&shy;te den Wein un&shy;ter die gro&shy;ßen "
            "Wei&shy;ne Ita&shy;li&shy;ens, ne&shy;ben Ba&shy;ro&shy;lo und Bar&shy;ba&shy;res&shy;co, "
            "was aber eher zy&shy;ni&shy;schem Macht&shy;kal&shy;kül ent&shy;sprang. ") * 2
    page = _page().replace(b"</article>", f"<p>{last}</p></article>".encode())
    doc = html.extract(page, "p.html")
    assert "\xad" not in doc.text
    assert "großen Weine Italiens, neben Barolo und Barbaresco" in without_furniture(doc)
    assert_spans(doc)


def test_standfirst_kinds_and_both_directions_of_the_match():
    """A list item or heading the summary holds is kept, as is a paragraph that holds the whole
    summary; a block after the judge's last one, or a link list, is not."""
    from chunkwise.extract.html_main import select
    from chunkwise.extract.html_walk import Candidate

    item = "Die Farbe der Spawn-Ankündigungen wurde geändert auf orange"
    summary = f"Patch Notes 4.47.4 Verbesserungen und Balance {item}..."
    holder = f"Vorweg: {summary} Und noch einiges mehr, das wir hier nicht aufzählen."
    cands = [Candidate("list_item", item, 1),
             Candidate("paragraph", "Patch Notes 4.47.4 Verbesserungen und Balance", links=1.0),
             Candidate("paragraph", PROSE * 2), Candidate("paragraph", holder),
             Candidate("paragraph", PROSE + " Ende."),
             Candidate("heading", item, 2, item)]
    judged = PROSE * 2 + "\n" + PROSE + " Ende."
    assert [c.body for c in select(cands, judged)] == [PROSE * 2, holder, PROSE + " Ende."]  # holder: prose rule
    assert [c.body for c in select(cands[:3] + cands[4:], judged, (summary,))] == [item, PROSE * 2, PROSE + " Ende."]
    short = Candidate("paragraph", "Vorweg: Patch Notes 4.47.4")
    assert [c.body for c in select([short] + cands[2:3], PROSE * 2, (summary,))] == [PROSE * 2]
    assert [c.body for c in select([Candidate("paragraph", holder)] + cands[2:3], PROSE * 2, (summary,))] == [
        holder, PROSE * 2]


def _menu(n: int) -> list:
    from chunkwise.extract.html_walk import Candidate

    return [Candidate("paragraph", f"Section {i}", links=1.0) for i in range(n)]


def test_the_heading_before_the_articles_first_paragraph_is_kept_past_a_stray_menu_match():
    """A one-word menu link that also occurs in the article ("Harbour") is "kept" by the judge, so
    its first block can sit far above the article; the title and the heading right before the first
    paragraph the judge kept are the article's, the menu link and a later short heading in a container of
    its own are not."""
    from chunkwise.extract.html_main import select
    from chunkwise.extract.html_walk import Candidate

    note = "Read this article in Turkish here."
    cands = ([Candidate("paragraph", "Harbour", links=1.0)] + _menu(12)
             + [Candidate("heading", "A new pier", 1, "A new pier"), Candidate("paragraph", "By the desk"),
                Candidate("heading", note, 3, note), Candidate("paragraph", PROSE * 2),
                Candidate("heading", "Costs", 2, "Costs", box=1), Candidate("paragraph", PROSE + " Ende.")])
    judged = PROSE * 2 + "\n" + PROSE + " Ende."
    assert [c.body for c in select(cands, judged)] == ["A new pier", note, PROSE * 2, PROSE + " Ende."]
    cands[-4].chrome = True  # in page chrome (a site banner): not the article's
    assert note not in [c.body for c in select(cands, judged)]


def test_an_address_the_judge_kept_is_not_a_link_line():
    """A paragraph that is only a link is a teaser or menu item, unless the link is an address the
    article gives (an e-mail address, a URL to a document)."""
    from chunkwise.extract.html_main import select
    from chunkwise.extract.html_walk import Candidate

    lines = ["suivi.reformes@example.org", "https://example.org/report-2022.pdf", "Next article: The old pier"]
    cands = [Candidate("paragraph", PROSE * 2)] + [Candidate("paragraph", t, links=1.0) for t in lines] + [
        Candidate("paragraph", PROSE + " Ende.")]
    judged = "\n".join(c.body for c in cands)
    assert [c.body for c in select(cands, judged)] == [PROSE * 2, *lines[:2], PROSE + " Ende."]



def test_a_short_block_between_two_article_blocks_of_its_own_container_is_article():
    """"Filling:" between two ingredient tables the judge kept is the recipe's, though the judge
    drops it as too short; the same line in a container of its own (a teaser box between two parts
    of the article) is not, nor a "Share" heading or a short paragraph (a caption) there."""
    from chunkwise.extract.html_main import select
    from chunkwise.extract.html_walk import Candidate

    def table(cells, box):
        return Candidate("table", rows=[[c] for c in cells], box=box)

    dough, filling = ["250 g flour", "50 g sugar", "100 ml milk"], ["500 ml cream", "1 pack custard"]
    cands = [Candidate("paragraph", PROSE * 2, box=1), Candidate("heading", "Dough:", 3, "Dough:", box=2),
             table(dough, 2), Candidate("heading", "Filling:", 3, "Filling:", box=2), table(filling, 2),
             Candidate("paragraph", PROSE + " Ende.", box=1)]
    judged = "\n".join([PROSE * 2, *dough, *filling, PROSE + " Ende."])
    kept = [c.plain for c in select(cands, judged)]
    assert "Filling:" in kept and "Dough:" not in kept  # "Dough:" has no chosen block before it in its box
    cands[3].box = 3
    assert "Filling:" not in [c.plain for c in select(cands, judged)]
    cands[3] = Candidate("heading", "Share", 3, "Share", box=2)  # furniture stays furniture
    assert "Share" not in [c.plain for c in select(cands, judged)]
    cands[3] = Candidate("paragraph", "Photo: J. Smith", box=2)  # a caption or a credit line: not a heading
    assert "Photo: J. Smith" not in [c.plain for c in select(cands, judged)]


def test_blocks_know_their_container():
    """The walk records each block's own container: siblings share it, a nested box has its own."""
    from selectolax.lexbor import LexborHTMLParser

    from chunkwise.extract.html_walk import candidates

    tree = LexborHTMLParser("<body><div><p>one</p><h3>two</h3><table><tr><td>x</td></tr></table>"
                            "<ul><li>item</li><li>item 2</li></ul><div><p>inner</p></div>tail</div></body>")
    boxes = {c.plain: c.box for c in candidates(tree.body)}
    assert boxes["one"] == boxes["two"] == boxes["x"] != boxes["inner"]
    assert boxes["item"] == boxes["item 2"] not in (boxes["one"], boxes["inner"])
    assert boxes["tail"] not in (boxes["one"], boxes["inner"])  # the outer <div>'s own text: it sits in <body>


def test_a_page_in_decomposed_form_is_read_composed_and_judged_main():
    """A page written in NFD ("u" + U+0308 for "ü") looks the same to a reader. Its text is read
    composed (NFC), as the judge, trafilatura, writes its own: else every word with an accent would
    split at the combining mark, match none of the judge's words, and the last paragraph (which no
    rule rescues: it is after the judge's last block) would be lost."""
    import unicodedata

    last = ("Über die Brücke führt künftig ein Weg für Fußgänger, über den die Bürger lange gestritten "
            "hatten; die Gemeinderäte stimmten gestern zu. ") * 2
    nfd = unicodedata.normalize("NFD", last)
    assert nfd != last
    page = _page().replace(b"</article>", f"<p>{nfd}</p></article>".encode())
    doc = html.extract(page, "p.html")
    assert unicodedata.is_normalized("NFC", doc.text)
    assert last.strip() in without_furniture(doc)
    assert_spans(doc)


def test_zero_width_characters_inside_words_do_not_hide_a_block_from_the_judge():
    """trafilatura drops zero-width characters (U+200B, U+200C, U+200D, U+2060, U+FEFF) from its text.
    A block with them inside its words is still the judge's: the words are compared without them. The
    last block here is after the judge's other blocks, so no rescue rule could keep it."""
    from chunkwise.extract.html_main import select
    from chunkwise.extract.html_walk import Candidate

    plain = "Die Gemeinderäte stimmten gestern dem Neubau der Brücke über den Fluss endgültig zu."
    marked = ("Die Gemein\u200bde\u00adräte stimm\u2060ten gestern dem Neu\u200cbau der Brü\ufeffcke über den "
              "Fluss end\u200dgültig zu.").replace("\u00ad", "")
    cands = [Candidate("paragraph", PROSE * 2), Candidate("paragraph", marked)]
    assert [c.body for c in select(cands, PROSE * 2 + "\n" + plain)] == [PROSE * 2, marked]  # its text kept as is
    assert [c.body for c in select(cands[:1] + [Candidate("paragraph", "Ganz andere Worte stehen hier.")],
                                   PROSE * 2 + "\n" + plain)] == [PROSE * 2]  # a block the judge left out is not kept
