"""Running headers, footers and page numbers on a generated 3-page document."""
from __future__ import annotations

import pytest

from chunkwise.errors import ConfigError
from chunkwise.normalise import find_repeated_lines, line_key, normalise_document, strip_repeated_lines
from chunkwise.types import Document, Page

BODIES = [
    "Annual migration report.\nThe immi-\ngration office handled the\n",
    "cases promptly. Summary:\nNet arrivals rose by 4%.\nSummary:\n",
    "Appendix A lists the ii\ndata sources used in this report.\n",
]


def _pdf_like(bodies=BODIES) -> Document:
    """What a PDF extractor produces: page texts with a running header and a 'Page N of M' footer."""
    text, pages = "", []
    for n, body in enumerate(bodies, 1):
        page = f"ACME Corp \u2014 Confidential\n{body}Page {n} of {len(bodies)}\n"
        pages.append(Page(n, len(text), len(text) + len(page)))
        text += page
    return Document(doc_id="r.pdf", source="r.pdf", media_type="application/pdf", text=text, pages=tuple(pages))


def test_line_key_ignores_digits_and_spacing():
    assert line_key("Page 3 of 9") == line_key("Page  10 of 9 ") == "Page # of #"
    assert line_key("  12 ") == line_key("xiv") == "#"


def test_find_repeated_lines():
    doc = _pdf_like()
    pages = [doc.text[p.start : p.end] for p in doc.pages]
    assert find_repeated_lines(pages) == {"ACME Corp \u2014 Confidential", "Page # of #"}
    assert find_repeated_lines(pages[:1]) == set()  # one page: nothing can repeat
    assert find_repeated_lines(pages + ["", "   "]) == {"ACME Corp \u2014 Confidential", "Page # of #"}
    with pytest.raises(ConfigError):
        find_repeated_lines(pages, min_share=0)


def test_repeated_body_line_is_not_a_header():
    words = ["alpha", "beta", "gamma", "delta"]
    pages = []
    for n, w in enumerate(["one", "two", "three", "four"]):
        top = "".join(f"{w} {x}\n" for x in words)
        bottom = "".join(f"{x} {w}\n" for x in words)
        pages.append(f"Header\n{top}Summary:\n{bottom}Footer {n}\n")
    assert find_repeated_lines(pages) == {"Header", "Footer #"}


def test_min_share():
    bodies = ["alpha", "beta", "gamma", "delta", "epsilon"]
    pages = [f"{h}\na body line about {w}, longer than its header\n"
             for h, w in zip(["Draft", "Draft", "Final", "Final", "Final"], bodies)]
    assert "Draft" not in find_repeated_lines(pages, min_share=0.6)
    assert "Final" in find_repeated_lines(pages, min_share=0.6)
    assert "Draft" in find_repeated_lines(pages, min_share=0.4)


def test_strip_and_normalise_three_pages():
    doc = _pdf_like()
    stripped = strip_repeated_lines(doc)
    assert "ACME" not in stripped.text and "Page 2 of 3" not in stripped.text
    assert stripped.text.count("Summary:") == 2  # body lines stay

    out = normalise_document(doc)
    assert out.text == (
        "Annual migration report.\nThe immigration office handled the\ncases promptly. Summary:\n"
        "Net arrivals rose by 4%.\nSummary:\nAppendix A lists the ii\ndata sources used in this report.\n"
    )
    # a sentence that crossed the page break reads on, and maps back across the removed lines
    a = out.text.index("handled the\ncases")
    s, e = out.original_span(a, a + len("handled the\ncases"))
    assert doc.text[s:e] == "handled the\nPage 1 of 3\nACME Corp \u2014 Confidential\ncases"
    a = out.text.index("immigration")
    s, e = out.original_span(a, a + len("immigration"))
    assert doc.text[s:e] == "immi-\ngration"
    assert out.to_original[len(out.text)] == len(doc.text)


def test_document_without_pages_or_repeats_is_unchanged():
    plain = Document(doc_id="a", source="a", media_type="text/plain", text="Page 1\nbody\n")
    assert strip_repeated_lines(plain).text is plain.text
    doc = _pdf_like()
    assert strip_repeated_lines(doc, lines=set()).text is doc.text
    assert normalise_document(doc, strip_headers=False).text.startswith("ACME")
