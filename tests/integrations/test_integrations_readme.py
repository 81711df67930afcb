"""docs/integrations.md's examples, run as written: the shell
lines (with ``chunkwise`` as the module CLI) and then every Python block, each in a fresh process,
from a folder holding a copy of examples/."""
import os
import re
import shlex
import shutil
import subprocess
import sys

import pytest

from integration_fixtures import ROOT, cli

DOC = ROOT / "docs" / "integrations.md"


def blocks(lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", DOC.read_text(encoding="utf-8"), flags=re.S)


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    folder = tmp_path_factory.mktemp("readme")
    shutil.copytree(ROOT / "examples", folder / "examples")
    for block in blocks("bash"):
        for line in block.splitlines():
            line = line.split("#", 1)[0].strip()
            if line.startswith("chunkwise "):
                r = cli(*shlex.split(line)[1:], cwd=folder)
                assert r.returncode == 0, f"{line}: {r.stderr}"
    return folder


def test_the_section_has_examples_for_every_framework():
    code = "\n".join(blocks("python"))
    for name in ("integrations.langchain", "integrations.llamaindex", "integrations.haystack", "api.ingest"):
        assert name in code


@pytest.mark.parametrize("index", range(len(blocks("python"))))
def test_readme_python_block_runs(workdir, index):
    code = blocks("python")[index]
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "HAYSTACK_TELEMETRY_ENABLED": "False"}
    r = subprocess.run([sys.executable, "-c", code], cwd=workdir, env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, f"README block {index} failed:\n{code}\n{r.stderr}"
    assert r.stdout.strip(), "every example prints what it found"
