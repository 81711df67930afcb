"""The evaluation runner: grids, Pareto front, and an end-to-end run on a generated corpus."""
import json

import pytest

from chunkwise.cli.main import main
from chunkwise.config import ChunkConfig
from chunkwise.errors import ConfigError
from chunkwise.evaluate.runner import Settings, best_per_metric, expand_grid, load_grid, pareto_front, run_eval

FACTS = [
    ("refund window", "Refunds are accepted within 30 days of purchase when the receipt is shown."),
    ("backup schedule", "Backups run every night at 02:00 UTC and are kept for 35 days."),
    ("pager escalation", "If the primary does not acknowledge a page within 15 minutes it escalates to the secondary."),
    ("deploy freeze", "Deploys are frozen during the last two business days of each month."),
    ("badge renewal", "Building badges must be renewed every 12 months at the front desk."),
    ("laptop return", "Laptops are returned to IT within five working days after the last day of employment."),
]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    root = tmp_path_factory.mktemp("docs")
    golden = []
    for i, (topic, fact) in enumerate(FACTS):
        filler = " ".join(f"Paragraph {j} of the {topic} policy explains background detail number {j}." for j in range(12))
        text = f"# {topic.title()} policy\n\n{filler}\n\n{fact}\n\n{filler}\n"
        (root / f"p{i}.md").write_text(text, encoding="utf-8")
        golden.append({"id": f"q{i}", "question": f"What does the {topic} policy say?", "doc": f"p{i}.md", "answer": fact})
    path = tmp_path_factory.mktemp("g") / "golden.jsonl"
    path.write_text("\n".join(json.dumps(g) for g in golden), encoding="utf-8")
    return root, path


def test_grid_expansion_skips_impossible_configs(tmp_path):
    grid = tmp_path / "g.toml"
    grid.write_text('strategy = ["fixed", "recursive"]\nsize = [16, 64]\noverlap = [0, 32]\nmode = ["bm25", "hybrid"]\n')
    configs, skipped = expand_grid(load_grid(grid), {"unit": "words"})
    assert len(configs) == 6 and len(skipped) == 2  # overlap 32 >= size 16, twice
    assert all(len(runs) == 2 for _, runs in configs)
    bad = tmp_path / "b.toml"
    bad.write_text('strategy = ["fixed"]\nchunk_size = [1]\n')
    with pytest.raises(ConfigError, match="chunk_size"):
        load_grid(bad)


def test_pareto_and_best_by_hand():
    rows = [{"name": "a", "metrics": {"recall@5": 0.9, "index_bytes": 100, "straddle_rate": 0.1}},
            {"name": "b", "metrics": {"recall@5": 0.8, "index_bytes": 50, "straddle_rate": 0.0}},
            {"name": "c", "metrics": {"recall@5": 0.7, "index_bytes": 80, "straddle_rate": 0.2}}]
    assert pareto_front(rows) == ["a", "b"]
    best = best_per_metric(rows)
    assert best["recall@5"] == "a" and best["index_bytes"] == "b" and best["straddle_rate"] == "b"


def test_end_to_end_small_chunks_straddle_and_lose_recall(corpus):
    root, golden = corpus
    configs = [(ChunkConfig(strategy="fixed", size=8, unit="words"), [("bm25", "none")]),
               (ChunkConfig(strategy="sentences", size=64, unit="words"), [("bm25", "none"), ("hybrid", "neighbours")])]
    ev = run_eval(golden, root, configs, Settings(k=10, budget=400))
    small, big, big_hybrid = (r.metrics for r in ev.results)
    assert small["straddle_rate"] > 0.5 and small["recall@5"] < big["recall@5"]
    assert big["straddle_rate"] == 0 and big["fits"] == 1.0
    for mt in (small, big, big_hybrid):
        assert mt["recall@1"] <= mt["recall@3"] <= mt["recall@5"] <= mt["recall@10"]
        assert mt["context_tokens"] <= 400
        assert 0 <= mt["token_iou"] <= mt["token_recall"] <= 1
    assert big["recall@5"] == 1.0
    view = ev.report_data("t", "cmd")["viewer"]
    assert view["config"] != ev.results[0].config.name  # the best config is shown
    assert {d["doc"] for d in view["documents"]} == {f"p{i}.md" for i in range(len(FACTS))}


