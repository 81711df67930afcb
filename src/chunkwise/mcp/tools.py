"""The MCP tools' arguments and answers, without the protocol: what ``search`` and ``fetch`` take
(strict models: an unknown field such as ``groups`` is refused, never ignored) and the citations
they return. The query length limit is the HTTP service's (``chunkwise serve``).
"""
from __future__ import annotations

import json
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from chunkwise.errors import ConfigError
from chunkwise.serve.models import FilterArgs, Text  # Text: a str that must be valid UTF-8 (no lone surrogates)

MAX_QUERY = 4000
MAX_K = 50


Id = Annotated[Text, Field(min_length=1, max_length=2048)]


class SearchArgs(BaseModel):
    """Search the store with the caller's access groups (fixed by the server, not an argument)."""

    model_config = ConfigDict(extra="forbid")

    query: Annotated[Text, Field(min_length=1, max_length=MAX_QUERY)]
    k: int = Field(5, ge=1, le=MAX_K, description="passages to return")
    mode: Literal["auto", "bm25", "dense", "hybrid"] = Field("auto", description="auto: hybrid when the store has vectors")
    budget: int | None = Field(None, ge=1, le=100_000, description="hard cap on the tokens of all passages together")
    expand: Literal["none", "neighbours", "parent"] = Field("none", description="grow each hit with its neighbours or section")
    per: Literal["passage", "document"] = Field(
        "passage", description="what k counts: passages, or distinct documents (results grouped by document, "
                               "each document's best passage first)")
    filters: FilterArgs | None = None


class FetchArgs(BaseModel):
    """A document (all of it the caller may see) or one chunk of it, by the ids ``search`` returns."""

    model_config = ConfigDict(extra="forbid")

    doc_id: Id
    chunk_id: Annotated[str, Field(pattern=r"^[0-9a-f]{32}$")] | None = Field(
        None, description="one chunk of the document (a chunk_id from search); omit for the whole document")


TOOLS = {
    "search": (SearchArgs, "Search the indexed documents. Returns passages with citations (document, source, heading "
                           "path, page, character offsets). Only what the caller's access groups may read is searched."),
    "fetch": (FetchArgs, "Fetch a document, or one chunk of it, by the doc_id and chunk_id that search returns: its "
                         "text with citations. Only what the caller's access groups may read is returned."),
}
NOT_FOUND = "not found: no such document or chunk"  # the same words whether it is absent or hidden


class ArgumentError(ValueError):
    """Tool arguments that do not fit the tool's schema (a protocol error, not a tool result)."""


def parse(tool: str, arguments: dict | None) -> BaseModel:
    """The validated arguments of ``tool``; ArgumentError names the first bad field."""
    if tool not in TOOLS:
        raise ArgumentError(f"unknown tool {tool!r}; tools: {', '.join(TOOLS)}")
    model = TOOLS[tool][0]
    try:
        return model.model_validate(arguments or {})
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first.get("loc", ())) or "arguments"
        if first.get("type") == "extra_forbidden" and where == "groups":
            raise ArgumentError("groups: not an argument; the caller's groups are set by the server "
                                "(--groups, or the bearer token)") from None
        raise ArgumentError(f"{where}: {first.get('msg', 'invalid')}") from None


def input_schema(tool: str) -> dict:
    return TOOLS[tool][0].model_json_schema()


def search_options(args: SearchArgs) -> dict[str, Any]:
    """The Retriever.search keywords for ``args`` (a bad filter value is an ArgumentError)."""
    options: dict[str, Any] = {"k": args.k, "mode": args.mode, "budget": args.budget, "expand": args.expand,
                               "per": args.per}
    if args.filters is not None:
        try:  # the library's checks (a reversed date range included), as for every entry point
            options["filters"] = args.filters.to_filters()
        except ConfigError as exc:
            raise ArgumentError(str(exc)) from None
    return options


def citation(source: str, heading_path, page, start: int | None, end: int | None) -> str:
    """``runbook.md › Runbook › Rollback, p. 3, chars 120-480``: one line a reader can check (no
    characters when the positions are withheld: the caller may not read all of the document)."""
    parts = " › ".join([source or "(unnamed)", *heading_path])
    chars = f", chars {start}-{end}" if start is not None and end is not None else ""
    return f"{parts}{f', p. {page}' if page is not None else ''}{chars}"


def search_answer(result: dict) -> dict:
    """``SearchResult.to_dict()`` as the tool's answer: each passage with its citation and the hit
    chunk it points at (heading path, offsets, text)."""
    results = [{"rank": r["rank"], "document_rank": r["document_rank"], "doc_id": r["doc_id"], "chunk_id": r["best_chunk_id"], "chunk_ids": r["chunk_ids"],
                "source": r["source_uri"], "heading_path": r["heading_path"], "page": r["page"],
                "start_char": r["start_char"], "end_char": r["end_char"], "score": r["score"],
                "version": r["version"], "updated_at": r["updated_at"],
                "citation": citation(r["source_uri"], r["heading_path"], r["page"], r["start_char"], r["end_char"]),
                "text": r["text"], "hit": r["hit"]} for r in result["results"]]
    return {"query": result["query"], "mode": result["mode"], "per": result["per"], "results": results,
            "context_tokens": result["context_tokens"],
            "omitted": [{"chunk_ids": o["chunk_ids"], "reason": o["reason"]} for o in result["omitted"]]}


def _chunk(record: dict) -> dict:
    return {"chunk_id": record["chunk_id"], "chunk_index": record["chunk_index"],
            "heading_path": list(record.get("heading_path") or ()), "page": record.get("page"),
            "boxes": list(record.get("boxes") or ()), "start_char": record["start_char"], "end_char": record["end_char"],
            "citation": citation(record.get("source_uri", ""), record.get("heading_path") or (), record.get("page"),
                                 record["start_char"], record["end_char"]),
            "text": record["text"]}


def fetch_answer(document: dict | None, chunk_id: str | None) -> dict | None:
    """``VisibleDocument.to_dict()`` (or None) as the tool's answer: the document's visible chunks,
    or the one asked for; None when there is nothing the caller may see."""
    if document is None:
        return None
    chunks = [_chunk(r) for r in document["records"] if chunk_id is None or r["chunk_id"] == chunk_id]
    if not chunks:
        return None
    return {"doc_id": document["doc_id"], "source": document["source_uri"], "title": document["title"],
            "version": document["version"], "chunks": chunks}


def dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, indent=1)
