"""The search fast path (serve/fast.py) answers exactly as the framework does: for well-formed
searches the same JSON and headers, for everything it hands over the framework's own answer.

The framework's path is reached with a JSON content type the fast path leaves to it
(``application/merge-patch+json``, which FastAPI reads as JSON), so each request is answered both
ways by the same real server and compared."""
from __future__ import annotations

import json

import pytest

from .serving import httpx

FAST = "application/json"
FRAMEWORK = "application/merge-patch+json"
DROPPED = {"date", "content-length"}  # the date moves; the length follows the body (compared itself)

BODIES = [
    {"query": "rollback deploy"},
    {"query": "rollback deploy", "k": 2, "mode": "bm25"},
    {"query": "rollback deploy", "k": 3, "mode": "hybrid", "expand": "parent", "passage_budget": None},
    {"query": "pager handover", "per": "document", "versions": "all", "overfetch": 5},
    {"query": "rollback", "filters": {"source_prefix": "runbook", "file_types": ["md"]}},
    {"query": "zanzibar payroll numbers", "mode": "dense"},
    {"query": "rollback deploy", "k": 0},                         # invalid: 400 from the validator
    {"query": "rollback deploy", "groups": ["finance"]},          # groups in the body: refused
    {"query": "", "k": 2},
    {"query": "  \t ", "k": 2},                                  # blank: refused by the retriever (400)
    {"query": "rollback deploy", "mode": "semantic"},
    {"query": "x" * 5000},
]


def ask(url: str, body, content_type: str, headers: dict) -> httpx.Response:
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    return httpx.post(url + "/search", content=data, headers={"Content-Type": content_type, **headers}, timeout=60)


def same(a: httpx.Response, b: httpx.Response) -> None:
    assert a.status_code == b.status_code, (a.status_code, b.status_code, a.text[:300], b.text[:300])
    assert a.content == b.content
    assert {k: v for k, v in a.headers.items() if k not in DROPPED} == \
        {k: v for k, v in b.headers.items() if k not in DROPPED}


@pytest.mark.parametrize("body", BODIES, ids=lambda b: json.dumps(b)[:60])
@pytest.mark.parametrize("groups", ["sre", "sre,finance", "finance", None, ", ,"])
def test_both_paths_give_the_same_answer(header_server, body, groups):
    headers = {} if groups is None else {"X-Chunkwise-Groups": groups}
    fast = ask(header_server.url, body, FAST, headers)
    framework = ask(header_server.url, body, FRAMEWORK, headers)
    same(fast, framework)


def test_a_search_through_the_fast_path_finds_what_the_caller_may_see(header_server):
    r = ask(header_server.url, {"query": "rollback deploy", "k": 3}, FAST, {"X-Chunkwise-Groups": "sre"})
    assert r.status_code == 200 and r.headers["content-type"] == "application/json"
    texts = [p["hit"]["text"] for p in r.json()["results"]]
    assert texts and any("roll back a deploy" in t for t in texts) and not any("zanzibar" in t for t in texts)
    assert "content-security-policy" in r.headers and r.headers["cache-control"] == "no-store"


@pytest.mark.parametrize("raw", [b"", b"{", b"[]", b'{"query": "a", "query": 5}', b"\xff\xfe", b'{"query": "\\ud800"}'])
def test_malformed_bodies_get_the_frameworks_answer(header_server, raw):
    headers = {"X-Chunkwise-Groups": "sre"}
    same(ask(header_server.url, raw, FAST, headers), ask(header_server.url, raw, FRAMEWORK, headers))


def test_body_mode_and_tokens_mode(body_server, tokens_server):
    body = {"query": "rollback deploy", "groups": ["sre"]}
    same(ask(body_server.url, body, FAST, {}), ask(body_server.url, body, FRAMEWORK, {}))
    same(ask(body_server.url, {"query": "rollback"}, FAST, {}), ask(body_server.url, {"query": "rollback"}, FRAMEWORK, {}))
    for token in ("sre-token-0123456789abcdef", "nope"):
        h = {"Authorization": f"Bearer {token}"}
        same(ask(tokens_server.url, {"query": "rollback deploy"}, FAST, h),
             ask(tokens_server.url, {"query": "rollback deploy"}, FRAMEWORK, h))


def test_well_formed_searches_never_reach_the_framework(store):
    """The fast path is taken (the comparisons above would pass without it): a well-formed search
    is answered without the framework; a refused one is handed to it."""
    import asyncio

    from fastapi.responses import JSONResponse

    from chunkwise.serve.app import _error
    from chunkwise.serve.auth import TrustedHeader
    from chunkwise.serve.engine import Engine
    from chunkwise.serve.fast import FastSearch
    from chunkwise.serve.models import SearchRequest

    engine = Engine(str(store), workers=2)
    reached: list[str] = []

    async def framework(scope, receive, send):
        reached.append(scope["path"])
        await JSONResponse({"framework": True}, status_code=418)(scope, receive, send)

    app = FastSearch(framework, engine, TrustedHeader(), SearchRequest, _error)

    async def run():
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://127.0.0.1") as c:
            h = {"X-Chunkwise-Groups": "sre"}
            return (await c.post("/search", json={"query": "rollback deploy", "k": 2}, headers=h),
                    await c.post("/search", json={"query": "rollback deploy", "k": 0}, headers=h),
                    await c.post("/search", json={"query": "rollback deploy"}),
                    await c.get("/health"))

    try:
        ok, invalid, anonymous, health = asyncio.run(run())
    finally:
        engine.close()
    assert ok.status_code == 200 and ok.json()["results"]
    assert [r.status_code for r in (invalid, anonymous, health)] == [418, 418, 418]
    assert reached == ["/search", "/search", "/health"]
