"""The openai:URL embedder against ``chunkwise serve``'s own POST /v1/embeddings: a real server on
loopback, real HTTP, bearer tokens as the API key. Skipped where the serve extra is not installed."""
import importlib.util
import json
import os
import secrets
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
if importlib.util.find_spec("chunkwise.serve") is None or importlib.util.find_spec("fastapi") is None:
    pytest.skip("needs chunkwise serve (the serve extra)", allow_module_level=True)

from chunkwise.embed import cosine, make_embedder  # noqa: E402
from chunkwise.embed.openai import KEY_ENV, EmbeddingServiceError, OpenAIEmbedder  # noqa: E402

TOKEN = secrets.token_urlsafe(24)


def _env(**extra):
    return {**os.environ, "PYTHONPATH": str(ROOT / "src"), "HF_HUB_OFFLINE": "1", **extra}


def _cli(*args, env=None, cwd=None):
    return subprocess.run([sys.executable, "-m", "chunkwise.cli.main", *args], capture_output=True, text=True,
                          env=env or _env(), cwd=cwd, timeout=600)


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """A hashing-embedder store served with a tokens file; yields the /v1 base URL."""
    tmp = tmp_path_factory.mktemp("serve")
    docs = tmp / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("# Rollback\n\nRun deployctl revert with the release id.\n", encoding="utf-8")
    db = tmp / "served.db"
    r = _cli("ingest", str(docs), "--db", str(db), "--embedder", "hashing", "--acl", "staff")
    assert r.returncode == 0, r.stderr
    tokens = tmp / "tokens.json"
    tokens.write_text(json.dumps({TOKEN: ["staff"]}), encoding="utf-8")
    proc = subprocess.Popen([sys.executable, "-m", "chunkwise.cli.main", "serve", "--db", str(db), "--port", "0",
                             "--tokens", str(tokens), "--json", "--log-level", "warning"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_env())
    try:
        line = proc.stdout.readline()
        assert line, proc.stderr.read()
        ready = json.loads(line)
        yield {"url": ready["url"] + "/v1", "model": ready["model"], "tmp": tmp}
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)


@pytest.mark.parametrize("fmt", ["float", "base64"])
def test_vectors_equal_the_served_models(server, fmt):
    e = OpenAIEmbedder(server["url"], server["model"], encoding_format=fmt, api_key=TOKEN, batch_size=3)
    texts = ["roll back a deploy", "the canteen serves soup", "Straße 東京", "x" * 50, "deployctl revert"]
    remote = e.embed(texts)
    local = make_embedder(server["model"]).embed(texts)
    assert e.requests == 2 and e.dim == len(local[0])  # batched 3 + 2
    for a, b in zip(remote, local):
        assert cosine(a, b) > 0.999999  # the same vectors, through float32 on the wire


def test_wrong_key_or_model_is_a_clear_error(server):
    with pytest.raises(EmbeddingServiceError, match=KEY_ENV):
        OpenAIEmbedder(server["url"], server["model"], api_key="not-the-token-0123456789").embed(["a"])
    with pytest.raises(EmbeddingServiceError, match="404"):
        OpenAIEmbedder(server["url"], "no-such-model", api_key=TOKEN).embed(["a"])


def test_ingest_and_search_through_the_server(server):
    """A second store embedded remotely by the served model; search embeds the query the same way."""
    tmp = server["tmp"]
    docs = tmp / "docs2"
    docs.mkdir()
    (docs / "r.md").write_text("# Freezes\n\nOnly the release manager may lift a deploy freeze.\n", encoding="utf-8")
    (docs / "l.md").write_text("# Lunch\n\nSoup is served on Tuesdays in the canteen.\n", encoding="utf-8")
    name = f"openai:{server['url']}#{server['model']}"
    env = _env(**{KEY_ENV: TOKEN})
    db = str(tmp / "remote.db")
    r = _cli("ingest", str(docs), "--db", db, "--embedder", name, "--acl", "staff", "--json", env=env)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["embedded"] >= 2
    r = _cli("search", "who may lift a freeze", "--db", db, "--groups", "staff", "--mode", "dense", "--json", env=env)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["results"][0]["source_uri"].endswith("r.md")
    r = _cli("search", "freeze", "--db", db, "--groups", "staff", "--mode", "dense", env=_env(**{KEY_ENV: ""}))
    assert r.returncode != 0 and "Traceback" not in r.stderr and KEY_ENV in r.stderr


def test_the_readme_line_runs_against_the_server(server):
    """docs/guides/embedders.md: the openai: ingest line as written, with this server's URL, model and token."""
    import shlex
    import shutil

    section = (ROOT / "docs" / "guides" / "embedders.md").read_text(encoding="utf-8")
    line = next(ln for ln in section.splitlines() if "--embedder openai:" in ln and ln.startswith("CHUNKWISE_"))
    line = line.split("  #", 1)[0]
    words = shlex.split(line)
    assert words[0].startswith(KEY_ENV + "=") and words[1] == "chunkwise"
    args = [w.replace("https://api.openai.com/v1", server["url"]) for w in words[2:]]
    args[args.index("--model") + 1] = server["model"]
    work = server["tmp"] / "readme"
    shutil.copytree(ROOT / "examples", work / "examples")
    r = _cli(*args, "--json", env=_env(**{KEY_ENV: TOKEN}), cwd=work)
    assert r.returncode == 0, r.stderr
    stats = json.loads(r.stdout)
    assert stats["added"] > 10 and stats["embedded"] == stats["added"]
