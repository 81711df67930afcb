"""The HTTP API through a real client against real ``chunkwise serve`` processes: same JSON as the CLI,
groups only from where the server was told to take them, fail closed, 404s that reveal nothing."""
from __future__ import annotations

import base64
import json
import struct

import pytest
from .serving import SECRET

from chunkwise.cli.main import main
from chunkwise.embed import make_embedder

SEARCHES = [
    {"query": "rollback deploy", "k": 3, "mode": "bm25"},
    {"query": "rollback deploy", "k": 2, "mode": "hybrid", "expand": "neighbours"},
    {"query": "pager rotation", "mode": "dense", "budget": 120},
    {"query": "freeze", "expand": "parent", "overfetch": 2},
    {"query": "rollback deploy", "k": 4, "budget": 90, "passage_budget": 40},
]


def cli_search(capsys, db, params: dict, groups: str) -> dict:
    argv = ["search", params["query"], "--db", str(db), "--groups", groups, "--json"]
    for key in ("k", "mode", "expand", "budget", "overfetch", "passage_budget"):
        if key in params:
            argv += [f"--{key.replace('_', '-')}", str(params[key])]
    capsys.readouterr()
    assert main(argv) == 0
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("params", SEARCHES)
def test_search_gives_the_cli_json(header_server, store, capsys, params):
    with header_server.client(**{"X-Chunkwise-Groups": "sre,finance"}) as c:
        r = c.post("/search", json=params)
    assert r.status_code == 200, r.text
    assert r.json() == cli_search(capsys, store, params, "sre,finance")
    assert r.json()["results"], "the query must match something, or the comparison proves little"


def test_each_mode_passes_groups_its_own_way(header_server, body_server, tokens_server):
    q = {"query": "rollback"}
    with header_server.client(**{"X-Chunkwise-Groups": "finance"}) as c:
        by_header = c.post("/search", json=q).json()
    with body_server.client() as c:
        by_body = c.post("/search", json={**q, "groups": ["finance"]}).json()
    with tokens_server.client(Authorization="Bearer fin-token-0123456789abcdef") as c:
        by_token = c.post("/search", json=q).json()
    assert by_header == by_body == by_token
    assert by_header["results"] and all(r["acl"] == ["finance"] for r in by_header["results"])
    assert "ledger.md" in {r["doc_id"] for r in by_header["results"]}


@pytest.mark.parametrize("headers, body, status, get_status", [
    ({}, {}, 401, 401),                                                   # nothing: never a default
    ({"X-Chunkwise-Groups": ", ,"}, {}, 403, 403),                       # a header that names no group
    ({"X-Chunkwise-Groups": "sre"}, {"groups": ["sre"]}, 400, 200),       # the body is not trusted here
    ({"X-Chunkwise-Groups": "sre%zz"}, {}, 400, 400),                     # a broken escape
    ({"X-Chunkwise-Groups": "%FF"}, {}, 400, 400),                        # not UTF-8
    ({"Authorization": "Bearer sre-token-0123456789abcdef"}, {}, 401, 401),  # tokens mean nothing here
])
def test_header_mode_fails_closed(header_server, headers, body, status, get_status):
    with header_server.client(**headers) as c:
        r = c.post("/search", json={"query": "rollback", **body})
        assert r.status_code == status, r.text
        assert set(r.json()) == {"error"} and r.json()["error"]["message"]
        assert c.get("/documents/runbook.md").status_code == get_status


def test_groups_in_the_query_string_are_never_read(header_server, body_server):
    with header_server.client() as c:
        assert c.post("/search?groups=sre", json={"query": "rollback"}).status_code == 401
        assert c.get("/documents/runbook.md?groups=sre").status_code == 401
    with body_server.client() as c:
        assert c.post("/search?groups=sre", json={"query": "rollback"}).status_code == 401
        assert c.post("/search", json={"query": "rollback", "groups": []}).status_code == 403


