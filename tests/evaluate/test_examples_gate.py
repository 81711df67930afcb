"""The regression gate CI runs: the shipped golden set over examples/, evaluated through the CLI.

``eval/examples.golden.jsonl`` asks questions about every sample document, split by a hash of each id
into tune and test; ``eval/chunkwise.toml`` is the config the demo's sweep (``eval/grid.toml``) chooses
on the tune questions, and the gate holds it to recall@5 >= 0.9 on the test questions. These tests run
the real pipeline (extraction, chunking, SQLite ingest, hashing embedder, BM25, neighbour expansion),
so a change anywhere on that path that loses answers on the sample corpus fails here first.
"""
import contextlib
import io
import json
import re
import tomllib
from pathlib import Path

import pytest

from chunkwise.cli.main import main
from chunkwise.evaluate.golden import SPLITS, load_golden, select_split, split_of
from chunkwise.evaluate.runner import expand_grid, load_grid

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
GOLDEN = ROOT / "eval" / "examples.golden.jsonl"
CONFIG = ROOT / "eval" / "chunkwise.toml"
GRID = ROOT / "eval" / "grid.toml"
GATE = ["eval", "--golden", str(GOLDEN), "--docs", str(EXAMPLES), "--config", str(CONFIG), "--split", "test",
        "--min-recall", "0.9"]


def run(argv: list[str]) -> tuple[int, dict, str]:
    """``chunkwise`` in-process: exit code, the --json document, stderr."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv + ["--json"])
    return code, json.loads(out.getvalue()), err.getvalue()


@pytest.fixture(scope="module")
def gate(tmp_path_factory):
    report = tmp_path_factory.mktemp("gate") / "report.html"
    code, data, err = run(GATE + ["--out", str(report)])
    return code, data, err, report


@pytest.fixture(scope="module")
def questions():
    return load_golden(GOLDEN, EXAMPLES)


def test_golden_set_covers_every_example_with_short_located_answers(questions):
    files = sorted(p.relative_to(EXAMPLES).as_posix() for p in EXAMPLES.rglob("*") if p.is_file())
    named = sorted({s.doc for q in questions for s in q.spans})
    assert named == files, "every sample document needs golden questions (and only those documents)"
    assert len({q.id for q in questions}) == len(questions)
    for split in SPLITS:  # both halves large enough to mean something (an SE near 0.05 on recall)
        assert len(select_split(questions, split)) >= 25, split
        assert {s.doc for q in select_split(questions, split) for s in q.spans} == set(files), split
    assert any(len(q.spans) > 1 for q in questions), "at least one answer needs several spans"
    lengths = [s.length for q in questions for s in q.spans]
    assert max(lengths) <= 500, "answers are short spans: a clause, a sentence, a few list items or rows"
    assert any(q.answer.count("\n") >= 2 for q in questions), "at least one answer spans list items or rows"


def test_demo_grid_holds_the_gated_config():
    conf = tomllib.loads(CONFIG.read_text(encoding="utf-8"))
    base = {"strategy": "auto", **conf["chunking"], **{k: conf["eval"][k] for k in ("mode", "expand")}}
    gated, _ = expand_grid({}, base)
    configs, skipped = expand_grid(load_grid(GRID), base)
    assert not skipped
    (chunk, runs), = gated
    assert any(c == chunk and runs[0] in r for c, r in configs), "the report should show the config CI gates"


def test_gate_passes_on_the_shipped_config(gate):
    code, data, err, _ = gate
    (row,) = data["configs"]
    m = row["metrics"]
    assert data["gate"] == {"min_recall": 0.9, "k": 5, "failing": []}, err
    assert code == 0, err
    assert m["recall@5"] >= 0.9
    assert m["straddle_rate"] == 0.0  # structure-aware chunks hold every answer whole
    assert m["recall@1"] <= m["recall@5"] <= m["recall@10"]


def test_report_shows_every_question_with_its_answer_in_the_text(gate, questions):
    _, data, _, report = gate
    html = report.read_text(encoding="utf-8")
    for q in select_split(questions, "test"):
        assert f"<b>{q.id}</b>" in html, q.id  # in the questions list
    test = select_split(questions, "test")
    assert data["questions"] == {"split": "test", "count": len(test)}
    assert [q["qid"] for q in data["configs"][0]["questions"]] == [q.id for q in test]
    for q in questions:
        shown = re.search(rf'id="a\d+-{re.escape(q.id)}"', html) is not None
        assert shown == (split_of(q.id) == "test"), q.id  # the tune questions are not in a test run
    answered = html.count('<span class="st ok">answered</span>')
    assert answered == round(data["configs"][0]["metrics"]["recall@5"] * len(test))
    for q in data["configs"][0]["questions"]:  # the per-question results, next to each question
        facts = f"complete at rank {q['rank']}" if q["rank"] is not None else "never complete"
        assert f"{facts} \u00b7 {q['tokens']} context tokens" in html, q["qid"]


def test_gate_fails_a_config_that_cuts_answers():
    code, data, err = run(GATE + ["--strategy", "fixed", "--size", "16", "--overlap", "0"])
    (row,) = data["configs"]
    assert code == 1
    assert data["gate"]["failing"] == [row["name"]]
    assert row["metrics"]["straddle_rate"] > 0.5  # 16-token windows cut most answers
    assert row["metrics"]["recall@5"] < 0.9
    assert f"recall@5 below 0.9 for: {row['name']}" in err



@pytest.mark.slow
def test_the_gated_config_is_the_one_chosen_on_the_tune_split():
    """Choose on tune, gate on test: the demo's sweep on the tune questions picks eval/chunkwise.toml's
    config (when it stops doing so, sweep again on tune and ship what it picks)."""
    code, data, err = run(["eval", "--golden", str(GOLDEN), "--docs", str(EXAMPLES), "--config", str(CONFIG),
                           "--grid", str(GRID), "--split", "tune"])
    assert code == 0, err
    conf = tomllib.loads(CONFIG.read_text(encoding="utf-8"))
    base = {"strategy": "auto", **conf["chunking"], **{k: conf["eval"][k] for k in ("mode", "expand")}}
    ((chunk, runs),), _ = expand_grid({}, base)
    from chunkwise.evaluate.runner import RunConfig

    assert data["chosen"] == RunConfig(chunk, *runs[0]).name
    assert data["questions"]["split"] == "tune"
    comp = data["comparisons"]
    assert comp["reference"] == data["chosen"] and len(comp["rows"]) == 4 * (len(data["configs"]) - 1)
