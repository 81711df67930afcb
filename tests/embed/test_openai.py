"""The OpenAI-compatible HTTP embedder over real HTTP on loopback.

Wire behaviour the real ``chunkwise serve`` cannot be made to show (429s, 5xx, malformed answers)
is driven by a small standard-library server here; tests/embed/test_openai_serve.py runs the
embedder against ``chunkwise serve``'s own /v1/embeddings."""
import base64
import json
import struct
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from chunkwise.embed import make_embedder
from chunkwise.embed.openai import KEY_ENV, EmbeddingServiceError, OpenAIEmbedder
from chunkwise.errors import ConfigError


class Fake:
    """Answers POST /v1/embeddings from a script of (status, body|None, headers); None = a valid answer."""

    def __init__(self) -> None:
        self.script: list = []
        self.requests: list[dict] = []
        self.headers: list[dict] = []
        self.fmt = None  # force the answer's format ("float"/"base64"); None = as asked
        self.shuffle = False

    def answer(self, body: dict):
        fmt = self.fmt or body.get("encoding_format", "float")
        data = []
        for i, text in enumerate(body["input"]):
            vec = [float(len(text)), float(i), 0.5]
            emb = base64.b64encode(struct.pack("<3f", *vec)).decode() if fmt == "base64" else vec
            data.append({"object": "embedding", "index": i, "embedding": emb})
        if self.shuffle:
            data.reverse()
        return {"object": "list", "data": data, "model": body["model"], "usage": {"prompt_tokens": 1, "total_tokens": 1}}


@pytest.fixture()
def fake():
    state = Fake()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *a):
            pass

        def do_POST(self):
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            state.requests.append(body)
            state.headers.append(dict(self.headers))
            status, payload, headers = state.script.pop(0) if state.script else (200, None, {})
            raw = json.dumps(state.answer(body) if payload is None else payload).encode() \
                if not isinstance(payload, bytes) else payload
            self.send_response(status)
            for k, v in headers.items():
                self.send_header(k, v)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(raw)))
            self.end_headers()
            self.wfile.write(raw)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    state.url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    yield state
    server.shutdown()
    server.server_close()
    thread.join(5)


def embedder(fake, **kw):
    sleeps = []
    e = OpenAIEmbedder(fake.url, "test-model", sleep=sleeps.append, **kw)
    return e, sleeps


def test_names_and_configuration():
    e = make_embedder("openai:http://127.0.0.1:9/v1", model="m-1")
    assert e.name == "openai:http://127.0.0.1:9/v1#m-1" and e.endpoint == "http://127.0.0.1:9/v1/embeddings"
    assert make_embedder(e.name).name == e.name  # the stored name resolves back (search uses it)
    assert make_embedder("OpenAI:http://h/V1/embeddings", model="M").endpoint == "http://h/V1/embeddings"
    for bad, msg in [(("openai:http://h/v1",), "--model"), (("openai:ftp://h",), "http"),
                     (("openai:http://user:pw@h/v1",), "credentials"), (("hashing",), "openai:URL embedder only")]:
        with pytest.raises(ConfigError, match=msg):
            make_embedder(*bad, model=None if bad[0] == "openai:http://h/v1" else "m")
    with pytest.raises(ConfigError, match="names model"):
        make_embedder("openai:http://h/v1#a", model="b")
    with pytest.raises(ConfigError):
        OpenAIEmbedder("http://h/v1", "m", batch_size=5000)


@pytest.mark.parametrize("fmt", ["float", "base64"])
def test_sends_encoding_format_and_reads_either_answer(fake, fmt):
    e, _ = embedder(fake, encoding_format=fmt)
    for answer in ("float", "base64"):
        fake.fmt = answer
        assert e.embed(["ab", "abcd"]) == [[2.0, 0.0, 0.5], [4.0, 1.0, 0.5]]
    assert all(r["encoding_format"] == fmt and r["model"] == "test-model" for r in fake.requests)
    assert e.dim == 3


def test_results_follow_index_not_answer_order(fake):
    fake.shuffle = True
    e, _ = embedder(fake)
    assert [v[1] for v in e.embed(["a", "b", "c"])] == [0.0, 1.0, 2.0]


