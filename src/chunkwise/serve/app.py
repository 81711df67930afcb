"""The HTTP service: routes over one long-lived Retriever (see engine.py) and the web page.

Errors are one JSON shape everywhere, OpenAI's: ``{"error": {"message", "type", "param", "code"}}``
(400 malformed, 401 no credentials, 403 no groups, 404, 413). A document the caller may see nothing
of gives the very same 404 as one that does not exist.
"""
from importlib.resources import files
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from starlette.exceptions import HTTPException

from chunkwise import api
import chunkwise.serve.models as m
import chunkwise.serve.openai as openai
from chunkwise.serve.auth import AuthError, GroupSource
from chunkwise.errors import StoreLost
from chunkwise.serve.engine import Busy, Engine, QueryTimeout
from chunkwise.serve.fast import FastSearch, run_search
from chunkwise.serve.hosts import LOOPBACK_NAMES
from chunkwise.serve.middleware import Guard
from chunkwise.serve import v1

MAX_BODY = 8 * 1024 * 1024
NOT_FOUND = {"error": {"message": "no such document", "type": "not_found", "param": None, "code": "document_not_found"}}
STATIC = {"app.js": "text/javascript; charset=utf-8", "app.css": "text/css; charset=utf-8",
          "favicon.svg": "image/svg+xml", "filters.js": "text/javascript; charset=utf-8"}


def _error(status: int, message: str, type_: str, code: str | None = None, param: str | None = None,
           headers: dict | None = None) -> JSONResponse:
    return JSONResponse({"error": {"message": message, "type": type_, "param": param, "code": code}},
                        status_code=status, headers=headers)


def _errors(*statuses: int) -> dict:
    text = {400: "malformed request", 401: "no or unknown credentials", 403: "the caller has no access group",
            404: "not found", 413: "request body too large", 503: "the search ran past its time limit, the server is busy, or the store is unreachable"}
    return {s: {"model": m.ErrorResponse, "description": text[s]} for s in statuses}


