"""Helpers for the MCP tests: a real ingested store, ``chunkwise mcp`` run by the SDK's own client
(a stdio subprocess) or as a subprocess listening on a real port (streamable HTTP)."""
from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
import server_process

pytest.importorskip("mcp", reason="the mcp extra is not installed: pip install 'chunkwise[mcp]'")

import chunkwise  # noqa: E402
from mcp import Client, StdioServerParameters  # noqa: E402

SRC = str(Path(chunkwise.__file__).resolve().parents[1])
ENV = {**os.environ, "PYTHONPATH": SRC + os.pathsep + os.environ.get("PYTHONPATH", ""), "HF_HUB_OFFLINE": "1",
       "TIKTOKEN_CACHE_DIR": ""}
SECRET = "zanzibar"
TOKENS = {"sre-token-0123456789abcdef": ["sre"], "fin-token-0123456789abcdef": ["finance"]}
DOCS = {
    "runbook.md": ("# Runbook\n\n## Rollback\n\nTo roll back a deploy, run the rollback job and watch the error rate. "
                   "A rollback takes five minutes.\n\n## Freeze\n\nDuring a freeze only the on-call lead may deploy.\n",
                   ["sre"]),
    "ledger.md": (f"# Ledger\n\n## Close\n\nThe quarterly close uses the {SECRET} reconciliation sheet. "
                  "Rollback of a journal entry needs two approvals.\n", ["finance"]),
    "mixed.md": ("# Mixed\n\n## Public part\n\nThe pager rotation is weekly and the rollback pager handover is on "
                 f"Monday.\n\n## Payroll\n<!-- acl: finance -->\n\nPayroll {SECRET} numbers live in the vault.\n", ["sre"]),
    "old/notes.md": ("---\nupdated_at: 2023-01-10\n---\n# Old notes\n\nThe rollback used to take an hour.\n", ["sre"]),
    "new/notes.md": ("---\nupdated_at: 2025-06-01\n---\n# New notes\n\nThe rollback is now automatic.\n", ["sre"]),
    "plain.txt": ("Rollback checklist in plain text: stop, revert, verify.\n", ["sre"]),
}


def make_store(root: Path) -> Path:
    from chunkwise.config import ChunkConfig
    from chunkwise.embed import make_embedder
    from chunkwise.pipeline import ingest

    docs = root / "docs"
    for name, (text, _) in DOCS.items():
        (docs / name).parent.mkdir(parents=True, exist_ok=True)
        (docs / name).write_text(text, encoding="utf-8")
    db = root / "store.db"
    ingest([docs], db, ChunkConfig(strategy="structure", size=64), embedder=make_embedder("hashing"),
           acl_map={name: tags for name, (_, tags) in DOCS.items()})
    return db


def stdio(db: Path, *flags: str) -> Client:
    """The SDK's client starting ``chunkwise mcp --db DB FLAGS`` as a stdio subprocess."""
    return Client(StdioServerParameters(command=sys.executable,
                                        args=["-m", "chunkwise.cli.main", "mcp", "--db", str(db), *flags], env=ENV))


def run(coro):
    return asyncio.run(coro)


class HttpServer:
    """``chunkwise mcp --transport http`` in a subprocess on a free port; ``url`` once ready."""

    def __init__(self, db: Path, *flags: str, log: Path) -> None:
        self.log = log
        self._fh = open(log, "w", encoding="utf-8")  # a file, not a pipe: a full pipe would block the server
        self.proc = subprocess.Popen([sys.executable, "-m", "chunkwise.cli.main", "mcp", "--db", str(db),
                                      "--transport", "http", "--port", "0", "--json", *flags],
                                     stdout=self._fh, stderr=subprocess.STDOUT, env=ENV)
        self.url = self._wait()

    def _wait(self, timeout: float = 120.0) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            text = self.log.read_text(encoding="utf-8")
            ready = [json.loads(line) for line in text.splitlines() if line.startswith("{")]
            if ready:
                return ready[0]["url"]
            if self.proc.poll() is not None:
                raise RuntimeError(f"chunkwise mcp exited {self.proc.returncode}:\n{text}")
            time.sleep(0.1)
        self.stop()
        raise RuntimeError(f"chunkwise mcp did not start in {timeout} s:\n{self.log.read_text()}")

    def client(self, token: str | None = None) -> "HttpClient":
        return HttpClient(self.url, token)

    def stop(self) -> None:
        server_process.stop(self.proc, self._fh)


class HttpClient:
    """``async with HttpClient(url, token) as client``: the SDK's Client over streamable HTTP,
    sending ``Authorization: Bearer token``."""

    def __init__(self, url: str, token: str | None) -> None:
        self.url, self.token = url, token

    async def __aenter__(self) -> Client:
        import httpx2
        from mcp.client.streamable_http import streamable_http_client

        headers = {"Authorization": f"Bearer {self.token}"} if self.token else {}
        self._http = httpx2.AsyncClient(headers=headers, timeout=60)
        await self._http.__aenter__()
        self._client = Client(streamable_http_client(self.url, http_client=self._http))
        try:
            return await self._client.__aenter__()
        except BaseException:
            await self._http.__aexit__(None, None, None)
            raise

    async def __aexit__(self, *exc) -> None:
        try:
            await self._client.__aexit__(*exc)
        finally:
            await self._http.__aexit__(None, None, None)
