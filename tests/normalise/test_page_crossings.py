"""A paragraph that runs on across a page break is one paragraph: joined in the normalised text,
one block, one chunk; pages that end a sentence, or go on in uppercase, stay apart."""
from __future__ import annotations

from bisect import bisect_left

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from chunkwise.config import ChunkConfig
from chunkwise.normalise import merge_blocks, normalise_document, normalise_paged, page_crossings
from chunkwise.pipeline.chunk import chunk_document, for_document, make_chunker
from chunkwise.types import Block, Document, Page

HEAD = "ACME Handbook"


def paged(bodies: list[list[str]], head: str = HEAD, foot: bool = True) -> Document:
    """What the PDF extractor builds: per page a header line, paragraphs, a footer; pages joined by a
    blank line spanned by a page_break block."""
    text, blocks, pages = "", [], []
    for n, paragraphs in enumerate(bodies, 1):
        if n > 1:
            text += "\n\n"
            blocks.append(Block("page_break", len(text) - 2, len(text), meta={"page": n}))
        start = len(text)
        parts = ([head] if head else []) + paragraphs + ([f"Page {n} of {len(bodies)}"] if foot else [])
        for i, part in enumerate(parts):
            if i:
                text += "\n\n"
            blocks.append(Block("paragraph", len(text), len(text) + len(part), meta={"page": n}))
            text += part
        pages.append(Page(n, start, len(text)))
    return Document("h.pdf", "h.pdf", "application/pdf", text, tuple(blocks), tuple(pages))


RUNS_ON = [["Ships arrive daily.", "The harbour master signs every departure"],
           ["permit before the tide turns.", "Pilots board at the outer mark."],
           ["Fees are due monthly.", "Late fees apply."],
           ["Appeals go to the board.", "The board meets weekly."]]


def test_a_sentence_across_a_page_is_joined_and_maps_back():
    doc = paged(RUNS_ON)
    norm = normalise_document(doc)
    assert "signs every departure\npermit before the tide turns." in norm.text
    assert HEAD not in norm.text and "Page 1 of 4" not in norm.text  # running lines still removed
    a = norm.text.index("The harbour master")
    b = norm.text.index("tide turns.") + len("tide turns.")
    start, end = norm.original_span(a, b)
    assert doc.text[start:end].startswith("The harbour master") and doc.text[start:end].endswith("tide turns.")
    assert "Page 1 of 4" in doc.text[start:end] and HEAD in doc.text[start:end]  # over the removed furniture


@pytest.mark.parametrize("strategy", ["auto", "recursive", "structure", "sentences"])
def test_no_chunker_cuts_the_sentence_at_the_page_end(strategy):
    doc = paged(RUNS_ON)
    chunker = for_document(make_chunker(ChunkConfig(strategy=strategy, size=24, unit="words")), doc)
    chunks = chunk_document(doc, chunker)
    holding = [c for c in chunks if "The harbour master signs every departure" in c.text]
    assert len(holding) == 1, [c.text for c in chunks]
    (c,) = holding
    assert "permit before the tide turns." in c.text and c.page == 1 and c.page_end >= 2
    assert doc.text[c.start_char:c.end_char].count("Page 1 of 4") == 1  # offsets span the removed footer


def test_a_word_hyphenated_across_the_page_is_repaired():
    doc = paged([RUNS_ON[0][:1] + ["All arrivals must declare their immi-"], ["gration status at once."] + RUNS_ON[1][1:],
                 RUNS_ON[2], RUNS_ON[3]])
    assert "declare their immigration status at once." in normalise_document(doc).text


@pytest.mark.parametrize("first,second", [
    ("The permit is signed.", "before the tide turns."),   # the page ended its sentence
    ("The permit is signed:", "before the tide turns."),   # a colon introduces, it does not run on
    ("He said \u201cstop.\u201d", "then left."),            # the end inside closing quotes
    ("The harbour master signs", "Permits are free."),      # the next page starts a sentence
])
def test_pages_that_do_not_run_on_stay_apart(first, second):
    doc = paged([RUNS_ON[0][:1] + [first], [second] + RUNS_ON[1][1:], RUNS_ON[2], RUNS_ON[3]])
    assert page_crossings(doc) == ()
    text = normalise_document(doc).text
    assert text.index(second) - text.index(first) - len(first) == 2  # still a paragraph break


