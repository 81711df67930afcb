"""``chunkwise mcp --transport http`` on a real port, driven by the official SDK's client: each
request's bearer token decides its groups; the server's limits hold."""
from __future__ import annotations

import pytest
from mcp import MCPError

from .mcp_helpers import SECRET, run

httpx2 = pytest.importorskip("httpx2")
SRE, FIN = "sre-token-0123456789abcdef", "fin-token-0123456789abcdef"


def _search(server, token, args):
    """The tool's result, or the MCPError it was answered with (caught inside the client: the
    streamable HTTP transport's task group would wrap it)."""
    async def go():
        async with server.client(token) as client:
            try:
                return await client.call_tool("search", args)
            except MCPError as exc:
                return exc

    return run(go())


def test_each_token_sees_its_own_groups(http_server):
    query = {"query": f"rollback {SECRET} payroll", "k": 10}
    sre = _search(http_server, SRE, query).structured_content["results"]
    fin = _search(http_server, FIN, query).structured_content["results"]
    assert "ledger.md" not in {r["doc_id"] for r in sre} and all(SECRET not in r["text"] for r in sre)
    assert {"ledger.md", "mixed.md"} <= {r["doc_id"] for r in fin}
    assert "runbook.md" not in {r["doc_id"] for r in fin}


def test_arguments_cannot_widen_a_tokens_groups(http_server):
    refused = _search(http_server, SRE, {"query": SECRET, "groups": ["finance"]})
    assert isinstance(refused, MCPError) and refused.error.code == -32602


def test_resources_follow_the_token(http_server):
    async def go(token):
        async with http_server.client(token) as client:
            names = [r.name for r in (await client.list_resources()).resources]
            fetched = await client.call_tool("fetch", {"doc_id": "ledger.md"})
            return names, fetched

    sre_names, sre_fetch = run(go(SRE))
    fin_names, fin_fetch = run(go(FIN))
    assert "ledger.md" not in sre_names and sre_fetch.is_error
    assert fin_names == ["ledger.md", "mixed.md"] and not fin_fetch.is_error


@pytest.mark.parametrize("headers", [{}, {"Authorization": "Bearer wrong-token-0123456789abcdef"},
                                     {"Authorization": "Basic c3JlOnNyZQ=="}])
def test_requests_without_a_valid_token_are_refused_before_mcp(http_server, headers):
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    r = httpx2.post(http_server.url, json=body, headers={"Accept": "application/json, text/event-stream", **headers})
    assert r.status_code == 401 and r.headers["www-authenticate"].startswith("Bearer")
    assert r.json()["error"]["type"] == "authentication_error" and "tools" not in r.text


def test_the_sdk_client_without_a_token_cannot_connect(http_server):
    async def go():
        async with http_server.client(None) as client:
            await client.list_tools()

    with pytest.raises(BaseException):
        run(go())


def test_server_limits_apply_over_http(http_server):
    big = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
           "params": {"name": "search", "arguments": {"query": "x" * 70_000}}}
    r = httpx2.post(http_server.url, json=big, headers={"Authorization": f"Bearer {SRE}",
                                                         "Accept": "application/json, text/event-stream"})
    assert r.status_code == 413 and r.json()["error"]["code"] == "body_too_large"
    for args in ({"query": "x" * 4001}, {"query": "rollback", "k": 1000}):  # under the body limit, over a tool limit
        refused = _search(http_server, SRE, args)
        assert isinstance(refused, MCPError) and refused.error.code == -32602
    assert r.headers["x-content-type-options"] == "nosniff"


def test_a_foreign_host_name_is_refused_before_mcp(http_server):
    """DNS rebinding: a page that rebinds its own name to 127.0.0.1 sends that name as Host."""
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    headers = {"Authorization": f"Bearer {SRE}", "Accept": "application/json, text/event-stream"}
    r = httpx2.post(http_server.url, json=body, headers={**headers, "Host": "evil.example"})
    assert r.status_code == 400 and r.json()["error"]["code"] == "host_not_allowed" and "tools" not in r.text
    assert not [h for h in r.headers if h.lower().startswith("access-control-")]
    ok = httpx2.post(http_server.url, json=body, headers={**headers, "Host": "localhost"})
    assert ok.status_code == 200 and "search" in ok.text
