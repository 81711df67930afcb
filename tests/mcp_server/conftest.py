"""One real store for the MCP tests, and one HTTP server (bearer tokens) shared by them."""
from __future__ import annotations

import json

import pytest

from .mcp_helpers import TOKENS, HttpServer, make_store


@pytest.fixture(scope="session")
def mcp_store(tmp_path_factory):
    return make_store(tmp_path_factory.mktemp("mcp-store"))


@pytest.fixture(scope="session")
def http_server(mcp_store, tmp_path_factory):
    tokens = tmp_path_factory.mktemp("mcp-tokens") / "tokens.json"
    tokens.write_text(json.dumps(TOKENS), encoding="utf-8")
    server = HttpServer(mcp_store, "--tokens", str(tokens), "--max-body", "65536",
                        log=tmp_path_factory.mktemp("mcp-log") / "mcp.log")
    yield server
    server.stop()
