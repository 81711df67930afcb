"""docs/guides/embedders.md's commands, run as written (``chunkwise`` as the module CLI) from a folder
holding a copy of examples/: ONNX ingest and dense search. The openai: line needs a server: it runs
in tests/embed/test_openai_serve.py against ``chunkwise serve`` on loopback."""
import importlib.util
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
if importlib.util.find_spec("onnxruntime") is None or importlib.util.find_spec("torch") is None:
    pytest.skip("needs the onnx and embed extras", allow_module_level=True)


def readme_commands() -> list[str]:
    section = (ROOT / "docs" / "guides" / "embedders.md").read_text(encoding="utf-8")
    lines = []
    for block in re.findall(r"```bash\n(.*?)```", section, flags=re.S):
        lines += [ln.split("  #", 1)[0].strip() for ln in block.splitlines() if ln.strip()]
    return lines


def test_onnx_commands_run_as_written(tmp_path):
    commands = readme_commands()
    assert any("openai:" in c for c in commands) and any("minilm-onnx-int8" in c for c in commands)
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "CHUNKWISE_ONNX_DIR": str(tmp_path / "onnx"),
           "HF_HUB_OFFLINE": "1"}
    ran = []
    for line in commands:
        if not line.startswith("chunkwise "):
            continue  # pip, and the openai: line (needs a server; see the module docstring)
        r = subprocess.run([sys.executable, "-m", "chunkwise.cli.main", *shlex.split(line)[1:]], cwd=tmp_path,
                           env=env, capture_output=True, text=True, timeout=900)
        assert r.returncode == 0, f"{line}: {r.stderr}"
        ran.append((line, r.stdout))
    assert [line.split()[1] for line, _ in ran] == ["ingest", "search"]
    assert "incident-runbook.md" in ran[1][1]  # the rollback question finds the runbook