def test_cli_gate_and_report(corpus, tmp_path, capsys):
    root, golden = corpus
    out = tmp_path / "r.html"
    args = ["eval", "--golden", str(golden), "--docs", str(root), "--strategy", "sentences", "--size", "64",
            "--unit", "words", "--mode", "bm25"]
    assert main(args + ["--min-recall", "0.9", "--out", str(out)]) == 0
    html = out.read_text(encoding="utf-8")
    assert all(f"q{i}" in html for i in range(len(FACTS)))
    assert main(args[:-6] + ["--strategy", "fixed", "--size", "8", "--unit", "words", "--mode", "bm25",
                             "--min-recall", "0.9", "--json"]) == 1
    data = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert data["gate"]["failing"] == [data["configs"][0]["name"]]


def test_json_has_per_question_results_that_add_up_to_the_metrics(corpus, capsys):
    root, golden = corpus
    args = ["eval", "--golden", str(golden), "--docs", str(root), "--unit", "words", "--mode", "bm25",
            "--budget", "400", "--json"]
    assert main(args + ["--strategy", "fixed", "--size", "8"]) == 0
    cut = json.loads(capsys.readouterr().out)
    assert main(args + ["--strategy", "sentences", "--size", "64"]) == 0
    whole = json.loads(capsys.readouterr().out)
    texts = {f"p{i}.md": (root / f"p{i}.md").read_text(encoding="utf-8") for i in range(len(FACTS))}
    for data in (cut, whole):
        (row,) = data["configs"]
        qs, mt = row["questions"], row["metrics"]
        assert [q["qid"] for q in qs] == [f"q{i}" for i in range(len(FACTS))]
        assert sum(q["tokens"] for q in qs) / len(qs) == pytest.approx(mt["context_tokens"])
        assert sum(q["rank"] is not None and q["rank"] <= 5 for q in qs) / len(qs) == pytest.approx(mt["recall@5"])
        assert sum(q["straddled"] for q in qs) / len(qs) == pytest.approx(1 - mt["fits"])
        assert sum(q["iou"] for q in qs) / len(qs) == pytest.approx(mt["token_iou"])
        for q, (_, fact) in zip(qs, FACTS):
            assert set(q) >= {"rank", "passages", "straddled", "tokens", "split", "answered", "iou", "half_answer"}
            assert "retrieved" not in q  # passage texts stay in the report, not in the JSON
            assert (q["rank"] is None) == (q["passages"] == [])
            for p in q["passages"]:  # every passage listed holds the whole answer
                assert fact in texts[p["doc"]][p["start"]:p["end"]] and p["chunk_ids"]
            assert q["rank"] in (None, min((p["rank"] for p in q["passages"]), default=None))
    assert all(q["straddled"] and q["rank"] is None for q in cut["configs"][0]["questions"])  # 8 words cut every fact
    assert not any(q["straddled"] for q in whole["configs"][0]["questions"])


def test_paired_comparisons_and_standard_errors_are_reproducible(corpus):
    root, golden = corpus
    configs = [(ChunkConfig(strategy="fixed", size=8, unit="words"), [("bm25", "none")]),
               (ChunkConfig(strategy="sentences", size=64, unit="words"), [("bm25", "none")])]
    first = run_eval(golden, root, configs, Settings(k=10, budget=400)).to_dict()
    again = run_eval(golden, root, configs, Settings(k=10, budget=400)).to_dict()
    assert first["comparisons"] == again["comparisons"]  # seeded: the same intervals every run
    cut, whole = first["configs"]
    assert first["chosen"] == whole["name"]
    comp = first["comparisons"]
    assert comp["reference"] == whole["name"] and comp["metrics"] == ["hit@1", "hit@5", "iou", "tokens"]
    by_metric = {r["metric"]: r for r in comp["rows"]}
    assert set(by_metric) == set(comp["metrics"]) and all(r["b"] == cut["name"] for r in comp["rows"])
    hit5 = by_metric["hit@5"]
    assert hit5["diff"] == pytest.approx(cut["metrics"]["recall@5"] - whole["metrics"]["recall@5"]) == -1.0
    assert hit5["worse"] == len(FACTS) and hit5["se"] == 0.0 and hit5["significant"]
    assert by_metric["iou"]["diff"] == pytest.approx(cut["metrics"]["token_iou"] - whole["metrics"]["token_iou"])
    assert whole["se"]["recall@5"] == 0.0 and whole["se"]["context_tokens"] >= 0
    other = run_eval(golden, root, configs, Settings(k=10, budget=400, seed=1)).to_dict()["comparisons"]
    assert other["seed"] == 1  # the seed is recorded with the intervals it made (test_stats checks it matters)


