"""Running-header removal keeps real data (issue 10 item 6): only page furniture goes, never a
document's content, and the audit says what went. Ligatures fold so FTS5 finds the word."""
from __future__ import annotations

from chunkwise import api
from chunkwise.config import ChunkConfig
from chunkwise.extract.audit import audit_document
from chunkwise.normalise import fold_ligatures, normalise, normalise_document, running_lines
from chunkwise.types import Document, Page


def _paged(pages: list[str], name: str = "r.pdf") -> Document:
    text, out = "", []
    for n, body in enumerate(pages, 1):
        if n > 1:
            text += "\n\n"
        out.append(Page(n, len(text), len(text) + len(body)))
        text += body
    return Document(doc_id=name, source=name, media_type="application/pdf", text=text, pages=tuple(out))


def _receipts(n: int = 6) -> Document:
    """Receipts whose pages differ only in numbers: every line is data."""
    return _paged([f"Receipt no. {4410 + 7 * k}\nStore {12 + k}\nDate 07/{k + 3:02d}/2015\n"
                   f"Coffee beans 1 x {3 + k}.50\nTotal {12 + 2 * k}.40\n" for k in range(n)])


def test_receipts_that_differ_only_in_numbers_lose_nothing():
    doc = _receipts()
    assert running_lines(doc).spans == ()
    assert normalise_document(doc).text.count("Receipt no.") == 6
    chunks = api.chunk_document(doc, api.make_chunker(ChunkConfig(strategy="auto", size=64, unit="words",
                                                                   format="text")))
    covered = "".join(doc.text[c.start_char : c.end_char] for c in chunks)
    for k in range(6):
        assert f"Total {12 + 2 * k}.40" in covered


def test_a_repeated_date_in_a_table_is_data_not_a_footer():
    pages = [f"Notice {k}\nCompany {'ABCDEFG'[k]} Ltd\nCity of Ames\nEmployees {30 + k}\n07/17/2015\n"
             for k in range(7)]
    doc = _paged(pages)
    assert normalise_document(doc).text.count("07/17/2015") == 7
    assert running_lines(doc).lines == frozenset()


def test_real_furniture_is_removed_with_its_page_numbers():
    pages = [f"ACME Corp \u2014 Confidential\nSection {k} body about topic {'abcdef'[k]}.\n"
             f"More words, {7 * k + 3} of them, are content.\nPage {k + 1} of 6\n" for k in range(6)]
    doc = _paged(pages)
    found = running_lines(doc)
    assert found.lines == {"ACME Corp \u2014 Confidential", "Page # of #"}
    out = normalise_document(doc).text
    assert "ACME" not in out and "Page 3 of 6" not in out
    assert "More words, 17 of them, are content." in out  # a body line with a number stays


def test_page_number_must_count_pages():
    # The same key "Batch #" at the bottom of every page, but the number is a batch id, not the page.
    pages = [f"Body text of page {'abcde'[k]} with words.\nBatch {[17, 3, 99, 41, 8][k]}\n" for k in range(5)]
    assert running_lines(_paged(pages)).lines == frozenset()
    pages = [f"Body text of page {'abcde'[k]} with words.\nBatch {k + 10}\n" for k in range(5)]
    assert running_lines(_paged(pages)).lines == {"Batch #"}


def test_never_the_whole_document_and_the_audit_says_why():
    form = "Application form\nName\nSignature\n"
    doc = _paged([form] * 5)
    found = running_lines(doc)
    assert found.spans == () and "kept" in found.refused
    assert normalise_document(doc).text.count("Signature") == 5
    row = audit_document(doc)
    assert row.repeated_lines == () and any("not removed" in w for w in row.warnings)


def test_audit_lists_what_was_removed():
    pages = [f"ACME Corp \u2014 Confidential\nParagraph {'abcdef'[k]} says something real, at some length, as pages do.\n- {k + 1} -\n"
             for k in range(6)]
    row = audit_document(_paged(pages))
    assert row.repeated_lines == ("- # - (6 pages)", "ACME Corp \u2014 Confidential (6 pages)")


def test_ligatures_fold_with_offsets_kept():
    text = "The De\ufb01nition of a \ufb02ow and an o\ufb03ce."
    out = fold_ligatures(text)
    assert out.text == "The Definition of a flow and an office."
    a = out.text.index("office")
    s, e = out.original_span(a, a + len("office"))
    assert text[s:e] == "o\ufb03ce"
    assert normalise(text).text == out.text
    assert normalise(out.text).text == out.text  # idempotent


def test_fts5_finds_a_word_written_with_a_ligature(tmp_path):
    from chunkwise.embed import make_embedder
    from chunkwise.pipeline import ingest
    from chunkwise.retrieve import Retriever

    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "glossary.txt").write_text("De\ufb01nition of done: every test passes.\n\nOther text here.\n",
                                       encoding="utf-8")
    (docs / "other.txt").write_text("Unrelated notes about deployment.\n", encoding="utf-8")
    db = tmp_path / "s.db"
    ingest([docs], db, ChunkConfig(strategy="auto", size=64), embedder=make_embedder("hashing"), acl=("staff",))
    for engine in ("fts5", "sparse"):
        with Retriever(db, bm25=engine) as r:
            hits = r.search("Definition", ["staff"], k=3, mode="bm25").passages
        assert hits and "Definition of done" in hits[0].text, engine
