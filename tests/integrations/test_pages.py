"""A splitter given the page documents of one source (LangChain ``PyPDFLoader``'s output, Haystack
Documents with a ``page_number`` each or ``PyPDFToDocument``'s form feeds) treats them as one
document with pages: page numbers kept, chunk ids unique across pages and stable across runs, the
same records ``chunk_text`` makes of the joined pages."""
import pytest

from chunkwise import api

PAGES = ["Torque the bolts to 40 Nm.\n\nCheck them again after 100 hours.",
         "Check them again after 100 hours.\n\nReplace the seal every year.",  # a paragraph seen on page 0 too
         "Replace the seal every year.\n\nLog every check in the book."]


def test_langchain_pages_of_one_source_are_one_document():
    pytest.importorskip("langchain_core")
    from langchain_core.documents import Document

    from chunkwise.integrations.langchain import ChunkwiseSplitter

    splitter = ChunkwiseSplitter(strategy="recursive", size=7, unit="words", acl="staff")
    pages = [Document(page_content=p, metadata={"source": "manual.pdf", "page": i, "page_label": str(i + 1)})
             for i, p in enumerate(PAGES)]
    docs = splitter.split_documents(pages)
    ids = [d.id for d in docs]
    assert len(ids) == len(set(ids)) > len(PAGES)  # the repeated paragraph gets its own id on each page
    assert ids == [d.id for d in splitter.split_documents(pages)]  # stable across runs
    assert {d.metadata["doc_id"] for d in docs} == {"manual.pdf"}
    joined = "\n\n".join(PAGES)
    starts = [joined.index(p) for p in PAGES]
    for d in docs:
        m = d.metadata
        assert joined[m["start_index"]:m["end_index"]] == d.page_content
        assert m["page"] == max(i for i, at in enumerate(starts) if at <= m["start_index"])
        assert m["page_label"] == str(m["page"] + 1)  # the other metadata is the page's it begins on
        assert m["acl"] == ["staff"] and not m["needs_review"]
    assert [d.metadata["page"] for d in docs] == sorted(d.metadata["page"] for d in docs)
    assert {d.metadata["page"] for d in docs} == {0, 1, 2}  # the loader's numbers, kept
    same = api.page_records(api.door_preparer(splitter.config, acl="staff"), list(enumerate(PAGES)), "manual.pdf")
    assert ids == [r.chunk_id for r in same]


def test_haystack_pages_by_page_number_and_by_form_feed():
    pytest.importorskip("haystack")
    from haystack import Document

    from chunkwise.integrations.haystack import ChunkwiseSplitter

    splitter = ChunkwiseSplitter(strategy="recursive", split_length=7, split_by="word", acl="staff")
    per_page = [Document(content=p, meta={"file_path": "manual.pdf", "page_number": i + 1}) for i, p in enumerate(PAGES)]
    docs = splitter.run(per_page)["documents"]
    ids = [d.id for d in docs]
    assert len(ids) == len(set(ids)) > len(PAGES) and ids == [d.id for d in splitter.run(per_page)["documents"]]
    assert {d.meta["page_number"] for d in docs} == {1, 2, 3}
    assert all(d.meta["source_id"] == per_page[d.meta["page_number"] - 1].id for d in docs)
    fed = Document(content="\f".join(PAGES), meta={"file_path": "manual.pdf"})
    from_feeds = splitter.run([fed])["documents"]
    assert len({d.id for d in from_feeds}) == len(from_feeds)
    for d in from_feeds:  # offsets into the converter's own content; the page a chunk begins on
        assert fed.content[d.meta["start_index"]:d.meta["end_index"]] == d.content
        assert d.meta["page_number"] == fed.content.count("\f", 0, d.meta["start_index"]) + 1
    assert [d.content for d in from_feeds] == [d.content for d in docs]


def test_llamaindex_pages_of_one_file_are_one_document():
    pytest.importorskip("llama_index.core")
    from llama_index.core import Document

    from chunkwise.integrations.llamaindex import ChunkwiseNodeParser

    parser = ChunkwiseNodeParser(strategy="recursive", chunk_size=7, unit="words", acl="staff")
    pages = [Document(text=p, metadata={"file_name": "manual.pdf", "page_label": str(i + 1)})
             for i, p in enumerate(PAGES)]  # PDFReader's shape: random ids, one Document per page
    nodes = parser(pages)
    ids = [n.node_id for n in nodes]
    assert len(ids) == len(set(ids)) > len(PAGES) and ids == [n.node_id for n in parser(pages)]
    assert {n.metadata["doc_id"] for n in nodes} == {"manual.pdf"}
    assert {n.metadata["page"] for n in nodes} == {1, 2, 3}
    for n in nodes:  # the node's source is the page it begins on, whose metadata it carries
        assert n.metadata["page_label"] == str(n.metadata["page"])
        assert n.ref_doc_id == pages[n.metadata["page"] - 1].doc_id
    same = api.page_records(api.door_preparer(parser.config, acl="staff"),
                            [(i + 1, p) for i, p in enumerate(PAGES)], "manual.pdf")
    assert ids == [r.chunk_id for r in same]
