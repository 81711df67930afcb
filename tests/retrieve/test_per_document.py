"""k distinct documents (``per="document"``): results grouped by document, each document's best
passage first, every passage sent ranking above any document left out."""
import json

from hypothesis import given, settings, strategies as st

from chunkwise.cli.main import main
from chunkwise.errors import ConfigError
from chunkwise.retrieve.index import Item
from chunkwise.retrieve.per_document import first_documents


def hit(doc, i, rank):
    return Item(f"{doc}-{i}", doc, i, i * 10, i * 10 + 5, f"text {doc} {i}").hit(1.0 / rank, rank)


RANKED = st.lists(st.sampled_from("abcdef"), min_size=1, max_size=30)


@settings(max_examples=200, deadline=None)
@given(RANKED, st.integers(1, 7))
def test_first_documents_keeps_k_documents_grouped_best_first(docs, k):
    hits = [hit(d, i, r) for r, (i, d) in enumerate(enumerate(docs), start=1)]
    kept, found = first_documents(hits, k)
    order = list(dict.fromkeys(docs))  # documents by their best hit
    assert found == min(k, len(order)) and [h.doc_id for h in kept] == sorted(
        (h.doc_id for h in kept), key=order.index)  # grouped, documents in the order of their best hit
    assert {h.doc_id for h in kept} == set(order[:k])
    old = {h.chunk_id: h.rank for h in hits}
    for doc in set(order[:k]):  # each document's hits best first
        ranks = [old[h.chunk_id] for h in kept if h.doc_id == doc]
        assert ranks == sorted(ranks)
    dropped = [h for h in hits if h.chunk_id not in {x.chunk_id for x in kept}]
    if dropped:  # nothing kept ranks below a hit that was left out
        assert max(old[h.chunk_id] for h in kept) < min(h.rank for h in dropped)
    assert [h.rank for h in kept] == list(range(1, len(kept) + 1))


def test_one_long_document_does_not_take_every_result(tmp_path, capsys):
    docs = tmp_path / "docs"
    docs.mkdir()
    long = "\n\n".join(f"## Rollback step {i}\n\nRoll back the deploy, step {i}: rollback and watch." for i in range(12))
    (docs / "runbook.md").write_text("# Runbook\n\n" + long + "\n", encoding="utf-8")
    (docs / "notes.md").write_text("# Notes\n\nA rollback of a deploy is rare.\n", encoding="utf-8")
    (docs / "faq.md").write_text("# FAQ\n\nWho decides a rollback? The on-call lead.\n", encoding="utf-8")
    db = tmp_path / "s.db"
    assert main(["ingest", str(docs), "--db", str(db), "--embedder", "none", "--size", "30", "--acl", "a"]) == 0

    def search(*flags):
        capsys.readouterr()
        assert main(["search", "rollback deploy", "--db", str(db), "--groups", "a", "--mode", "bm25", "--k", "3",
                     "--passage-budget", "none", "--json", *flags]) == 0
        return json.loads(capsys.readouterr().out)

    passages = search()
    assert passages["per"] == "passage" and len({r["doc_id"] for r in passages["results"]}) < 3
    grouped = search("--per", "document")
    assert grouped["per"] == "document"
    ranks = [r["document_rank"] for r in grouped["results"]]
    assert ranks == sorted(ranks) and set(ranks) == {1, 2, 3}
    assert len({r["doc_id"] for r in grouped["results"]}) == 3
    assert grouped["results"][0]["doc_id"] == "runbook.md"
    # text output: one header per document
    capsys.readouterr()
    assert main(["search", "rollback deploy", "--db", str(db), "--groups", "a", "--mode", "bm25", "--k", "3",
                 "--per", "document", "--color", "never"]) == 0
    out = capsys.readouterr().out
    assert "3 documents" in out and [line.split(": ", 1)[1] for line in out.splitlines()
                                     if line.startswith("== document ")] == [
        r["source_uri"] for r in grouped["results"] if r["rank"] == min(
            x["rank"] for x in grouped["results"] if x["doc_id"] == r["doc_id"])]


def test_an_unknown_per_is_refused(tmp_path):
    import pytest

    from chunkwise.retrieve import Retriever
    from chunkwise.config import ChunkConfig
    from chunkwise.pipeline import ingest

    (tmp_path / "a.md").write_text("# A\n\nalpha\n", encoding="utf-8")
    ingest([tmp_path / "a.md"], tmp_path / "s.db", ChunkConfig(), embedder=None)
    with Retriever(tmp_path / "s.db") as r, pytest.raises(ConfigError, match="per"):
        r.search("alpha", ["public"], per="chunk")