def test_split_selects_half_the_questions_by_id(corpus, tmp_path):
    from chunkwise.evaluate.golden import load_golden, select_split, split_of

    root, golden = corpus
    lines = [json.dumps({"id": f"extra-{i}", "question": f"What does the {t} policy say?", "doc": f"p{i}.md",
                         "answer": fact}) for i, (t, fact) in enumerate(FACTS)]
    big = tmp_path / "big.jsonl"
    big.write_text(golden.read_text(encoding="utf-8") + "\n" + "\n".join(lines) + "\n", encoding="utf-8")
    qs = load_golden(big, root)
    tune, test = select_split(qs, "tune"), select_split(qs, "test")
    assert sorted(q.id for q in tune + test) == sorted(q.id for q in qs) and not {q.id for q in tune} & {q.id for q in test}
    assert tune and test
    assert [split_of(q.id) for q in tune] == ["tune"] * len(tune)
    assert split_of("q0") == split_of("q0")  # no salted hash(): the same on every run
    assert select_split(list(reversed(qs)), "tune") == list(reversed(tune))  # order and neighbours do not matter
    ev = run_eval(big, root, [(ChunkConfig(strategy="sentences", size=64, unit="words"), [("bm25", "none")])],
                  Settings(k=5, budget=400, split="test"))
    assert [q.id for q in ev.questions] == [q.id for q in test]
    assert [a["split"] for a in ev.results[0].answers] == ["test"] * len(test)
    with pytest.raises(ConfigError, match="--split 'dev'"):
        select_split(qs, "dev")


def test_eval_says_which_embedder_and_refuses_vectors_it_cannot_make(corpus, capsys):
    root, golden = corpus
    args = ["eval", "--golden", str(golden), "--docs", str(root), "--strategy", "sentences", "--size", "64",
            "--unit", "words"]
    assert main(args + ["--mode", "hybrid", "--embedder", "none"]) == 2
    err = capsys.readouterr().err
    assert "--embedder none stores no vectors" in err and "Traceback" not in err
    assert main(args + ["--mode", "bm25", "--embedder", "none", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["embedder"] == "none"
    assert main(args + ["--mode", "bm25"]) == 0  # the default embedder is not loaded: BM25 embeds nothing
    out = capsys.readouterr().out
    assert "embedder: none (every run ranks by bm25: no vectors were made)" in out and "made every" not in out
    assert main(args + ["--mode", "dense"]) == 0
    out = capsys.readouterr().out
    assert "embedder: all-MiniLM-L6-v2-onnx-int8@1" in out  # the default model


def test_eval_with_the_real_minilm_embeds_stored_and_query_vectors_with_it(corpus, capsys):
    pytest.importorskip("sentence_transformers")
    root, golden = corpus
    args = ["eval", "--golden", str(golden), "--docs", str(root), "--strategy", "sentences", "--size", "64",
            "--unit", "words", "--mode", "dense", "--embedder", "minilm", "--json"]
    assert main(args) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["embedder"].startswith("all-MiniLM-L6-v2@") and data["settings"]["embedder"] == "minilm"
    assert data["configs"][0]["metrics"]["recall@5"] == 1.0  # MiniLM finds each policy fact densely


def test_a_bad_golden_set_or_embedder_is_one_line_on_stderr(corpus, tmp_path, capsys):
    """Eighth session, helper frontdoor: the "evaluating ..." banner was printed before the golden set
    was read, so bad configuration came out as two lines."""
    root, golden = corpus
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "q1", "question": "x"}\n', encoding="utf-8")
    base = ["eval", "--docs", str(root), "--strategy", "sentences", "--size", "64", "--unit", "words"]
    for args in (["--golden", str(bad), "--mode", "bm25"], ["--golden", str(tmp_path / "none.jsonl"), "--mode", "bm25"],
                 ["--golden", str(golden), "--mode", "hybrid", "--embedder", "none"]):
        capsys.readouterr()
        assert main(base + args) == 2
        err = capsys.readouterr().err
        assert len(err.splitlines()) == 1 and err.startswith("chunkwise: error: "), err
    assert main(base + ["--golden", str(golden), "--mode", "bm25"]) == 0
    assert capsys.readouterr().err.startswith("evaluating 1 chunk config(s) x 1 retrieval run(s)")
