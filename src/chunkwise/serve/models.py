"""Request and response shapes; they are the OpenAPI spec the service publishes.

Requests forbid unknown fields (a misspelt ``"mdoe"`` is an error, not a silent default) and every
string must be valid UTF-8 (JSON can carry lone surrogates, which no store or tokenizer can take).
Responses are documented here and returned as the library's own dicts, so the spec is checked
against what is really sent (the schema fuzz validates every response).
"""
from __future__ import annotations

import datetime
from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, BeforeValidator, WithJsonSchema, ConfigDict, Field, StrictInt, create_model

from chunkwise.api import DEFAULT_PASSAGE_BUDGET


def _utf8(s: str) -> str:
    try:
        s.encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError("not valid UTF-8 (a lone surrogate)") from None
    return s


Text = Annotated[str, AfterValidator(_utf8)]
MAX_INPUTS = 2048  # the OpenAI API's own limit per request


class FilterArgs(BaseModel):
    """Narrow the results; filters never widen what the caller's groups may see."""

    model_config = ConfigDict(extra="forbid")

    doc_ids: list[Annotated[Text, Field(min_length=1, max_length=2048)]] = Field([], max_length=100, description="only passages of these documents")
    source_prefix: Annotated[Text, Field(max_length=2048)] = Field("", description="sources starting with this (a folder)")
    file_types: list[Annotated[Text, Field(min_length=1, max_length=16)]] = Field(
        [], max_length=100, description="file extensions without the dot, e.g. md, pdf")
    updated_after: datetime.date | None = Field(
        None, description="documents dated on or after this ISO date (front matter updated_at); a range whose "
                          "start is after its end is refused (400)")
    updated_before: datetime.date | None = Field(None, description="documents dated on or before this ISO date")

    def to_filters(self):
        """The library's ``Filters`` (its checks: a ConfigError, e.g. after > before)."""
        from chunkwise.retrieve.filters import Filters

        day = lambda d: d.isoformat() if d else None  # noqa: E731
        return Filters(tuple(self.doc_ids), self.source_prefix, tuple(self.file_types), day(self.updated_after),
                       day(self.updated_before))


class SearchRequest(BaseModel):
    """The parameters of ``chunkwise search`` (the store-wide ones, BM25 engine and generator
    tokenizer, are set when the server starts)."""

    model_config = ConfigDict(extra="forbid")

    query: Annotated[Text, Field(min_length=1, max_length=4000)]
    k: int = Field(5, ge=1, le=100, description="passages to return after merging")
    mode: Literal["auto", "bm25", "dense", "hybrid"] = "auto"
    expand: Literal["none", "neighbours", "parent", "page", "pages"] = "none"  # page(s): results are pages
    budget: int | None = Field(None, ge=1, le=1_000_000, description="hard cap on context tokens")
    overfetch: int = Field(3, ge=1, le=20, description="fetch k x this many hits before merging")
    passage_budget: int | None = Field(DEFAULT_PASSAGE_BUDGET, ge=1, le=1_000_000,
                                       description="tokens one merged passage may grow to around its best hit "
                                                   "(null: unbounded)")
    per: Literal["passage", "document"] = Field(
        "passage", description="what k counts: passages, or distinct documents (results grouped by document, each "
                               "document's best passage first)")
    versions: Literal["auto", "latest", "all"] = Field(
        "auto", description="auto: the latest version of a document the caller may see unless the query names a "
                            "version, a year or an earlier version; latest: always the latest; all: every version")
    filters: FilterArgs | None = Field(None, description="narrow the results (documents, folder, file types, dates)")


class SearchRequestWithGroups(SearchRequest):
    """On a server started with --insecure-groups-in-body (only there): the caller names its groups."""

    groups: list[Annotated[Text, Field(max_length=256)]] | Annotated[Text, Field(max_length=8192)] | None = Field(
        None, description="the caller's access groups (a list, or one comma-separated string); required (401 without)")


class VersionRef(BaseModel):
    """A copy of the passage's text: in ``versions`` one per document (its own first), in ``also_in``
    every identical passage collapsed into this result, with its offsets."""

    doc_id: str
    source_uri: str
    version: str
    updated_at: str
    chunk_id: str
    start_char: int | None
    end_char: int | None


class HitChunk(BaseModel):
    """The chunk a result points at: its best-ranked retrieved chunk."""

    chunk_id: str
    start_char: int
    end_char: int
    heading_path: list[str]
    page: int | None
    boxes: list[list[float]] = Field(default_factory=list, description="[page, x0, top, x1, bottom] of each block "
                                     "the chunk overlaps, in points from the page's top left (PDF; [] otherwise)")
    text: str


class Context(BaseModel):
    """The result's text before and after its hit chunk (merged hits, expansion)."""

    before: str
    after: str


class Marks(BaseModel):
    """Where the query's words are (the search analyzer's terms, no stopwords): [start, end) offsets
    into ``hit.text``, ``context.before`` and ``context.after``, for a page to mark as they are."""

    hit: list[list[int]]
    before: list[list[int]]
    after: list[list[int]]