def create_app(engine: Engine, auth: GroupSource, *, max_body: int = MAX_BODY, model_aliases: tuple[str, ...] = (),
               hosts: frozenset[str] = frozenset(LOOPBACK_NAMES), body_seconds: float = 30.0):
    """The ASGI application (FastAPI inside the Host/body-limit/security-header guard); ``hosts``:
    the Host names it answers to (``chunkwise.serve.hosts.allowed_hosts``)."""
    app = FastAPI(title="chunkwise", version=_version(), docs_url=None, redoc_url=None,
                  description="Search a chunkwise store with the caller's access groups; OpenAI-compatible "
                              "embeddings with the store's model.")
    search_request = m.SearchRequestWithGroups if auth.name == "body" else m.SearchRequest
    page = {name: files("chunkwise.serve").joinpath("static", name).read_bytes() for name in (*STATIC, "index.html")}

    @app.exception_handler(AuthError)
    async def _auth(_request, exc: AuthError):
        headers = {"WWW-Authenticate": 'Bearer realm="chunkwise"'} if exc.bearer else None
        return _error(exc.status, exc.message, "authentication_error" if exc.status == 401 else
                      "permission_error" if exc.status == 403 else "invalid_request_error", exc.code, headers=headers)

    @app.exception_handler(RequestValidationError)
    async def _invalid(_request, exc: RequestValidationError):
        first = exc.errors()[0] if exc.errors() else {"loc": (), "msg": "invalid request"}
        loc = [str(x) for x in first.get("loc", ()) if x != "body"]
        param = ".".join(loc) or None
        if first.get("type") == "extra_forbidden" and loc == ["groups"]:
            return _error(400, "\"groups\" in the body are not accepted by this server (its groups come from the "
                               "gateway header or the bearer token); leave the field out", "invalid_request_error",
                          "groups_in_body", "groups")
        if first.get("type") == "json_invalid" or not loc:  # pydantic would say "0: JSON decode error"
            return _error(400, "the request body is not a JSON object: send a JSON object (Content-Type: "
                               "application/json)", "invalid_request_error", "invalid_request")
        return _error(400, f"{param + ': ' if param else ''}{first.get('msg', 'invalid')}", "invalid_request_error",
                      "invalid_request", param)

    @app.exception_handler(HTTPException)
    async def _http(_request, exc: HTTPException):
        return _error(exc.status_code, str(exc.detail), "not_found" if exc.status_code == 404 else "invalid_request_error",
                      headers=getattr(exc, "headers", None))

    @app.exception_handler(api.ConfigError)
    async def _library(_request, exc: api.ConfigError):
        # what the library refuses for a request (a mode the store cannot serve, a bad tag) is the caller's to fix
        return _error(400, str(exc), "invalid_request_error", "invalid_request")

    @app.exception_handler(QueryTimeout)
    async def _timeout(_request, exc: QueryTimeout):
        return _error(503, str(exc), "server_error", "query_timeout")

    @app.exception_handler(StoreLost)
    async def _lost(_request, exc: StoreLost):
        return _error(503, str(exc), "server_error", "store_unreachable", headers={"Retry-After": "1"})

    @app.exception_handler(Busy)
    async def _busy(_request, exc: Busy):
        return _error(503, str(exc), "server_error", "busy", headers={"Retry-After": "1"})

    @app.exception_handler(openai.EmbeddingError)
    async def _embedding(_request, exc: openai.EmbeddingError):
        return _error(exc.status, exc.message, "invalid_request_error", exc.code, exc.param)

    @app.get("/health", response_model=m.Health, tags=["service"])
    async def health() -> dict:
        """Liveness and what is served (no credentials needed): the store's generation (it grows with
        every ingest commit) and whether each index is current with it."""
        return {"status": "ok", "version": _version(), "model": engine.model, "dim": engine.dim, "auth": auth.name,
                **(await engine.status())}

    @app.get("/whoami", response_model=m.WhoAmI, responses=_errors(400, 401, 403), tags=["search"])
    async def whoami(request: Request) -> dict:
        """The groups this request is served as (what the page shows next to the results)."""
        return {"groups": list(auth.groups(request.headers, None)), "auth": auth.name}

    @app.post("/search", response_model=None, responses={200: {"model": m.SearchResponse}, **_errors(400, 401, 403, 413, 503)},
              tags=["search"])
    async def search(body: search_request, request: Request) -> Any:
        """Same parameters and JSON as ``chunkwise search --json``; only what the caller's groups may
        see is ranked (the filter runs inside the query)."""
        groups = auth.groups(request.headers, getattr(body, "groups", None))
        return JSONResponse(await run_search(engine, body, groups))

    @app.get("/documents/{doc_id:path}", response_model=None,
             responses={200: {"model": m.DocumentResponse}, **_errors(400, 401, 403, 404, 503)}, tags=["search"])
    async def document(doc_id: str, request: Request) -> Any:
        """The records (and chunk boundaries) of one document that the caller may see."""
        groups = auth.groups(request.headers, None)
        found = await engine.call(engine.document, doc_id, groups) if _utf8(doc_id) else None
        return JSONResponse(found) if found is not None else JSONResponse(NOT_FOUND, status_code=404)

    app.include_router(v1.router(engine, auth, model_aliases))

    @app.api_route("/", methods=["GET", "HEAD"], include_in_schema=False)
    async def index() -> Response:
        return Response(page["index.html"], media_type="text/html; charset=utf-8")

    @app.get("/static/{name}", include_in_schema=False)
    async def static(name: str) -> Response:
        if name not in STATIC:
            return _error(404, "not found", "not_found")
        return Response(page[name], media_type=STATIC[name], headers={"cache-control": "no-cache"})

    # Well-formed searches skip the framework's layers (fast.py); everything else is the app's.
    return Guard(FastSearch(app, engine, auth, search_request, _error), max_body, hosts, body_seconds)


def _utf8(s: str) -> bool:
    try:
        s.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _version() -> str:
    import chunkwise

    return chunkwise.__version__
