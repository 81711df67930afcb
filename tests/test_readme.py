"""README's Python tour runs as written, against a copy of the sample corpus (the real default model)."""
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_readme_python_block_runs(tmp_path):
    blocks = re.findall(r"```python\n(.*?)```", (ROOT / "README.md").read_text(), re.S)
    assert blocks, "README has a Python example"
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    out = subprocess.run([sys.executable, "-c", "\n".join(blocks)], cwd=tmp_path, capture_output=True, text=True,
                         timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "roll" in out.stdout.lower() and "examples/" in out.stdout or "incident" in out.stdout.lower()


def test_readme_shell_tour_uses_real_commands_and_flags():
    from chunkwise.cli.main import build_parser

    parser = build_parser()
    text = (ROOT / "README.md").read_text()
    tour = re.findall(r"^chunkwise (\w[^#\n]*?)\s*(?:#.*)?$", text, re.M)
    assert len(tour) >= 6
    for line in tour:
        args = shlex.split(line)
        try:
            parser.parse_args(args)
        except SystemExit as exc:  # pragma: no cover - the failure message names the line
            raise AssertionError(f"README command refused: chunkwise {line}") from exc


def test_readme_tour_search_finds_its_answer_for_the_groups_it_names(tmp_path, monkeypatch, capsys):
    """The tour's question is answered by the first search it shows, with the groups that search names
    (the answer's file is tagged by its front matter, not by --acl: a search as another group must not
    be the one the tour presents as the answer)."""
    from chunkwise.cli.main import main

    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    monkeypatch.chdir(tmp_path)
    tour = re.findall(r"^chunkwise ((?:ingest|search) [^#\n]*?)\s*(?:#.*)?$", (ROOT / "README.md").read_text(), re.M)
    assert main(shlex.split(tour[0]) + ["--workers", "1"]) == 0 and tour[0].startswith("ingest")
    capsys.readouterr()
    assert main(shlex.split(tour[1]) + ["--json"]) == 0
    import json

    top = json.loads(capsys.readouterr().out)["results"][0]
    assert top["source_uri"] == "incident-runbook.md" and "Incident Commander can lift a freeze" in top["hit"]["text"], top
