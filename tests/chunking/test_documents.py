"""Chunking extracted Documents: structure from blocks, pages on every chunk, offsets into doc.text."""
from chunkwise import Document, Page
from chunkwise.api import chunk_document
from chunkwise.types import Block


def paged_document():
    parts, blocks, pages = [], [], []
    pos = 0
    for n, (heading, body) in enumerate([
        ("Rollback failure", "Page on-call within 15 minutes with the deploy ID. " * 6),
        ("Routine notes", "Archive deploy notes within 14 days of the release. " * 6),
        ("Escalation", "Escalate to the incident commander when the rollback fails twice. " * 6),
    ], start=1):
        start = pos
        for kind, text, level in (("heading", heading, 1), ("paragraph", body.strip(), 0)):
            blocks.append(Block(kind, pos, pos + len(text), level, text if kind == "heading" else ""))
            parts.append(text)
            pos += len(text) + 2
        pages.append(Page(n, start, pos - 2))
    text = "\n\n".join(parts)
    return Document("manual.pdf", "manual.pdf", "application/pdf", text, tuple(blocks), tuple(pages),
                    {"title": "Payments Manual"})


def test_pages_and_heading_paths_from_blocks():
    doc = paged_document()
    chunks = chunk_document(doc, strategy="structure", size=40)
    assert chunks
    for c in chunks:
        assert c.text == doc.text[c.start_char : c.end_char]
        assert c.page is not None
    hit = [c for c in chunks if "Archive deploy notes" in c.text]
    assert hit and all(c.page == 2 and c.heading_path == ("Routine notes",) for c in hit)


def test_chunk_crossing_a_page_records_both_pages():
    doc = paged_document()
    chunks = chunk_document(doc, strategy="fixed", size=200)
    assert any(c.page_end is not None and c.page_end > c.page for c in chunks)


def test_front_matter_is_not_chunk_text_for_any_strategy():
    text = "---\ntitle: T\n---\n# Title\n\nBody text here.\n"
    doc = Document("a.md", "a.md", "text/markdown", text, body_start=text.index("# Title"))
    for strategy in ("fixed", "recursive", "structure", "auto"):
        chunks = chunk_document(doc, strategy=strategy, size=64)
        assert chunks and all(c.start_char >= doc.body_start for c in chunks), strategy