def test_headings_tables_and_footnotes_are_never_joined():
    doc = paged([RUNS_ON[0][:1] + ["The harbour master signs"], ["permit details."] + RUNS_ON[1][1:],
                 RUNS_ON[2], RUNS_ON[3]])
    for kind, meta in (("heading", {}), ("table", {}), ("paragraph", {"role": "footnote"})):
        blocks = tuple(replace_kind(b, kind, meta) if doc.text[b.start:b.end] == "permit details." else b
                       for b in doc.blocks)
        assert page_crossings(Document(doc.doc_id, doc.source, doc.media_type, doc.text, blocks, doc.pages)) == ()


def replace_kind(block, kind, meta):
    from dataclasses import replace

    return replace(block, kind=kind, meta={**block.meta, **meta})


def test_merged_block_spans_both_paragraphs_and_records_the_last_page():
    doc = paged(RUNS_ON)
    _, crossings = normalise_paged(doc)
    (c,) = crossings
    merged = merge_blocks(doc.blocks, crossings)
    assert len(merged) == len(doc.blocks) - (c.second - c.first)
    (joined,) = [b for b in merged if b.meta.get("page_end") == 2]
    assert doc.text[joined.start:joined.end].startswith("The harbour master")
    assert doc.text[joined.start:joined.end].endswith("tide turns.")


WORDS = st.sampled_from(["harbour", "permit", "tide", "Pilots", "fees", "Board", "immi-", "gration"])
PARA = st.tuples(st.lists(WORDS, min_size=1, max_size=6), st.sampled_from(["", ".", ":", "!", ",", "\u201d"]))


def squeezed(text: str) -> str:
    """Text without whitespace and hyphens: what joining and hyphen repair may not change."""
    return "".join(text.split()).replace("-", "")


@settings(max_examples=200, deadline=None)
@given(st.lists(st.lists(PARA, min_size=1, max_size=3), min_size=2, max_size=6))
@example([[(["permit", "immi-"], "")], [(["gration"], ".")]])
@example([[(["harbour"], "")], [(["immi-"], "")], [(["gration"], "")]])  # found by it: a paragraph over three pages
def test_joining_loses_nothing_and_joins_exactly_the_paragraphs_that_run_on(pages):
    bodies = [[" ".join(ws) + end for ws, end in page] for page in pages]
    doc = paged(bodies, head="", foot=False)
    norm, crossings = normalise_paged(doc, strip_headers=False)
    assert squeezed(norm.text) == squeezed(doc.text)  # nothing lost, nothing added, in order
    joined = {(c.first, c.second) for c in crossings}
    firsts = [i for i, b in enumerate(doc.blocks) if b.kind == "page_break"]
    for k, (a, b) in enumerate(zip(bodies, bodies[1:])):
        runs_on = a[-1].rstrip("\u201d")[-1:] not in (".", ":", "!", "") and b[0][0].islower()
        assert ((firsts[k] - 1, firsts[k] + 1) in joined) == runs_on, (a[-1], b[0])
    merged = merge_blocks(doc.blocks, crossings)
    assert [(b.start, b.end) for b in merged] == sorted((b.start, b.end) for b in merged)
    assert all(x.end <= y.start for x, y in zip(merged, merged[1:]))  # disjoint, in order
    assert sum(b.kind == "paragraph" for b in merged) == sum(map(len, bodies)) - len(crossings)
    for b in (b for b in merged if b.kind != "page_break"):  # a merged paragraph is one paragraph of the normalised text, mapping back onto it
        x, y = bisect_left(norm.to_original, b.start), bisect_left(norm.to_original, b.end)
        assert "\n\n" not in norm.text[x:y]
        assert norm.original_span(x, y)[0] == b.start and squeezed(norm.text[x:y]) == squeezed(doc.text[b.start:b.end])
