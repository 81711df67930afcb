"""Pages as retrieval units (issue 29 item 5): `--granularity page` gives the page a hit is on (with
`--expand neighbours`, the pages either side), within the budget; `eval` scores golden questions
labelled with `pages` by page recall."""
import json

import pytest

from chunkwise.cli.main import main
from chunkwise.config import ChunkConfig
from chunkwise.pipeline import ingest
from chunkwise.retrieve import Retriever

TOPICS = ["lighthouse lenses", "harbour cranes", "tide tables", "ship registers", "pilot boats"]


def paged_pdf(path):
    """Five pages, one topic each, three paragraphs a page (several chunks per page)."""
    from fpdf import FPDF

    pdf = FPDF()
    pdf.set_auto_page_break(False)
    for n, topic in enumerate(TOPICS, start=1):
        pdf.add_page()
        pdf.set_font("Helvetica", size=11)
        pdf.set_xy(15, 20)
        for para in range(3):
            pdf.multi_cell(180, 6, f"Paragraph {para + 1} on page {n} is about {topic}. The keepers wrote notes "
                                   f"on {topic} every morning, and the clerks filed every note on {topic} in the "
                                   f"ledger of page {n} before the noon bell rang over the quay.")
            pdf.ln(4)
    pdf.output(str(path))


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    root = tmp_path_factory.mktemp("paged")
    paged_pdf(root / "log.pdf")
    db = str(root / "kb.db")
    stats = ingest([root], db, ChunkConfig(strategy="recursive", size=48, header="none"), embedder=None, acl="staff")
    assert not stats.errors
    return root, db


def test_each_result_is_a_page(store):
    _, db = store
    with Retriever(db) as r:
        plain = r.search("harbour cranes ledger", ["staff"], k=2, mode="bm25", passage_budget=40)
        pages = r.search("harbour cranes ledger", ["staff"], k=2, mode="bm25", granularity="page", passage_budget=40)
    assert pages.passages[0].page == 2
    first = pages.passages[0]
    assert all(f"page {first.page}" in part for part in first.text.split("Paragraph")[1:])
    assert first.text.count("Paragraph") == 3  # the whole page, every chunk of it
    assert len(first.chunk_ids) > len(plain.passages[0].chunk_ids)  # more than the passage around the hit
    assert len({p.page for p in pages.passages}) == len(pages.passages)  # k distinct pages


def test_neighbouring_pages_and_the_budget(store):
    _, db = store
    with Retriever(db) as r:
        wide = r.search("tide tables ledger", ["staff"], k=1, mode="bm25", granularity="page", expand="neighbours")
        tight = r.search("tide tables ledger", ["staff"], k=1, mode="bm25", granularity="page", budget=120)
    text = wide.passages[0].text
    assert all(f"page {n}" in text for n in (2, 3, 4)) and "page 5" not in text
    assert tight.context_tokens <= 120 and "tide tables" in tight.passages[0].text  # cut around its best chunk
    assert any(o.reason in ("budget", "page_over_budget") and o.passage == 1 for o in tight.omitted)


def test_page_with_parent_is_refused(store, capsys):
    _, db = store
    code = main(["search", "tide", "--db", db, "--groups", "staff", "--granularity", "page", "--expand", "parent"])
    assert code == 2 and "granularity page" in capsys.readouterr().err


def test_eval_scores_page_questions_by_page(store, tmp_path, capsys):
    root, _ = store
    golden = tmp_path / "pages.jsonl"
    golden.write_text("\n".join(json.dumps({"id": f"p{n}", "question": f"what did the keepers note on {t}?",
                                            "doc": "log.pdf", "pages": [n]})
                                for n, t in enumerate(TOPICS, start=1)) + "\n", encoding="utf-8")
    assert main(["eval", "--golden", str(golden), "--docs", str(root), "--strategy", "recursive", "--size", "48",
                 "--mode", "bm25", "--embedder", "none", "--granularity", "page", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    row = data["configs"][0] if "configs" in data else data["rows"][0]
    recall = row["metrics"]["recall@1"] if "metrics" in row else row["recall@1"]
    assert recall == 1.0
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"id": "x", "question": "q", "doc": "log.pdf", "pages": [0]}) + "\n", encoding="utf-8")
    assert main(["eval", "--golden", str(bad), "--docs", str(root), "--mode", "bm25", "--embedder", "none"]) == 2
