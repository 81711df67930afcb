"""The rerank stage against real local HTTP servers in both request shapes in use
(text-embeddings-inference's /rerank and Cohere/Jina's /v1/rerank): order, permitted texts only,
errors as one line."""
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from chunkwise.cli.main import main
from chunkwise.config import ChunkConfig
from chunkwise.errors import ConfigError
from chunkwise.pipeline import ingest
from chunkwise.retrieve import Retriever
from chunkwise.retrieve.rerank import HTTPReranker, RerankError, make_reranker

FAVOURITE = "pineapple"  # the service's judgement: texts that say it are the most relevant


class Service:
    """A reranking service on loopback: scores a text by whether it says FAVOURITE, then by length."""

    def __init__(self, shape: str, fail: int = 0, garbage: bool = False):
        self.shape, self.fail, self.garbage, self.requests = shape, fail, garbage, []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                outer.requests.append({"path": self.path, "body": body, "auth": self.headers.get("Authorization")})
                if outer.fail:
                    outer.fail -= 1
                    self.send_response(503)
                    self.send_header("Retry-After", "0")
                    self.end_headers()
                    return
                texts = body["texts"] if outer.shape == "tei" else body["documents"]
                scores = [(FAVOURITE in t) + 1 / (1 + len(t)) for t in texts]
                order = sorted(range(len(texts)), key=lambda i: -scores[i])
                if outer.garbage:
                    answer = {"nothing": True}
                elif outer.shape == "tei":
                    answer = [{"index": i, "score": scores[i]} for i in order]
                else:
                    answer = {"results": [{"index": i, "relevance_score": scores[i]} for i in order][:body["top_n"]]}
                data = json.dumps(answer).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        base = f"http://127.0.0.1:{self.server.server_address[1]}"
        return base if self.shape == "tei" else base + "/v1"

    def spec(self) -> str:
        return f"tei:{self.url}" if self.shape == "tei" else f"cohere:{self.url}#rerank-v3"

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    root = tmp_path_factory.mktemp("fruit")
    docs = {
        "a.md": "# Orchards\n\nThe orchard grows apples and pears; the orchard team picks apples in autumn, apples "
                "are stored cold, and apples go to market.\n",
        "b.md": "# Tropical\n\nA greenhouse grows pineapple plants; apples are not grown there.\n",
        "c.md": "# Market\n\nThe market sells apples from the orchard every Saturday morning.\n",
        "secret.md": "---\nacl: board\n---\n# Board\n\nThe board discussed pineapple apples and apples again.\n",
    }
    for name, text in docs.items():
        (root / name).write_text(text, encoding="utf-8")
    db = str(root / "kb.db")
    ingest([root], db, ChunkConfig(strategy="structure", size=80, header="none"), embedder=None, acl="staff")
    return db


@pytest.mark.parametrize("shape", ["tei", "cohere"])
def test_the_service_reorders_permitted_hits(store, shape):
    with Service(shape) as svc, Retriever(store) as plain, Retriever(store, reranker=svc.spec()) as reranked:
        before = [p.source_uri.rsplit("/", 1)[-1] for p in plain.search("apples", ["staff"], k=3, mode="bm25").passages]
        after = [p.source_uri.rsplit("/", 1)[-1] for p in reranked.search("apples", ["staff"], k=3, mode="bm25").passages]
        assert before[0] != "b.md" and after[0] == "b.md" and set(after) == set(before)
        sent = [t for r in svc.requests for t in (r["body"].get("texts") or r["body"].get("documents"))]
        assert sent and not any("board" in t for t in sent)  # hidden text never leaves the store
        req = svc.requests[0]
        assert req["path"] == "/rerank" if shape == "tei" else req["path"] == "/v1/rerank"
        if shape == "cohere":
            assert req["body"]["model"] == "rerank-v3" and req["body"]["top_n"] == len(req["body"]["documents"])


def test_depth_bounds_what_is_sent(store):
    with Service("tei") as svc, Retriever(store, reranker=svc.spec(), rerank_depth=2) as r:
        r.search("apples", ["staff"], k=1, overfetch=3, mode="bm25")
        assert max(len(q["body"]["texts"]) for q in svc.requests) <= 2


def test_key_from_the_environment_and_retries(store, monkeypatch):
    monkeypatch.setenv("CHUNKWISE_RERANK_API_KEY", "sk-test-123")
    with Service("cohere", fail=2) as svc:
        scores = HTTPReranker(svc.url, "cohere", "m").scores("q", ["pineapple", "x"])
        assert scores[0] > scores[1] and len(svc.requests) == 3
        assert svc.requests[-1]["auth"] == "Bearer sk-test-123"


def test_bad_answers_and_bad_specs_fail_clearly(store, capsys):
    with Service("tei", garbage=True) as svc:
        with pytest.raises(RerankError, match="shape"):
            HTTPReranker(svc.url).scores("q", ["a", "b"])
        code = main(["search", "apples", "--db", store, "--groups", "staff", "--mode", "bm25", "--rerank", svc.spec()])
        err = capsys.readouterr().err
        assert code == 1 and "Traceback" not in err and "rerank shape" in err
    for spec in ("nope:http://x", "cohere:http://127.0.0.1:1/v1", "tei:ftp://x"):
        with pytest.raises(ConfigError):
            make_reranker(spec)
    assert main(["search", "apples", "--db", store, "--groups", "staff", "--rerank", "tei:http://127.0.0.1:9",
                 "--rerank-depth", "0"]) == 2


def test_cli_search_with_a_reranker(store, capsys):
    with Service("tei") as svc:
        assert main(["search", "apples", "--db", store, "--groups", "staff", "--mode", "bm25", "--k", "2",
                     "--rerank", svc.spec(), "--json"]) == 0
        results = json.loads(capsys.readouterr().out)["results"]
        assert results[0]["source_uri"].endswith("b.md")
