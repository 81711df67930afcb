"""``chunkwise mcp`` over stdio, driven end to end by the official SDK's client."""
from __future__ import annotations

import json

import pytest
from mcp import MCPError

from .mcp_helpers import SECRET, run, stdio


def _docs(result) -> list[str]:
    return [r["doc_id"] for r in result.structured_content["results"]]


def test_tools_are_listed_with_strict_schemas_and_no_groups_argument(mcp_store):
    async def go():
        async with stdio(mcp_store, "--groups", "sre") as client:
            return {t.name: t for t in (await client.list_tools()).tools}

    tools = run(go())
    assert set(tools) == {"search", "fetch"}
    search = tools["search"].input_schema
    assert search["required"] == ["query"] and search["additionalProperties"] is False
    assert {"query", "k", "mode", "budget", "filters"} <= set(search["properties"])
    assert "groups" not in search["properties"] and "groups" not in tools["fetch"].input_schema["properties"]
    assert tools["search"].annotations.read_only_hint is True


def test_search_returns_cited_passages_of_the_callers_groups_only(mcp_store):
    async def go():
        async with stdio(mcp_store, "--groups", "sre") as client:
            return await client.call_tool("search", {"query": f"rollback {SECRET} payroll", "k": 10})

    result = run(go())
    assert not result.is_error
    hits = result.structured_content["results"]
    assert hits and "ledger.md" not in _docs(result)
    assert all(SECRET not in h["text"] for h in hits)  # mixed.md's finance section is hidden too
    first = next(h for h in hits if h["doc_id"] == "runbook.md")
    assert first["source"] == "runbook.md" and first["heading_path"][0] == "Runbook"
    assert first["citation"].startswith("runbook.md › Runbook") and f"chars {first['start_char']}-" in first["citation"]
    assert len(first["chunk_id"]) == 32 and first["chunk_id"] in first["chunk_ids"]
    assert json.loads(result.content[0].text) == result.structured_content  # the same answer as text


def test_tool_arguments_cannot_widen_the_groups(mcp_store):
    async def go():
        async with stdio(mcp_store, "--groups", "sre") as client:
            errors = []
            for extra in ({"groups": ["finance"]}, {"groups": "finance"}, {"acl": ["finance"]}):
                with pytest.raises(MCPError) as caught:
                    await client.call_tool("search", {"query": SECRET, **extra})
                errors.append(caught.value)
            with pytest.raises(MCPError):
                await client.call_tool("search", {"query": SECRET, "filters": {"groups": ["finance"]}})
            plain = await client.call_tool("search", {"query": SECRET, "k": 10})
            by_doc = await client.call_tool("search", {"query": SECRET, "filters": {"doc_ids": ["ledger.md"]}})
            return errors, plain, by_doc

    errors, plain, by_doc = run(go())
    assert all(e.error.code == -32602 for e in errors)
    assert "set by the server" in str(errors[0])
    assert all(SECRET not in h["text"] for h in plain.structured_content["results"])
    assert by_doc.structured_content["results"] == []  # a filter naming a hidden document finds nothing


def test_bad_arguments_and_unknown_tools_are_protocol_errors(mcp_store):
    bad = [("search", {}), ("search", {"query": ""}), ("search", {"query": "  "}), ("search", {"query": "x", "k": 0}),
           ("search", {"query": "x", "k": 51}), ("search", {"query": "x", "k": "five"}),
           ("search", {"query": "x", "mode": "magic"}), ("search", {"query": "x" * 4001}),
           ("search", {"query": "x", "budget": 0}), ("search", {"query": "x", "per": "page"}), ("search", {"query": "x", "filters": {"updated_after": "soon"}}),
           ("search", {"query": "x", "filters": {"updated_after": "2025-01-01", "updated_before": "2024-01-01"}}),
           ("search", {"query": "x", "filters": {"doc_ids": ["a"] * 101}}),
           ("fetch", {}), ("fetch", {"doc_id": "runbook.md", "chunk_id": "not-hex"}),
           ("fetch", {"doc_id": "runbook.md", "extra": 1}), ("delete", {"doc_id": "runbook.md"})]

    async def go():
        async with stdio(mcp_store, "--groups", "sre") as client:
            codes = []
            for tool, args in bad:
                with pytest.raises(MCPError) as caught:
                    await client.call_tool(tool, args)
                codes.append((tool, args, caught.value.error.code, caught.value.error.message))
            ok = await client.call_tool("search", {"query": "rollback"})  # the session survives them all
            return codes, ok

    codes, ok = run(go())
    assert [c for c in codes if c[2] != -32602] == []
    reversed_ = [c[3] for c in codes if c[1].get("filters", {}).get("updated_before") == "2024-01-01"]
    assert reversed_ == ["filter: updated_after 2025-01-01 is later than updated_before 2024-01-01; the range is "
                         "empty (swap them?)"]  # the library's one message, as HTTP's 400 and the library give
    assert not ok.is_error and ok.structured_content["results"]


