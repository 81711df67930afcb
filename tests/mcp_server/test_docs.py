"""docs/mcp.md's examples, run as written: the ingest line, the stdio client, and the HTTP client
against the documented server command (on a free port instead of 8765)."""
from __future__ import annotations

import json
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from .mcp_helpers import ENV, HttpServer

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "mcp.md"


def blocks(lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", DOC.read_text(encoding="utf-8"), flags=re.S)


def commands() -> list[list[str]]:
    return [shlex.split(line)[1:] for block in blocks("bash") for line in block.splitlines()
            if line.startswith("chunkwise ")]


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    folder = tmp_path_factory.mktemp("mcp-docs")
    shutil.copytree(ROOT / "examples", folder / "examples")
    ingest = commands()[0]
    assert ingest[0] == "ingest"
    done = subprocess.run([sys.executable, "-m", "chunkwise.cli.main", *ingest], cwd=folder, env=ENV,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    (folder / "tokens.json").write_text(json.dumps({"staff-token-0123456789abcdef": ["staff"]}), encoding="utf-8")
    return folder


def _run(code: str, cwd: Path) -> str:
    done = subprocess.run([sys.executable, "-c", code], cwd=cwd, env=ENV, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, f"{code}\n{done.stderr}"
    assert done.stdout.strip(), "every example prints what it found"
    return done.stdout


def test_the_client_configuration_is_json_naming_the_command():
    config = json.loads(blocks("json")[0])
    assert config["mcpServers"]["chunkwise"]["args"][:1] == ["mcp"]


def test_the_stdio_example_runs(workdir):
    out = _run(blocks("python")[0], workdir)
    assert "chars" in out and "chunkwise://document/" in out


def test_the_http_example_runs_against_the_documented_server(workdir, tmp_path):
    serve = commands()[1]
    assert serve[:1] == ["mcp"] and "--port" in serve
    flags = serve[serve.index("--db") + 2:]
    flags = [f for i, f in enumerate(flags) if f != "--port" and (i == 0 or flags[i - 1] != "--port")]
    server = HttpServer(workdir / "index.db", *[f.replace("tokens.json", str(workdir / "tokens.json")) for f in flags
                                                if f not in ("--transport", "http")], log=tmp_path / "mcp.log")
    try:
        out = _run(blocks("python")[1].replace("http://127.0.0.1:8765/mcp", server.url), workdir)
    finally:
        server.stop()
    assert "chars" in out
