"""docs/guides/serve.md's commands, run as written (chunkwise via the CLI entry point, curl through a real
HTTP client; the port and the store path are the only substitutions)."""
from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import httpx
from .serving import Server

from chunkwise.cli.main import main

ROOT = Path(__file__).resolve().parents[2]


def serve_block() -> list[str]:
    text = (ROOT / "docs" / "guides" / "serve.md").read_text(encoding="utf-8")
    block = re.search(r"```bash\n(.*?)```", text, re.S).group(1)
    return [line.split("   #", 1)[0].strip() for line in block.splitlines() if line.strip()]


def curl(server: Server, command: str) -> httpx.Response:
    args = shlex.split(command)[1:]
    headers, data, url = {}, None, None
    while args:
        a = args.pop(0)
        if a == "-s":
            continue
        if a == "-H":
            k, v = args.pop(0).split(":", 1)
            headers[k.strip()] = v.strip()
        elif a == "-d":
            data = args.pop(0)
        else:
            url = a
    path = url.split("localhost:8080", 1)[1]
    if data is None:
        return httpx.get(server.url + path, headers=headers, timeout=60)
    return httpx.post(server.url + path, headers=headers, content=data.encode(), timeout=60)


def test_readme_serve_commands(tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)
    lines = serve_block()
    db = tmp_path / "demo.db"
    server, answers = None, []
    try:
        for line in lines:
            line = line.replace("demo.db", str(db))
            if line.startswith("chunkwise serve"):
                argv = shlex.split(line.rstrip("&").strip())[2:]
                argv = [a for a in argv if a not in ("--port", "8080")]
                assert argv[:2] == ["--db", str(db)]
                server = Server(db, *argv[2:], log=tmp_path / "serve.log")
            elif line.startswith("chunkwise "):
                assert main(shlex.split(line)[1:] + ["--json"]) == 0
            elif line.startswith("curl "):
                r = curl(server, line)
                assert r.status_code == 200, (line, r.text)
                answers.append(r.json())
    finally:
        if server is not None:
            server.stop()
    health, search, document, embeddings = answers
    assert health["auth"] == "body"
    assert search["results"] and all(r["acl"] == ["staff"] for r in search["results"])
    assert document["doc_id"] == "release-notes.md" and document["records"]
    assert len(embeddings["data"]) == 2 and json.dumps(embeddings).count('"object": "embedding"') == 2
