"""The CLI run as a server subprocess by the serve and MCP tests (tests/serve/serving.py,
tests/mcp_server/mcp_helpers.py)."""
from __future__ import annotations

import subprocess


def stop(proc: subprocess.Popen, log) -> None:
    """Terminate ``proc`` (killed if it has not exited 20 s later), then close its ``log`` file."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    log.close()
