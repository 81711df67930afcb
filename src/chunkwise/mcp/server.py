"""The MCP server: the SDK's low-level ``Server`` with chunkwise's tools and resources.

Every handler first asks ``groups_of(ctx)`` who the caller is (the server's fixed groups, or what
the HTTP transport authenticated); no argument can name or widen them. Bad tool arguments and an
unknown tool are protocol errors (JSON-RPC -32602); a document or chunk the caller may not see is
answered exactly as one that does not exist.
"""
from __future__ import annotations

import base64
from typing import Any
from urllib.parse import quote, unquote

import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.shared.exceptions import MCPError

from chunkwise.errors import ConfigError
from chunkwise.mcp import tools

URI_PREFIX = "chunkwise://document/"
SCOPE_KEY = "chunkwise.groups"  # where the HTTP transport's authentication leaves the caller's groups
PAGE = 100  # documents per resources/list page


def document_uri(doc_id: str) -> str:
    return URI_PREFIX + quote(doc_id, safe="")


def _invalid(message: str, data: Any = None) -> MCPError:
    return MCPError(code=types.INVALID_PARAMS, message=message, data=data)


def _doc_id(uri: str) -> str | None:
    if not uri.startswith(URI_PREFIX):
        return None
    try:
        doc_id = unquote(uri[len(URI_PREFIX):], errors="strict")
    except UnicodeError:
        return None
    return doc_id or None


def _cursor(after: str) -> str:
    return base64.urlsafe_b64encode(after.encode("utf-8", "surrogatepass")).decode("ascii")


def _after(cursor: str | None) -> str | None:
    if cursor is None:
        return None
    try:
        return base64.urlsafe_b64decode(cursor.encode("ascii")).decode("utf-8")
    except (ValueError, UnicodeError):
        raise _invalid("cursor: not one this server gave") from None


def _result(answer: Any) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=tools.dumps(answer))],
                                structured_content=answer)


def request_groups(ctx: Any) -> tuple[str, ...] | None:
    """The groups the HTTP transport authenticated for the request behind ``ctx`` (None: none)."""
    scope = getattr(getattr(ctx, "request", None), "scope", None)
    return scope.get(SCOPE_KEY) if isinstance(scope, dict) else None


def build_server(engine, fixed_groups: tuple[str, ...] | None = None, *, name: str = "chunkwise") -> Server:
    """The server over ``engine`` (``chunkwise.serve.engine.Engine``: one thread owns the store).
    ``fixed_groups``: every caller's groups; None: each request's, from the HTTP transport."""

    def groups_of(ctx) -> tuple[str, ...]:
        found = fixed_groups if fixed_groups is not None else request_groups(ctx)
        if not found:  # Authenticate lets no such request through; fail closed all the same
            raise _invalid("no caller groups: the request was not authenticated")
        return found

    async def list_tools(ctx, params) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[
            types.Tool(name=tool, description=text, input_schema=tools.input_schema(tool),
                       annotations=types.ToolAnnotations(read_only_hint=True, open_world_hint=False))
            for tool, (_, text) in tools.TOOLS.items()])

    async def call_tool(ctx, params) -> types.CallToolResult:
        groups = groups_of(ctx)
        try:
            args = tools.parse(params.name, params.arguments)
            if params.name == "search":
                options = tools.search_options(args)
        except tools.ArgumentError as exc:
            raise _invalid(str(exc)) from None
        if params.name == "search":
            try:
                found = await engine.call(engine.search, args.query, groups, **options)
            except ConfigError as exc:  # what the store cannot serve (dense without vectors): the caller's to fix
                raise _invalid(str(exc)) from None
            return _result(tools.search_answer(found))
        document = await engine.call(engine.document, args.doc_id, groups)
        answer = tools.fetch_answer(document, args.chunk_id)
        if answer is None:
            return types.CallToolResult(content=[types.TextContent(type="text", text=tools.NOT_FOUND)], is_error=True)
        return _result(answer)

    async def list_resources(ctx, params) -> types.ListResourcesResult:
        groups = groups_of(ctx)
        after = _after(params.cursor if params is not None else None)
        entries, more = await engine.call(engine.documents, groups, after=after, limit=PAGE)
        resources = [types.Resource(uri=document_uri(e.doc_id), name=e.doc_id, title=e.title or e.source_uri,
                                    description=e.source_uri, mime_type="application/json")
                     for e in entries]
        return types.ListResourcesResult(resources=resources,
                                         next_cursor=_cursor(entries[-1].doc_id) if more and entries else None)

    async def list_templates(ctx, params) -> types.ListResourceTemplatesResult:
        groups_of(ctx)
        return types.ListResourceTemplatesResult(resource_templates=[types.ResourceTemplate(
            uri_template=URI_PREFIX + "{doc_id}", name="document", mime_type="application/json",
            description="A document's chunks the caller may see, with citations (doc_id percent-encoded)")])

    async def read_resource(ctx, params) -> types.ReadResourceResult:
        groups = groups_of(ctx)
        uri = str(params.uri)
        doc_id = _doc_id(uri)
        answer = None
        if doc_id is not None and len(doc_id) <= 2048:
            answer = tools.fetch_answer(await engine.call(engine.document, doc_id, groups), None)
        if answer is None:
            raise _invalid("resource not found", {"uri": uri})
        return types.ReadResourceResult(contents=[types.TextResourceContents(
            uri=uri, text=tools.dumps(answer), mime_type="application/json")])

    return Server(name, version=_version(), instructions=(
        "Search and read the documents indexed by chunkwise. Every answer is limited to what the caller's "
        "access groups may read; cite passages with their 'citation' field."),
        on_list_tools=list_tools, on_call_tool=call_tool, on_list_resources=list_resources,
        on_list_resource_templates=list_templates, on_read_resource=read_resource)


def _version() -> str:
    import chunkwise

    return chunkwise.__version__
