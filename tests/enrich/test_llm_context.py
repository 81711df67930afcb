"""LLM-written chunk context against a real local OpenAI-compatible chat server."""
import json
import sqlite3
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from chunkwise.cli.main import main
from chunkwise.config import ChunkConfig
from chunkwise.errors import ConfigError

HANDBOOK = """---
title: Pump manual
acl: staff
---
# Pump manual

The P-200 pump moves coolant through the primary loop.

## Start-up

Press the red button twice, then wait for the green lamp.

## Costs
<!-- acl: finance -->

Each pump costs 40,000 euros.
"""


class Chat:
    """A chat-completions server that records every prompt and answers ``reply(prompt)``."""

    def __init__(self, reply, status=200):
        self.prompts, self.reply, self.status = [], reply, status
        chat = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                assert self.path == "/v1/chat/completions" and body["model"] == "tiny"
                prompt = body["messages"][0]["content"]
                chat.prompts.append(prompt)
                out = (json.dumps({"choices": [{"message": {"role": "assistant", "content": chat.reply(prompt)}}]})
                       if chat.status == 200 else json.dumps({"error": {"message": "model not loaded"}}))
                self.send_response(chat.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(out.encode())))
                self.end_headers()
                self.wfile.write(out.encode())

            def log_message(self, *a):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.spec = f"http://127.0.0.1:{self.server.server_port}/v1#tiny"

    def close(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("CHUNKWISE_CONTEXT_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"


def ingest(tmp_path, spec, name="s.db", size=160, extra=()):
    src = tmp_path / "docs"
    src.mkdir(exist_ok=True)
    (src / "pump.md").write_text(HANDBOOK)
    db = tmp_path / name
    code = main(["ingest", str(src), "--db", str(db), "--embedder", "hashing", "--size", str(size),
                 "--context-llm", spec, *extra])
    with sqlite3.connect(db) as c:
        rows = [(tuple(json.loads(a)), t, e, n) for a, t, e, n in c.execute("select acl, text, embed_text, size from chunks")]
    return code, rows


def chunk_of(prompt):
    return prompt.split("<chunk>\n", 1)[1].split("\n</chunk>", 1)[0]


def test_context_is_embedded_cached_and_sees_only_what_readers_may_read(tmp_path, cache):
    chat = Chat(lambda p: "From the P-200 pump manual: " + chunk_of(p).split()[0])
    try:
        code, rows = ingest(tmp_path, chat.spec)
        assert code == 0 and rows
        for acl, text, embedded, size in rows:
            assert embedded.startswith("Context: From the P-200 pump manual: ") and size <= 160
        for prompt in chat.prompts:
            seen = prompt.split("<chunk>")[0]
            if "40,000" in chunk_of(prompt):  # the finance chunk: staff-only text is not finance's to read
                assert "red button" not in seen and "primary loop" not in seen
            else:  # a staff chunk: the finance section never reaches its prompt
                assert "40,000" not in seen and "Costs" not in prompt
        asked = len(chat.prompts)
        assert asked == len(rows)
        code, again = ingest(tmp_path, chat.spec, name="second.db")  # new store, same content: all cached
        assert code == 0 and len(chat.prompts) == asked
        assert sorted(again) == sorted(rows)
    finally:
        chat.close()


def test_a_long_or_hostile_answer_is_cleaned_and_cut_to_the_cap(tmp_path, cache):
    chat = Chat(lambda p: "\x1b[31mred\x1b[0m \u202eevil " + "context " * 300)
    try:
        code, rows = ingest(tmp_path, chat.spec, size=48, extra=("--context-tokens", "20"))
        assert code == 0 and rows
        for acl, text, embedded, size in rows:
            assert size <= 48 and "\x1b" not in embedded and "\u202e" not in embedded
            assert embedded.startswith("Context: [31mred") or embedded.startswith("Context: ")
    finally:
        chat.close()


def test_a_failing_model_fails_the_file_with_its_message(tmp_path, cache, capsys):
    chat = Chat(lambda p: "", status=400)
    try:
        code, rows = ingest(tmp_path, chat.spec)
        assert code != 0 and rows == []
        err = capsys.readouterr().err
        assert "model not loaded" in err and "Traceback" not in err
    finally:
        chat.close()


@pytest.mark.parametrize("spec", ["localhost:8000#m", "http://localhost:8000/v1", "ftp://x#m"])
def test_a_bad_spec_is_a_config_error(spec):
    with pytest.raises(ConfigError, match="URL#MODEL"):
        ChunkConfig(context_llm=spec)


def test_the_reserve_cannot_take_half_the_cap_and_leaves_other_fingerprints_alone():
    with pytest.raises(ConfigError, match="context_tokens"):
        ChunkConfig(size=64, context_llm="http://h/v1#m", context_tokens=40)
    assert ChunkConfig(context_llm="http://h/v1#m").context_tokens == 64
    assert ChunkConfig().fingerprint() != ChunkConfig(context_llm="http://h/v1#m").fingerprint()