def test_batches_by_count_and_characters(fake):
    e, _ = embedder(fake, batch_size=4, max_request_chars=10)
    texts = ["xxx"] * 9 + ["y" * 25, "z"]
    out = e.embed(texts)
    assert [len(r["input"]) for r in fake.requests] == [3, 3, 3, 1, 1]  # 3 x 3 chars <= 10; a long text alone
    assert [v[0] for v in out] == [float(len(t)) for t in texts]
    fake.requests.clear()
    e2, _ = embedder(fake, batch_size=256)
    e2.embed([f"t{i}" for i in range(600)])
    assert [len(r["input"]) for r in fake.requests] == [256, 256, 88]
    assert e2.embed([]) == []


def test_retries_429_and_5xx_with_backoff(fake):
    fake.script = [(429, {"error": {"message": "slow down"}}, {"Retry-After": "3"}), (503, {}, {}), (502, {}, {})]
    e, sleeps = embedder(fake)
    assert e.embed(["abc"]) == [[3.0, 0.0, 0.5]]
    assert sleeps == [3.0, 1.0, 2.0] and e.requests == 4  # Retry-After first, then 0.5 * 2**attempt


def test_gives_up_after_max_retries(fake):
    fake.script = [(500, {"error": "boom"}, {})] * 3
    e, sleeps = embedder(fake, max_retries=2)
    with pytest.raises(EmbeddingServiceError, match="500"):
        e.embed(["a"])
    assert sleeps == [0.5, 1.0] and len(fake.requests) == 3


def test_client_errors_fail_at_once_with_the_servers_message(fake):
    fake.script = [(400, {"error": {"message": "input[0] too long\x1b[31m\u202e"}}, {})]
    e, sleeps = embedder(fake)
    with pytest.raises(EmbeddingServiceError) as err:
        e.embed(["a"])
    msg = str(err.value)
    assert "400" in msg and "input[0] too long" in msg and sleeps == []
    assert "\x1b" not in msg and "\u202e" not in msg  # nothing reaches a terminal unescaped
    fake.script = [(401, {"error": {"message": "bad key"}}, {})]
    with pytest.raises(EmbeddingServiceError, match=KEY_ENV):
        e.embed(["a"])


@pytest.mark.parametrize("payload", [
    b"not json", {"data": [{"index": 0, "embedding": "!!"}]}, {"data": []},
    {"data": [{"index": 0, "embedding": [1.0]}, {"index": 1, "embedding": [1.0, 2.0]}]},
    {"data": [{"index": 0, "embedding": ["x"]}]},
])
def test_malformed_answers_are_errors_not_vectors(fake, payload):
    fake.script = [(200, payload, {})]
    e, _ = embedder(fake)
    with pytest.raises(EmbeddingServiceError):
        e.embed(["a", "b"] if isinstance(payload, dict) and len(payload.get("data", [])) == 2 else ["a"])


def test_dimension_must_not_change_between_requests(fake):
    e, _ = embedder(fake)
    e.embed(["a"])
    fake.script = [(200, {"data": [{"index": 0, "embedding": [1.0, 2.0]}]}, {})]
    with pytest.raises(EmbeddingServiceError, match="dimensions"):
        e.embed(["b"])


def test_key_from_the_environment(fake, monkeypatch):
    monkeypatch.setenv(KEY_ENV, "sk-test-123")
    e, _ = embedder(fake)
    e.embed(["a"])
    assert fake.headers[-1]["Authorization"] == "Bearer sk-test-123"
    assert "sk-test" not in e.name and "sk-test" not in repr(e)
    monkeypatch.delenv(KEY_ENV)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    e2, _ = embedder(fake)
    e2.embed(["a"])
    assert "Authorization" not in fake.headers[-1]


def test_unreachable_server_is_retried_then_reported():
    sleeps = []
    e = OpenAIEmbedder("http://127.0.0.1:9/v1", "m", max_retries=2, timeout=2, sleep=sleeps.append)
    with pytest.raises(EmbeddingServiceError, match="unreachable after 3 attempts"):
        e.embed(["a"])
    assert sleeps == [0.5, 1.0]