def test_a_header_sent_twice_is_refused(header_server):
    with header_server.client() as c:
        r = c.post("/search", json={"query": "rollback"},
                   headers=[("X-Chunkwise-Groups", "finance"), ("X-Chunkwise-Groups", "sre")])
    assert r.status_code == 400 and "once" in r.json()["error"]["message"]


def test_tokens(tokens_server):
    with tokens_server.client() as c:
        r = c.post("/search", json={"query": "rollback"})
        assert r.status_code == 401 and r.headers["www-authenticate"].startswith("Bearer")
        bad = c.post("/search", json={"query": "rollback"}, headers={"Authorization": "Bearer not-a-known-token-000"})
        assert bad.status_code == 401 and bad.json()["error"]["code"] == "invalid_token"
        assert c.post("/search", json={"query": "rollback", "groups": ["finance"]},
                      headers={"Authorization": "Bearer sre-token-0123456789abcdef"}).status_code == 400
        # a trusted-header copy is no way around the token
        r = c.post("/search", json={"query": SECRET}, headers={"X-Chunkwise-Groups": "finance"})
        assert r.status_code == 401
        who = c.get("/whoami", headers={"Authorization": "Bearer both-token-0123456789abcdef"}).json()
        assert sorted(who["groups"]) == ["finance", "sre"] and who["auth"] == "tokens"


def test_percent_encoded_tags_reach_non_ascii_groups(header_server):
    with header_server.client(**{"X-Chunkwise-Groups": "%E8%B4%A2%E5%8A%A1"}) as c:  # 财务
        r = c.post("/search", json={"query": "octopus", "mode": "bm25"}).json()
        assert [x["doc_id"] for x in r["results"]] == ["cjk.md"]
        assert c.get("/whoami").json()["groups"] == ["财务"]
    with header_server.client(**{"X-Chunkwise-Groups": "sre"}) as c:
        assert c.post("/search", json={"query": "octopus", "mode": "bm25"}).json()["results"] == []


def test_nothing_of_a_document_outside_the_callers_groups(header_server):
    with header_server.client(**{"X-Chunkwise-Groups": "sre"}) as c:
        for mode in ("bm25", "dense", "hybrid"):
            for expand in ("none", "neighbours", "parent"):
                r = c.post("/search", json={"query": f"{SECRET} reconciliation payroll", "mode": mode, "expand": expand})
                assert r.status_code == 200
                shown = json.dumps(r.json()["results"]) + json.dumps(r.json()["omitted"])
                assert SECRET not in shown and "ledger.md" not in shown and "finance" not in shown
        hidden = c.get("/documents/ledger.md")
        missing = c.get("/documents/no-such-document.md")
    assert hidden.status_code == missing.status_code == 404
    assert hidden.content == missing.content
    drop = {"date"}
    assert {k: v for k, v in hidden.headers.items() if k not in drop} == {
        k: v for k, v in missing.headers.items() if k not in drop}


def test_document_records_are_only_the_permitted_ones(header_server):
    with header_server.client(**{"X-Chunkwise-Groups": "sre"}) as c:
        sre = c.get("/documents/mixed.md").json()
    with header_server.client(**{"X-Chunkwise-Groups": "sre,finance"}) as c:
        both = c.get("/documents/mixed.md").json()
    assert SECRET not in json.dumps(sre) and SECRET in json.dumps(both)
    assert len(sre["records"]) < len(both["records"])
    for doc in (sre, both):
        assert all(r["doc_id"] == "mixed.md" and r["quality"] == "ready" for r in doc["records"])
    # the caller who may read all of it gets positions; the one who may not gets none (positions.py)
    idx = [r["chunk_index"] for r in both["records"]]
    assert idx == sorted(idx) and None not in idx
    assert both["boundaries"] == [[r["start_char"], r["end_char"]] for r in both["records"]]
    assert sre["boundaries"] == []
    assert all(r["chunk_index"] is None and r["start_char"] is None for r in sre["records"])
    assert all(r["acl"] == ["sre"] for r in sre["records"])


