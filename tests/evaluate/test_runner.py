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