def test_hidden_documents_are_indistinguishable_from_absent_ones(mcp_store):
    async def go():
        async with stdio(mcp_store, "--groups", "sre") as client:
            out = {}
            for doc in ("ledger.md", "no-such.md"):
                fetched = await client.call_tool("fetch", {"doc_id": doc})
                with pytest.raises(MCPError) as caught:
                    await client.read_resource(f"chunkwise://document/{doc}")
                out[doc] = (fetched.model_dump(exclude={"meta"}), caught.value.error.model_dump())
            resources = (await client.list_resources()).resources
            mixed = await client.call_tool("fetch", {"doc_id": "mixed.md"})
            return out, resources, mixed

    out, resources, mixed = run(go())
    hidden, absent = out["ledger.md"], out["no-such.md"]
    assert hidden[0] == absent[0] and hidden[0]["is_error"] is True
    assert hidden[1]["code"] == absent[1]["code"] == -32602 and hidden[1]["message"] == absent[1]["message"]
    assert [r.name for r in resources] == ["mixed.md", "new/notes.md", "old/notes.md", "plain.txt", "runbook.md"]
    assert SECRET not in mixed.content[0].text  # only the permitted records of a mixed document
    chunks = mixed.structured_content["chunks"]
    assert chunks and all("Payroll" not in c["heading_path"] for c in chunks)
    # part of it is hidden: no offsets, indices or characters in citations that would measure that part
    assert all(c["start_char"] is None and c["chunk_index"] is None and "chars" not in c["citation"] for c in chunks)
    listed = json.dumps([r.model_dump() for r in resources])
    assert SECRET not in listed and "Payroll" not in listed  # the listing names what the caller may read only


def test_fetch_and_resources_return_the_same_document_with_citations(mcp_store):
    async def go():
        async with stdio(mcp_store, "--groups", "sre") as client:
            hit = (await client.call_tool("search", {"query": "freeze on-call lead", "k": 1})).structured_content["results"][0]
            doc = await client.call_tool("fetch", {"doc_id": hit["doc_id"]})
            chunk = await client.call_tool("fetch", {"doc_id": hit["doc_id"], "chunk_id": hit["chunk_id"]})
            resource = await client.read_resource("chunkwise://document/" + hit["doc_id"])
            templates = await client.list_resource_templates()
            return hit, doc, chunk, resource, templates

    hit, doc, chunk, resource, templates = run(go())
    assert doc.structured_content["doc_id"] == hit["doc_id"] == "runbook.md"
    assert [c["chunk_id"] for c in chunk.structured_content["chunks"]] == [hit["chunk_id"]]
    assert chunk.structured_content["chunks"][0] in doc.structured_content["chunks"]
    assert json.loads(resource.contents[0].text) == doc.structured_content
    assert resource.contents[0].mime_type == "application/json"
    assert templates.resource_templates[0].uri_template == "chunkwise://document/{doc_id}"


def test_filters_narrow_by_document_folder_type_and_date(mcp_store):
    async def go(filters):
        async with stdio(mcp_store, "--groups", "sre") as client:
            out = {}
            for name, f in filters.items():
                out[name] = _docs(await client.call_tool("search", {"query": "rollback", "k": 10, "filters": f}))
            return out

    got = run(go({"none": {}, "doc": {"doc_ids": ["runbook.md"]}, "folder": {"source_prefix": "old/"},
                  "type": {"file_types": ["TXT"]}, "after": {"updated_after": "2024-01-01"},
                  "before": {"updated_before": "2024-01-01"}}))
    assert {"runbook.md", "old/notes.md", "new/notes.md", "plain.txt"} <= set(got["none"])
    assert set(got["doc"]) == {"runbook.md"}
    assert set(got["folder"]) == {"old/notes.md"}
    assert set(got["type"]) == {"plain.txt"}
    assert set(got["after"]) == {"new/notes.md"} and set(got["before"]) == {"old/notes.md"}


def test_search_can_count_documents(mcp_store):
    async def go():
        async with stdio(mcp_store, "--groups", "sre") as client:
            return await client.call_tool("search", {"query": "rollback pager", "k": 2, "per": "document"})

    result = run(go())
    assert not result.is_error and result.structured_content["per"] == "document"
    hits = result.structured_content["results"]
    assert len({h["doc_id"] for h in hits}) == 2 and hits[0]["document_rank"] == 1
    assert [h["document_rank"] for h in hits] == sorted(h["document_rank"] for h in hits)