def test_documents_with_slashes_and_odd_ids(header_server):
    with header_server.client(**{"X-Chunkwise-Groups": "sre"}) as c:
        for path in ("/documents/a/b/c.md", "/documents/%2e%2e%2fledger.md", "/documents/%00", "/documents/%ED%A0%80"):
            r = c.get(path)
            assert r.status_code == 404, (path, r.text)


def test_embeddings_openai_format(header_server):
    ref = make_embedder("hashing")
    texts = ["how do I roll back", "pager rotation"]
    with header_server.client() as c:
        one = c.post("/v1/embeddings", json={"input": texts[0], "model": "hashing-384@1"}).json()
        many = c.post("/v1/embeddings", json={"input": texts, "model": "hashing-384@1", "encoding_format": "base64"}).json()
        models = c.get("/v1/models").json()
    assert one["object"] == "list" and one["model"] == "hashing-384@1"
    assert one["data"] == [{"object": "embedding", "index": 0, "embedding": pytest.approx(ref.embed(texts[:1])[0])}]
    assert one["usage"] == {"prompt_tokens": 5, "total_tokens": 5}
    assert [d["index"] for d in many["data"]] == [0, 1]
    for d, want in zip(many["data"], ref.embed(texts)):
        raw = base64.b64decode(d["embedding"])
        assert len(raw) == 4 * 384
        assert list(struct.unpack("<384f", raw)) == pytest.approx(want, abs=1e-7)
    assert models == {"object": "list", "data": [{"id": "hashing-384@1", "object": "model", "created": 0,
                                                   "owned_by": "chunkwise"}]}


@pytest.mark.parametrize("body, status, code", [
    ({"input": "x", "model": "text-embedding-3-small"}, 404, "model_not_found"),
    ({"input": [], "model": "hashing-384@1"}, 400, "invalid_request"),
    ({"input": "", "model": "hashing-384@1"}, 400, "invalid_request"),
    ({"input": [[1, 2, 100256]], "model": "hashing-384@1"}, 400, "invalid_request"),  # a gap in cl100k_base
    ({"input": [1, 2, 100277], "model": "hashing-384@1"}, 400, "invalid_request"),  # past its last id
    ({"input": [1, -2], "model": "hashing-384@1"}, 400, "invalid_request"),
    ({"input": [[]], "model": "hashing-384@1"}, 400, "invalid_request"),
    ({"input": ["x", [1]], "model": "hashing-384@1"}, 400, "invalid_request"),
    ({"input": [True, 1], "model": "hashing-384@1"}, 400, "invalid_request"),
    ({"input": [1.5], "model": "hashing-384@1"}, 400, "invalid_request"),
    ({"input": "x", "model": "hashing-384@1", "dimensions": 256}, 400, "invalid_request"),
    ({"input": "x", "model": "hashing-384@1", "encoding_format": "int8"}, 400, "invalid_request"),
    ({"input": "x"}, 400, "invalid_request"),
])
def test_embeddings_errors_are_openai_errors(header_server, body, status, code):
    with header_server.client() as c:
        r = c.post("/v1/embeddings", json=body)
    assert r.status_code == status, r.text
    err = r.json()["error"]
    assert err["code"] == code and err["type"] == "invalid_request_error" and err["message"]
    assert set(err) == {"message", "type", "param", "code"}


def test_embeddings_model_name_without_version_and_tokens_required(header_server, tokens_server):
    with header_server.client() as c:
        assert c.post("/v1/embeddings", json={"input": "x", "model": "HASHING-384"}).json()["model"] == "hashing-384@1"
    with tokens_server.client() as c:
        assert c.post("/v1/embeddings", json={"input": "x", "model": "hashing-384@1"}).status_code == 401
        ok = c.post("/v1/embeddings", json={"input": "x", "model": "hashing-384@1"},
                    headers={"Authorization": "Bearer sre-token-0123456789abcdef"})
        assert ok.status_code == 200 and len(ok.json()["data"][0]["embedding"]) == 384


