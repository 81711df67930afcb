"""Helpers for the serve tests (a module of their own, so no test imports from a conftest): ``chunkwise serve`` started as a subprocess (the real CLI, the real
uvicorn) on 127.0.0.1 with a free port, over a real ingested store, stopped when the module is done."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
import server_process

pytest.importorskip("fastapi", reason="the serve extra is not installed: pip install 'chunkwise[serve]'")
httpx = pytest.importorskip("httpx")

import chunkwise  # noqa: E402

SRC = str(Path(chunkwise.__file__).resolve().parents[1])
HOSTILE = ('<script>window.__pwned = 1</script> quartz "><img src=x onerror="window.__pwned=2"> '
           "' onmouseover='window.__pwned=3' \x1b[31mred\x1b[0m \x1b]0;title\x07 end")
TOKENS = {"sre-token-0123456789abcdef": ["sre"], "fin-token-0123456789abcdef": ["finance"],
          "both-token-0123456789abcdef": ["sre", "finance"]}
SECRET = "zanzibar"

DOCS = {
    "runbook.md": ("# Runbook\n\n## Rollback\n\nTo roll back a deploy, run the rollback job and watch the error rate. "
                   "A rollback takes five minutes.\n\n## Freeze\n\nDuring a freeze only the on-call lead may deploy.\n", ["sre"]),
    "ledger.md": (f"# Ledger\n\n## Close\n\nThe quarterly close uses the {SECRET} reconciliation sheet. "
                  "Rollback of a journal entry needs two approvals.\n", ["finance"]),
    "mixed.md": ("# Mixed\n\n## Public part\n\nThe pager rotation is weekly and the pager handover is on Monday.\n\n"
                 f"## Payroll\n<!-- acl: finance -->\n\nPayroll {SECRET} numbers live in the vault.\n", ["sre"]),
    "hostile.md": (f"# Hostile <b>heading</b> \x1b[2J\n\n## Payload\n\n{HOSTILE}\n", ["sre"]),
    "cjk.md": ("# 財務\n\n## 予算\n\nThe budget octopus lives here.\n", ["财务"]),
}


def make_store(root: Path, embedder: str = "hashing") -> Path:
    from chunkwise.config import ChunkConfig
    from chunkwise.embed import make_embedder
    from chunkwise.pipeline import ingest

    docs = root / "docs"
    docs.mkdir()
    for name, (text, _) in DOCS.items():
        (docs / name).write_text(text, encoding="utf-8")
    db = root / "store.db"
    ingest([docs], db, ChunkConfig(strategy="structure", size=64), embedder=make_embedder(embedder),
           acl_map={name: tags for name, (_, tags) in DOCS.items()})
    return db


class Server:
    """``chunkwise serve`` in a subprocess; ``url`` once it answers /health."""

    def __init__(self, db: Path, *flags: str, log: Path) -> None:
        env = {**os.environ, "PYTHONPATH": SRC + os.pathsep + os.environ.get("PYTHONPATH", ""),
               "HF_HUB_OFFLINE": "1", "TIKTOKEN_CACHE_DIR": ""}
        self.log = log
        self._fh = open(log, "w", encoding="utf-8")  # a file, not a pipe: a full pipe would block the server
        self.proc = subprocess.Popen([sys.executable, "-m", "chunkwise.cli.main", "serve", "--db", str(db),
                                      "--port", "0", "--json", *flags], stdout=self._fh, stderr=subprocess.STDOUT, env=env)
        self.url = self._wait()

    def _wait(self, timeout: float = 180.0) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            text = self.log.read_text(encoding="utf-8")
            ready = [json.loads(line) for line in text.splitlines() if line.startswith("{")]
            if ready:  # the --json ready line
                url = ready[0]["url"]
                assert url.startswith("http://127.0.0.1:") and ready[0]["auth"] in ("header", "tokens", "body")
                try:
                    if httpx.get(url + "/health", timeout=5).status_code == 200:
                        return url
                except httpx.TransportError:
                    pass
            if self.proc.poll() is not None:
                raise RuntimeError(f"chunkwise serve exited {self.proc.returncode}:\n{text}")
            time.sleep(0.1)
        self.stop()
        raise RuntimeError(f"chunkwise serve did not start in {timeout} s:\n{self.log.read_text()}")

    def client(self, **headers) -> "httpx.Client":
        return httpx.Client(base_url=self.url, headers=headers, timeout=60)

    def stop(self) -> None:
        server_process.stop(self.proc, self._fh)
