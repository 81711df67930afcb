"""``POST /search`` without the framework's per-request layers, for the requests that need none of them.

A search through FastAPI passes a dozen ASGI layers (exception middleware, routing, dependency
solving, a Request object, body re-parsing, the response class); for a search that matches
nothing they were about a fifth of the server's py-spy samples (benchmarks/serve.py, "bm25, no
match"), paid on top of the search by every caller (issue 26 item 4). A well-formed search from a
permitted caller needs none of that: its body is validated by the same pydantic model, its groups
come from the same policy, the search runs on the same engine lane, and the answer is the bytes
``JSONResponse`` would send. Anything else — a body the model refuses, a content type other than
JSON, a caller the policy refuses — is handed to the framework untouched, which answers exactly as
before (its error shapes, its messages), so nothing a client can observe changes but the cost.
"""
from __future__ import annotations

import json
from typing import Any, Awaitable, Callable

from starlette.datastructures import Headers

from chunkwise import api
from chunkwise.serve.auth import GroupSource
from chunkwise.serve.cost import heavy_search
from chunkwise.errors import StoreLost
from chunkwise.serve.engine import Busy, Engine, QueryTimeout

JSON_TYPES = (b"application/json",)


def render(content: Any) -> bytes:
    """What starlette's JSONResponse sends for ``content`` (same separators, UTF-8, no NaN)."""
    return json.dumps(content, ensure_ascii=False, allow_nan=False, indent=None, separators=(",", ":")).encode("utf-8")


async def run_search(engine: Engine, req: Any, groups) -> Any:
    """The one search call behind ``POST /search``, whichever path the request took: its lane
    (light or heavy, predicted from the request) and the engine's search with the request's fields."""
    heavy = heavy_search(req.query, k=req.k, overfetch=req.overfetch, expand=req.expand,
                         passage_budget=req.passage_budget)
    return await engine.call(engine.search, req.query, groups, heavy=heavy, k=req.k, mode=req.mode,
                             expand=req.expand, budget=req.budget, overfetch=req.overfetch,
                             passage_budget=req.passage_budget, versions=req.versions, per=req.per,
                             filters=req.filters.to_filters() if req.filters else None)


class FastSearch:
    def __init__(self, app, engine: Engine, auth: GroupSource, request_model,
                 error: Callable[..., Any]) -> None:
        """``app``: the framework's app (it answers everything this does not); ``error``: the app's
        error-response builder (``app._error``), so refusals from the engine keep their shape."""
        self.app = app
        self.engine = engine
        self.auth = auth
        self.model = request_model
        self.error = error

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http" or scope["path"] != "/search" or scope["method"] != "POST":
            return await self.app(scope, receive, send)
        parts, more = [], True
        while more:  # behind the Guard the whole body comes in one message, already size-checked
            message = await receive()
            if message["type"] != "http.request":
                return None  # the client left
            parts.append(message.get("body", b""))
            more = message.get("more_body", False)
        body = b"".join(parts)
        given = [False]

        async def replay() -> dict:
            if not given[0]:
                given[0] = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        headers = Headers(scope=scope)
        if headers.get("content-type", "").split(";")[0].strip().lower().encode() not in JSON_TYPES:
            return await self.app(scope, replay, send)
        try:
            req = self.model.model_validate_json(body)
            groups = self.auth.groups(headers, getattr(req, "groups", None))
        except Exception:  # refused: the framework answers (validation and auth errors as ever)
            return await self.app(scope, replay, send)
        try:
            found = await run_search(self.engine, req, groups)
        except QueryTimeout as exc:
            return await self.error(503, str(exc), "server_error", "query_timeout")(scope, receive, send)
        except StoreLost as exc:
            return await self.error(503, str(exc), "server_error", "store_unreachable",
                                    headers={"Retry-After": "1"})(scope, receive, send)
        except Busy as exc:
            return await self.error(503, str(exc), "server_error", "busy",
                                    headers={"Retry-After": "1"})(scope, receive, send)
        except api.ConfigError as exc:
            return await self.error(400, str(exc), "invalid_request_error", "invalid_request")(scope, receive, send)
        await _send_json(send, render(found))


async def _send_json(send: Callable[[dict], Awaitable[None]], data: bytes) -> None:
    await send({"type": "http.response.start", "status": 200,
                "headers": [(b"content-length", str(len(data)).encode()), (b"content-type", b"application/json")]})
    await send({"type": "http.response.body", "body": data})