class Result(BaseModel):
    rank: int
    document_rank: int = Field(description="the rank of the result's document among the results' documents")
    chunk_id: str
    chunk_ids: list[str]
    doc_id: str
    source_uri: str
    text: str
    score: float
    start_char: int
    end_char: int
    page: int | None
    heading_path: list[str]
    acl: list[str]
    expanded_from: list[str]
    best_chunk_id: str
    version: str
    updated_at: str
    versions: list[VersionRef]
    also_in: list[VersionRef]
    superseded_by: list[str]
    hit: HitChunk
    context: Context
    marks: Marks


class Omitted(BaseModel):
    chunk_ids: list[str]
    reason: str
    detail: str
    passage: int | None = Field(None, description="the result these chunks were cut from (null: none of it sent)")


class SearchResponse(BaseModel):
    """Exactly what ``chunkwise search --json`` prints."""

    query: str
    mode: str
    per: Literal["passage", "document"]
    terms: list[str] = Field(description="the query's terms as the search analyzer reads them, stopwords left out")
    results: list[Result]
    context_tokens: int
    omitted: list[Omitted]


class DocumentResponse(BaseModel):
    doc_id: str
    source_uri: str
    title: str
    version: str = Field(description="the document's front matter version (\"\" when none)")
    boundaries: list[list[int]] = Field(description="[start_char, end_char] of each record, in chunk order")
    records: list[dict] = Field(description="the ChunkRecords the caller may see, text included, without the "
                                            "fields derived from text it may not read (source hash, section id)")


class Health(BaseModel):
    status: Literal["ok"]
    version: str
    model: str | None = Field(description="the store's query embedder, served at /v1/embeddings")
    dim: int | None
    auth: Literal["header", "tokens", "body"] = Field(description="where callers' groups come from")
    generation: int | None = Field(description="the store's generation: grows with every change an ingest commits "
                                               "(null: not readable by this server's role)")
    indexes: dict[str, str] = Field(description="each index's state: 'in the store (always current)', or for an "
                                                "in-memory one 'current', 'stale' (rebuilt by the next search) or "
                                                "'not loaded'")


class WhoAmI(BaseModel):
    groups: list[str]
    auth: Literal["header", "tokens", "body"]


class ErrorBody(BaseModel):
    message: str
    type: str
    param: str | None = None
    code: str | None = None


class ErrorResponse(BaseModel):
    error: ErrorBody


MAX_TOKEN_ID = 100276  # cl100k_base's largest id (tiktoken's max_token_value); tests hold both to tiktoken's
UNDEFINED_TOKEN_IDS = (100256, *range(100261, 100276))  # ids below it that cl100k_base does not define
MAX_INPUT_TOKENS = 8192  # token ids in one input, OpenAI's own limit


def _integral(value):
    """JSON Schema's integer includes ``7.0``; a bool is not a token id."""
    return int(value) if isinstance(value, float) and value.is_integer() else value


TokenId = Annotated[StrictInt, BeforeValidator(_integral), Field(ge=0, le=MAX_TOKEN_ID),
                    WithJsonSchema({"type": "integer", "minimum": 0, "maximum": MAX_TOKEN_ID,
                                    "not": {"enum": list(UNDEFINED_TOKEN_IDS)}})]
TokenIds = Annotated[list[TokenId], Field(min_length=1, max_length=MAX_INPUT_TOKENS)]


class EmbeddingRequest(BaseModel):
    """OpenAI's /v1/embeddings request. ``input``: a string, a list of strings, one array of token
    ids or a list of them. Token ids are cl100k_base's (what OpenAI's clients, LangChain's
    ``OpenAIEmbeddings`` among them, send): the server decodes them to text and embeds that text with
    its own model."""

    model_config = ConfigDict(extra="forbid")

    input: (Annotated[Text, Field(min_length=1)]
            | Annotated[list[Annotated[Text, Field(min_length=1)]], Field(min_length=1, max_length=MAX_INPUTS)]
            | TokenIds
            | Annotated[list[TokenIds], Field(min_length=1, max_length=MAX_INPUTS)])
    model: Text
    encoding_format: Literal["float", "base64"] = "float"
    dimensions: StrictInt | None = Field(None, ge=1)
    user: Text | None = None


def embedding_request(model: str | None, dim: int | None) -> type[EmbeddingRequest]:
    """The request as this server takes it: ``dimensions``, when given, can only be the model's own."""
    if dim is None:
        return EmbeddingRequest
    return create_model("EmbeddingRequest", __base__=EmbeddingRequest, __doc__=EmbeddingRequest.__doc__,
                        dimensions=(StrictInt | None, Field(None, ge=dim, le=dim, description=f"{model} gives {dim} only")))


class Embedding(BaseModel):
    object: Literal["embedding"]
    index: int
    embedding: list[float] | str = Field(description="floats, or base64 of little-endian float32")


class Usage(BaseModel):
    prompt_tokens: int
    total_tokens: int


class EmbeddingResponse(BaseModel):
    object: Literal["list"]
    data: list[Embedding]
    model: str
    usage: Usage


class Model(BaseModel):
    id: str
    object: Literal["model"]
    created: int
    owned_by: str


class ModelList(BaseModel):
    object: Literal["list"]
    data: list[Model]
