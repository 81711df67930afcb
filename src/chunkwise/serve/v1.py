"""The OpenAI-compatible routes: ``POST /v1/embeddings``, ``GET /v1/models``, ``GET /v1/models/{id}``.

The body is validated here (``openai.parse``), not by the framework, so a malformed request gets a
message that names the field in OpenAI's words rather than a validator's trace; the published spec
still comes from the one request model. Callers need what the server's group policy asks of any
client (a bearer token under ``--tokens``), though embeddings read no store content.
"""
from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

import chunkwise.serve.models as m
import chunkwise.serve.openai as openai
from chunkwise.serve.auth import GroupSource
from chunkwise.serve.cost import heavy_embedding
from chunkwise.serve.engine import Engine


def _responses(ok: type, *statuses: int) -> dict:
    return {200: {"model": ok}, **{s: {"model": m.ErrorResponse} for s in statuses}}


def router(engine: Engine, auth: GroupSource, aliases: tuple[str, ...] = ()) -> APIRouter:
    routes = APIRouter(tags=["openai"])
    request_model = m.embedding_request(engine.model, engine.dim)
    body = {"requestBody": {"required": True, "content": {"application/json": {
        "schema": request_model.model_json_schema(ref_template="#/components/schemas/{model}")}}}}

    @routes.post("/v1/embeddings", response_model=None, openapi_extra=body,
                 responses=_responses(m.EmbeddingResponse, 400, 401, 404, 413))
    async def embeddings(request: Request) -> Any:
        """OpenAI-compatible embeddings with the store's query model (text or cl100k_base token ids)."""
        auth.check_client(request.headers)
        call = openai.parse(openai.read_body(await request.body()), request_model)
        openai.check_request(engine.model, engine.dim, call.model, call.dimensions, aliases)

        def run() -> dict:
            texts = openai.texts(call)
            counts = engine.count_tokens(texts)
            openai.check_lengths(counts, engine.embedder.max_tokens, engine.model)
            return openai.response(engine.embed(texts), counts, engine.model, call.encoding_format)

        return JSONResponse(await engine.call(run, heavy=heavy_embedding(len(call.inputs))))

    @routes.get("/v1/models", response_model=m.ModelList, responses=_responses(m.ModelList, 401))
    async def models(request: Request) -> dict:
        """The one model served (OpenAI's list format)."""
        auth.check_client(request.headers)
        return openai.model_list(engine.model, aliases)

    @routes.get("/v1/models/{model_id:path}", response_model=m.Model, responses=_responses(m.Model, 401, 404))
    async def model(model_id: str, request: Request) -> dict:
        """The served model, by its name with or without ``@version`` (any other name: 404)."""
        auth.check_client(request.headers)
        return openai.find_model(engine.model, model_id, aliases)

    return routes
