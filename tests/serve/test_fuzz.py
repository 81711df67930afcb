"""Schema-based fuzz: schemathesis generates requests from the served OpenAPI spec and sends them to a
real server; no request may give a 5xx, and every response must match the spec (status, content
type, body schema), for valid requests and for invalid ones. Bounded example counts keep it well
under a minute. (schemathesis' own pytest loader does not work with pytest 9, so its strategies are
driven with hypothesis directly.)"""
from __future__ import annotations

import pytest

schemathesis = pytest.importorskip("schemathesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from schemathesis import GenerationMode  # noqa: E402

OPERATIONS = [("POST", "/search"), ("GET", "/documents/{doc_id}"), ("POST", "/v1/embeddings"), ("GET", "/v1/models"),
              ("GET", "/v1/models/{model_id}"), ("GET", "/health"), ("GET", "/whoami")]
CALLER = {"X-Chunkwise-Groups": "sre,finance"}  # what the gateway adds, so requests reach the store


@pytest.fixture(scope="module")
def api_schema(header_server):
    return schemathesis.openapi.from_url(header_server.url + "/openapi.json")


def test_the_spec_lists_every_operation(api_schema):
    found = {(op.ok().method.upper(), op.ok().path) for op in api_schema.get_all_operations()}
    assert found == set(OPERATIONS)


def _in_order(body) -> None:
    """A date range whose ends are reversed is refused (400, every entry point: retrieve/filters.py);
    JSON Schema cannot say one field must not be later than another, so a generated "valid" body may
    hold one. Put its ends in order, so what a positive case checks is everything else."""
    from chunkwise.errors import ConfigError
    from chunkwise.retrieve.filters import Filters

    filters = body.get("filters") if isinstance(body, dict) else None
    if not isinstance(filters, dict) or not filters.get("updated_after") or not filters.get("updated_before"):
        return
    try:
        Filters(updated_after=filters["updated_after"], updated_before=filters["updated_before"])
    except ConfigError as exc:
        if "later than" in str(exc):
            filters["updated_after"], filters["updated_before"] = filters["updated_before"], filters["updated_after"]


CASES = [(m, p, GenerationMode.POSITIVE, 30) for m, p in OPERATIONS] + [
    (m, p, GenerationMode.NEGATIVE, 20) for m, p in OPERATIONS if m == "POST"]  # only bodies can be made invalid


@pytest.mark.parametrize("method, path, mode, examples", CASES, ids=[f"{m} {p} {g.value}" for m, p, g, _ in CASES])
def test_no_5xx_and_responses_match_the_spec(api_schema, header_server, method, path, mode, examples):
    operation = api_schema[path][method]
    seen = []

    @given(case=operation.as_strategy(generation_mode=mode))
    @settings(max_examples=examples, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    def run(case):
        if path == "/v1/embeddings" and isinstance(case.body, dict) and "model" in case.body:
            case.body["model"] = "hashing-384@1"  # the served model (other names: test_api), so vectors get made
        if path == "/search" and mode is GenerationMode.POSITIVE:
            _in_order(case.body)
        if mode is GenerationMode.POSITIVE:
            response = case.call_and_validate(base_url=header_server.url, headers=CALLER)
        else:
            response = case.call(base_url=header_server.url, headers=CALLER)
            assert response.status_code < 500, response.text
        seen.append(response.status_code)

    run()
    assert seen, "no request was sent"
    if mode is GenerationMode.POSITIVE and path in ("/search", "/v1/embeddings", "/health"):
        assert 200 in seen, f"no valid request to {path} succeeded: {sorted(set(seen))}"
