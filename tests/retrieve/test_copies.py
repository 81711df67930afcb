"""A collapsed hit stands for every copy (issue 24 item 4): ``also_in`` carries each identical
passage's document and offsets (same document included) in the types, the JSON, the API and the
server, and ``chunkwise eval`` scores a question answered by any copy."""
import json

import pytest

from chunkwise.cli.main import main
from chunkwise.config import ChunkConfig
from chunkwise.evaluate import metrics as m
from chunkwise.evaluate.runner import Settings, run_eval
from chunkwise.pipeline import ingest
from chunkwise.retrieve import Retriever
from chunkwise.retrieve.merge import merge_hits
from chunkwise.retrieve.types import Hit, VersionRef
from chunkwise.retrieve.versions import collapse

FACT = "Refunds are paid back to the original card within thirty days after the returned parcel arrives here."
FILLER = ["The warehouse team checks every parcel for damage before it is shelved again for sale.",
          "Customers may ask the help desk by phone or by mail for the status of a return.",
          "Gift cards cannot be exchanged for cash and never expire under the current terms."]
CONFIG = ChunkConfig(strategy="recursive", size=20, unit="words", header="none")


def _hit(doc, rank, text, start, chunk):
    return Hit(chunk, doc, 0, start, start + len(text), 1.0 / rank, rank, text, doc)


def test_collapse_lists_every_copy_with_its_offsets_same_document_included():
    hits = [_hit("a", 1, FACT, 100, "a1"), _hit("a", 2, FACT.upper(), 900, "a2"), _hit("b", 3, FACT, 40, "b1"),
            _hit("b", 4, "Something else entirely.", 0, "b0")]
    out = collapse(hits, {})
    assert [(h.doc_id, h.chunk_id, h.rank) for h in out] == [("a", "a1", 1), ("b", "b0", 2)]
    assert [(v.doc_id, v.chunk_id, v.start_char, v.end_char) for v in out[0].also_in] == [
        ("a", "a2", 900, 900 + len(FACT)), ("b", "b1", 40, 40 + len(FACT))]
    [p] = merge_hits(out[:1])
    assert [v.doc_id for v in p.versions] == ["a", "b"]  # one per document
    assert [v.chunk_id for v in p.also_in] == ["a2", "b1"]  # every copy
    d = json.loads(json.dumps(VersionRef("b", chunk_id="b1", start_char=40, end_char=50).to_dict()))
    assert d["start_char"] == 40 and d["end_char"] == 50


def test_a_copy_inside_the_passage_is_not_listed_twice():
    hits = [_hit("a", 1, FACT, 0, "a1"), _hit("a", 2, "Other words here.", len(FACT), "a2")]
    out = collapse(hits, {})
    inside = VersionRef("a", chunk_id="zz", start_char=0, end_char=len(FACT))
    [p] = merge_hits([out[0].__class__(**{**out[0].__dict__, "also_in": (inside,)}), out[1]])
    assert p.also_in == ()


def test_score_question_counts_each_copy_at_its_passage_rank():
    spans = [("b", 40, 60)]
    passages = [("x", 0, 10), ("a", 100, 140)]
    assert m.score_question(spans, passages).rank is None
    scored = m.score_question(spans, passages, copies=[[], [("b", 30, 70)]])
    assert scored.rank == 2 and scored.overlap.recall == 1.0
    assert scored.overlap.retrieved == 10 + 40 + 40  # a copy counts as returned text, as its own hit would
    assert m.score_question(spans, passages, copies=[[("b", 40, 60)], []]).rank == 1
    assert m.score_question(spans, passages, copies=[[("b", 45, 60)], []]).half_answer


@pytest.fixture(scope="module")
def twins(tmp_path_factory):
    """Two documents and a third holding the same paragraph twice; questions point at each copy."""
    root = tmp_path_factory.mktemp("twins")
    texts = {"a.md": f"# Returns A\n\n{FILLER[0]}\n\n{FACT}\n\n{FILLER[1]}\n",
             "b.md": f"# Returns B\n\n{FILLER[2]}\n\n{FACT}\n\n{FILLER[0]}\n",
             "c.md": f"# Returns C\n\n{FILLER[1]}\n\n{FACT}\n\n{FILLER[2]}\n\n{FACT}\n"}
    golden = []
    for name, text in texts.items():
        (root / name).write_text(text, encoding="utf-8")
        at = -1
        while (at := text.find(FACT, at + 1)) >= 0:
            golden.append({"id": f"{name}-{at}", "question": "when are refunds paid back to the card",
                           "doc": name, "start_char": at, "end_char": at + len(FACT)})
    path = tmp_path_factory.mktemp("g") / "golden.jsonl"
    path.write_text("\n".join(json.dumps(g) for g in golden), encoding="utf-8")
    return root, path, len(golden)


def test_search_json_carries_every_copy_with_offsets(twins, tmp_path, capsys):
    root, _, n = twins
    db = tmp_path / "s.db"
    ingest([root], db, CONFIG, embedder=None, acl="staff")
    with Retriever(db, embedder=None) as r:
        res = r.search("when are refunds paid back to the card", "staff", k=3, mode="bm25")
    top = res.passages[0]
    assert top.best.text.strip() == FACT and len(top.also_in) == n - 1
    texts = {p.name: p.read_text(encoding="utf-8") for p in root.iterdir()}
    for v in top.also_in:  # every copy's offsets slice the fact out of its own document
        assert texts[v.source_uri.rsplit("/", 1)[-1]][v.start_char:v.end_char] == FACT
    assert main(["search", "when are refunds paid back to the card", "--db", str(db), "--groups", "staff",
                 "--mode", "bm25", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)["results"][0]
    assert len(result["also_in"]) == n - 1 and all(v["start_char"] is not None for v in result["also_in"])
    assert len(result["versions"]) == 3  # one per document


def test_eval_answers_a_question_whose_span_points_at_a_collapsed_copy(twins):
    root, golden, n = twins
    ev = run_eval(golden, root, [(CONFIG, [("bm25", "none")])], Settings(k=3, budget=None, embedder="none"))
    [result] = ev.results
    assert result.metrics["recall@1"] == 1.0 and result.metrics["token_recall"] == 1.0
    assert all(a["rank"] == 1 for a in result.answers) and len(result.answers) == n