def test_limits_and_validation(header_server):
    with header_server.client(**{"X-Chunkwise-Groups": "sre"}) as c:
        big = c.post("/v1/embeddings", content=b'{"input": "' + b"a" * (9 * 1024 * 1024) + b'", "model": "x"}',
                     headers={"content-type": "application/json"})
        assert big.status_code == 413 and big.json()["error"]["code"] == "body_too_large"
        for bad in ({"query": ""}, {"query": "x", "k": 0}, {"query": "x", "mode": "fuzzy"}, {"query": "x", "mdoe": "bm25"},
                    {"query": "\ud800"}, {"query": "x", "budget": -1}, {"query": "   "}):
            r = c.post("/search", content=json.dumps(bad), headers={"content-type": "application/json"})
            assert r.status_code == 400, (bad, r.text)
        for body in (b"{not json", b"[1]", b'"rollback"'):  # said as what it is, not as pydantic's "0: JSON decode error"
            r = c.post("/search", content=body, headers={"content-type": "application/json"})
            error = r.json()["error"]
            assert r.status_code == 400 and error["param"] is None, (body, r.text)
            assert "send a JSON object" in error["message"] and "0:" not in error["message"], (body, r.text)


def test_health_openapi_and_headers(header_server):
    with header_server.client() as c:
        health = c.get("/health")
        spec = c.get("/openapi.json").json()
        assert c.get("/docs").status_code == 404  # swagger-ui would load from a CDN
    body = health.json()
    assert isinstance(body.pop("generation"), int)
    assert body == {"status": "ok", "version": "0.1.0", "model": "hashing-384@1", "dim": 384, "auth": "header",
                    "indexes": {"bm25": "in the store (always current)", "dense": "current"}}
    assert {"/search", "/documents/{doc_id}", "/health", "/v1/embeddings", "/v1/models", "/whoami"} <= set(spec["paths"])
    csp = health.headers["content-security-policy"]
    assert "default-src 'none'" in csp and "script-src 'self'" in csp and "unsafe" not in csp
    assert health.headers["x-content-type-options"] == "nosniff"


REVERSED = "filter: updated_after 2002-01-01 is later than updated_before 2001-01-01; the range is empty (swap them?)"


def test_search_filters_narrow_and_never_widen(header_server):
    """``filters`` (the web page's, the MCP tool's): only narrow what the caller's groups permit; a
    filter naming a hidden document finds nothing; a reversed date range, a date that is no date and
    an unknown filter are 400s."""
    def sources(groups, filters):
        with header_server.client(**{"X-Chunkwise-Groups": groups}) as c:
            r = c.post("/search", json={"query": "rollback", "mode": "bm25", "filters": filters})
        assert r.status_code == 200, r.text
        return {x["doc_id"] for x in r.json()["results"]}

    assert sources("sre,finance", None) >= {"runbook.md", "ledger.md"}
    assert sources("sre,finance", {"doc_ids": ["ledger.md"]}) == {"ledger.md"}
    assert sources("sre,finance", {"source_prefix": "run", "file_types": [".MD"]}) == {"runbook.md"}
    assert sources("sre", {"doc_ids": ["ledger.md"]}) == set()  # finance's document: no filter reveals it
    assert sources("sre,finance", {"updated_after": "2001-01-01"}) == set()  # undated documents never match a date
    with header_server.client(**{"X-Chunkwise-Groups": "sre"}) as c:
        bad = c.post("/search", json={"query": "rollback", "filters": {"updated_after": "2024-02-30"}})
        unknown = c.post("/search", json={"query": "rollback", "filters": {"groups": ["finance"]}})
        reversed_ = c.post("/search", json={"query": "rollback", "filters": {"updated_after": "2002-01-01",
                                                                             "updated_before": "2001-01-01"}})
    assert bad.status_code == 400 and "updated_after" in bad.json()["error"]["message"]
    assert unknown.status_code == 400
    assert reversed_.status_code == 400
    assert reversed_.json()["error"]["message"] == REVERSED
