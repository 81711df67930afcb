"""benchmarks/html_main_content.py's scorer (issue 27 item 7): differences that are not lost content
(NFD, soft hyphens, zero-width characters, ligatures) are forgiven alike on both sides under "as
chunked" and only there; a missed string in no block read from the page is counted apart."""
import sys
from pathlib import Path
from types import SimpleNamespace

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import html_main_content as bench  # noqa: E402


def _page(name: str, with_: list[str], without: list[str] = ()) -> tuple[dict, bytes]:
    return {"file": name, "with": list(with_), "without": list(without)}, b""


def test_as_chunked_forgives_what_chunk_text_repairs_on_both_sides():
    out = "Caf\u00e9 au lait \u2014 the o\ufb03ce is open.\u200b Immi\u00adgration"
    gold = ["Cafe\u0301 au lait", "the office is open.", "Immigration", "Immi\u00adgration"]
    found = {sc: [fn(g) in fn(out) for g in gold] for sc, fn in bench.SCORINGS.items()}
    assert found["whitespace"] == [False, False, False, True]
    assert found["NFC + soft hyphens"] == [True, False, True, True]  # no ligatures, no zero-width
    assert found["as chunked"] == [True, True, True, True]
    # lost words stay lost under every scoring
    assert not any(fn("the office is closed") in fn(out) for fn in bench.SCORINGS.values())


def test_missed_strings_in_no_block_read_are_counted_apart():
    name = next(n for n in (f"p{i}.html" for i in range(50)) if bench.half(n) == "A")
    doc = SimpleNamespace(text="Title\n\nMenu item\n\nFirst paragraph of the article.")
    read = bench._Read(doc, lambda d: "Title\n\nFirst paragraph of the article.")
    pages = [_page(name, ["First paragraph", "Menu item", "hidden slideshow text"], ["Menu item"])]
    s = bench.score("x", lambda _b: read, pages)["A/as chunked"]
    assert (s.with_found, s.with_total, s.without_found, s.unread) == (1, 3, 0, 1)
    plain = bench.score("y", lambda _b: "First paragraph", pages)["A/as chunked"]
    assert (plain.with_found, plain.unread) == (1, -1)  # not counted for a contender that reports no blocks
