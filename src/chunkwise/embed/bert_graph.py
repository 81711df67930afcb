"""all-MiniLM-L6-v2 as one ONNX graph, built from the packaged safetensors with numpy and ``onnx`` alone.

Why build it by hand: exporting with ``torch.onnx.export`` needs torch (gigabytes) on every machine
that embeds, and the default model must not. A BERT encoder is a short, fixed recipe: embeddings
(word + position + token type, LayerNorm), per layer self-attention and a GELU feed-forward block
each closed by a residual LayerNorm, then sentence-transformers' mean pooling over the attention
mask and L2 normalisation. Written here node by node, in the same shape Hugging Face's export has,
so ONNX Runtime's BERT optimizer fuses it (EmbedLayerNormalization, Attention, SkipLayerNorm,
BiasGelu) exactly as it fuses an exported graph. tests/embed/test_bert_graph.py holds the vectors
within cosine 0.999 of sentence-transformers on PyTorch.

The weights are read by a small safetensors reader (a JSON header, then raw little-endian arrays)
that checks every offset against the file, so a damaged or hostile file fails with a message
instead of a crash or a silently wrong model.
"""
from __future__ import annotations

import json
import struct
from pathlib import Path

from chunkwise.errors import ChunkwiseError

OPSET = 17  # LayerNormalization is a standard op from 17
INPUTS = ("input_ids", "attention_mask", "token_type_ids")
OUTPUT = "embedding"
_DTYPES = {"F32": "<f4", "F16": "<f2", "BF16": None, "I64": "<i8", "I32": "<i4"}
_MAX_HEADER = 100 << 20


def read_safetensors(path: Path) -> dict:
    """name -> numpy array for every tensor of a ``.safetensors`` file (copies: the file is closed)."""
    import numpy as np

    data = Path(path).read_bytes()
    if len(data) < 8:
        raise ChunkwiseError(f"{path}: not a safetensors file (too short); reinstall the model package")
    (n,) = struct.unpack("<Q", data[:8])
    if n > min(len(data) - 8, _MAX_HEADER):
        raise ChunkwiseError(f"{path}: damaged safetensors header (length {n}); reinstall the model package")
    try:
        header = json.loads(data[8:8 + n])
    except ValueError as exc:
        raise ChunkwiseError(f"{path}: damaged safetensors header ({exc}); reinstall the model package") from exc
    if not isinstance(header, dict):
        raise ChunkwiseError(f"{path}: damaged safetensors header (not an object); reinstall the model package")
    body = memoryview(data)[8 + n:]
    tensors = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        dtype = _DTYPES.get(info.get("dtype")) if isinstance(info, dict) else None
        try:
            shape = [int(d) for d in info["shape"]]
            begin, end = (int(o) for o in info["data_offsets"])
        except (KeyError, TypeError, ValueError):
            raise ChunkwiseError(f"{path}: tensor {name!r} has an unreadable entry; reinstall the model package") from None
        if dtype is None:
            raise ChunkwiseError(f"{path}: tensor {name!r} has unsupported dtype {info.get('dtype')!r}")
        size = int(np.prod(shape, dtype=np.int64)) * np.dtype(dtype).itemsize
        if not 0 <= begin <= end <= len(body) or end - begin != size or min(shape, default=1) < 0:
            raise ChunkwiseError(f"{path}: tensor {name!r} lies outside the file; reinstall the model package")
        tensors[name] = np.frombuffer(body[begin:end], dtype=dtype).reshape(shape).astype(dtype[1:], copy=True)
    return tensors


class _Graph:
    """Nodes and initializers of the graph being built; ``op`` returns the output name of the node it
    adds, so the recipe below reads as the forward pass it is."""

    def __init__(self, weights: dict, source: Path, eps: float) -> None:
        self.nodes, self.inits, self._n, self._names = [], [], 0, set()
        self.weights, self.source, self.eps = weights, source, eps

    def const(self, name: str, array) -> str:
        """An initializer named ``name``; a name already given is the same constant (added once)."""
        from onnx import numpy_helper

        if name not in self._names:
            self._names.add(name)
            self.inits.append(numpy_helper.from_array(array, name))
        return name

    def op(self, op_type: str, inputs, name: str, **attrs) -> str:
        from onnx import helper

        self._n += 1
        out = f"{name}_output_{self._n}"
        self.nodes.append(helper.make_node(op_type, list(inputs), [out], name=name, **attrs))
        return out

    def weight(self, key: str):
        import numpy as np

        if key not in self.weights:
            raise ChunkwiseError(f"{self.source}: tensor {key!r} is missing; reinstall the model package")
        return np.asarray(self.weights[key], dtype=np.float32)

    def param(self, key: str) -> str:
        return self.const(key, self.weight(key))

    def linear(self, x: str, prefix: str, name: str) -> str:
        """x @ W.T + b (torch's Linear), as MatMul then Add: the shape the fusions look for."""
        w = self.const(f"{prefix}.weight", self.weight(f"{prefix}.weight").T.copy())
        return self.op("Add", [self.param(f"{prefix}.bias"), self.op("MatMul", [x, w], f"{name}/MatMul")],
                       f"{name}/Add")

    def layer_norm(self, x: str, prefix: str, name: str) -> str:
        return self.op("LayerNormalization", [x, self.param(f"{prefix}.weight"), self.param(f"{prefix}.bias")],
                       f"{name}/LayerNormalization", axis=-1, epsilon=self.eps)


def _i64(x):
    import numpy as np

    return np.asarray(x, dtype=np.int64)


def _f32(x):
    import numpy as np

    return np.asarray(x, dtype=np.float32)


def _embeddings(g: _Graph) -> str:
    """Word + token type + position embeddings, LayerNorm: Hugging Face's BertEmbeddings export
    (positions are a slice of a constant ``position_ids`` row, as the fusion expects)."""
    import numpy as np

    seq = g.op("Gather", [g.op("Shape", ["input_ids"], "/embeddings/Shape"), g.const("one", _i64(1))],
               "/embeddings/Gather_len", axis=0)
    ends = g.op("Unsqueeze", [seq, g.const("axes0", _i64([0]))], "/embeddings/Unsqueeze")
    max_pos = g.weight("embeddings.position_embeddings.weight").shape[0]
    positions = g.op("Slice", [g.const("position_ids", _i64(np.arange(max_pos)[None, :])), g.const("zero1", _i64([0])),
                               ends, g.const("axes1", _i64([1])), g.const("step1", _i64([1]))], "/embeddings/Slice")
    words = g.op("Gather", [g.param("embeddings.word_embeddings.weight"), "input_ids"],
                 "/embeddings/word_embeddings/Gather")
    types = g.op("Gather", [g.param("embeddings.token_type_embeddings.weight"), "token_type_ids"],
                 "/embeddings/token_type_embeddings/Gather")
    pos = g.op("Gather", [g.param("embeddings.position_embeddings.weight"), positions],
               "/embeddings/position_embeddings/Gather")
    summed = g.op("Add", [g.op("Add", [words, types], "/embeddings/Add"), pos], "/embeddings/Add_1")
    return g.layer_norm(summed, "embeddings.LayerNorm", "/embeddings/LayerNorm")


def _mask_bias(g: _Graph) -> str:
    """The additive attention mask, (1 - mask) * -10000, broadcast over heads and query positions."""
    from onnx import TensorProto

    m4 = g.op("Unsqueeze", [g.op("Unsqueeze", ["attention_mask", g.const("axes_1", _i64([1]))], "/mask/Unsqueeze"),
                            g.const("axes_2", _i64([2]))], "/mask/Unsqueeze_1")
    inverted = g.op("Sub", [g.const("one_f", _f32(1.0)), g.op("Cast", [m4], "/mask/Cast", to=TensorProto.FLOAT)],
                    "/mask/Sub")
    return g.op("Mul", [inverted, g.const("mask_value", _f32(-10000.0))], "/mask/Mul")


def _layer(g: _Graph, h: str, i: int, bias: str, heads: int, hidden: int) -> str:
    """One encoder layer: self-attention, residual LayerNorm, GELU feed-forward, residual LayerNorm."""
    import numpy as np

    p, n = f"encoder.layer.{i}", f"/encoder/layer.{i}"
    head_dim = hidden // heads
    split = g.const("split_heads", _i64([0, 0, heads, head_dim]))

    def heads_of(kind: str, perm: list[int]) -> str:
        x = g.linear(h, f"{p}.attention.self.{kind}", f"{n}/attention/self/{kind}")
        return g.op("Transpose", [g.op("Reshape", [x, split], f"{n}/attention/self/{kind}/Reshape")],
                    f"{n}/attention/self/{kind}/Transpose", perm=perm)

    q, k, v = heads_of("query", [0, 2, 1, 3]), heads_of("key", [0, 2, 3, 1]), heads_of("value", [0, 2, 1, 3])
    scores = g.op("Div", [g.op("MatMul", [q, k], f"{n}/attention/self/MatMul"),
                          g.const("sqrt_head_dim", _f32(np.sqrt(head_dim)))], f"{n}/attention/self/Div")
    probs = g.op("Softmax", [g.op("Add", [scores, bias], f"{n}/attention/self/Add")], f"{n}/attention/self/Softmax",
                 axis=-1)
    merged = g.op("Transpose", [g.op("MatMul", [probs, v], f"{n}/attention/self/MatMul_1")],
                  f"{n}/attention/self/Transpose_3", perm=[0, 2, 1, 3])
    context = g.op("Reshape", [merged, g.const("merge_heads", _i64([0, 0, hidden]))], f"{n}/attention/self/Reshape_3")
    attended = g.linear(context, f"{p}.attention.output.dense", f"{n}/attention/output/dense")
    h = g.layer_norm(g.op("Add", [attended, h], f"{n}/attention/output/Add"), f"{p}.attention.output.LayerNorm",
                     f"{n}/attention/output/LayerNorm")
    x = g.linear(h, f"{p}.intermediate.dense", f"{n}/intermediate/dense")
    # GELU, exact: x * (1 + erf(x / sqrt 2)) * 0.5 (the pattern ORT fuses into BiasGelu)
    erf = g.op("Erf", [g.op("Div", [x, g.const("sqrt2", _f32(np.sqrt(2.0)))], f"{n}/intermediate/gelu/Div")],
               f"{n}/intermediate/gelu/Erf")
    plus = g.op("Add", [erf, g.const("one_f", _f32(1.0))], f"{n}/intermediate/gelu/Add")
    gelu = g.op("Mul", [g.op("Mul", [x, plus], f"{n}/intermediate/gelu/Mul"), g.const("half", _f32(0.5))],
                f"{n}/intermediate/gelu/Mul_1")
    out = g.linear(gelu, f"{p}.output.dense", f"{n}/output/dense")
    return g.layer_norm(g.op("Add", [out, h], f"{n}/output/Add"), f"{p}.output.LayerNorm", f"{n}/output/LayerNorm")


def _pool(g: _Graph, h: str) -> None:
    """sentence-transformers' Pooling (mean over real tokens) and Normalize (F.normalize, eps 1e-12)."""
    from onnx import TensorProto, helper

    mask = g.op("Unsqueeze", [g.op("Cast", ["attention_mask"], "/pool/Cast", to=TensorProto.FLOAT),
                              g.const("axes_last", _i64([-1]))], "/pool/Unsqueeze")
    axis = g.const("axes_seq", _i64([1]))
    summed = g.op("ReduceSum", [g.op("Mul", [h, mask], "/pool/Mul"), axis], "/pool/ReduceSum", keepdims=0)
    count = g.op("Max", [g.op("ReduceSum", [mask, axis], "/pool/ReduceSum_1", keepdims=0),
                         g.const("min_count", _f32(1e-9))], "/pool/Max")
    mean = g.op("Div", [summed, count], "/pool/Div")
    norm = g.op("Max", [g.op("ReduceL2", [mean], "/norm/ReduceL2", axes=[1], keepdims=1),
                        g.const("min_norm", _f32(1e-12))], "/norm/Max")
    g.nodes.append(helper.make_node("Div", [mean, norm], [OUTPUT], name="/norm/Div"))


def _config(src: Path) -> dict:
    """The model's config, checked to be what this recipe builds (anything else fails, never guesses)."""
    try:
        config = json.loads((src / "config.json").read_text(encoding="utf-8"))
        pooling = json.loads((src / "1_Pooling" / "config.json").read_text(encoding="utf-8"))
        modules = json.loads((src / "modules.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ChunkwiseError(f"{src}: unreadable model config ({exc}); reinstall the model package") from exc
    if config.get("model_type") != "bert" or config.get("hidden_act") != "gelu" or \
            config.get("position_embedding_type", "absolute") != "absolute":
        raise ChunkwiseError(f"{src}: not a BERT encoder with GELU and absolute positions; cannot build its graph")
    modes = {k: v for k, v in pooling.items() if k.startswith("pooling_mode_")}
    if not modes.get("pooling_mode_mean_tokens") or sum(bool(v) for v in modes.values()) != 1:
        raise ChunkwiseError(f"{src}: pooling other than the mean of tokens is not built here")
    if not any(str(m.get("type", "")).endswith("Normalize") for m in modules):
        raise ChunkwiseError(f"{src}: the model has no Normalize module; its vectors would not be unit length")
    return config


def build_model(src: Path):
    """The fp32 ``onnx.ModelProto``: token ids, mask and types in; unit-length mean-pooled vectors out."""
    from onnx import TensorProto, helper

    cfg = _config(src)
    weights = read_safetensors(src / "model.safetensors")
    if any(k.startswith("bert.") for k in weights):  # some checkpoints keep the BertModel prefix
        weights = {k.removeprefix("bert."): v for k, v in weights.items()}
    hidden, heads = int(cfg["hidden_size"]), int(cfg["num_attention_heads"])
    if heads < 1 or hidden % heads:
        raise ChunkwiseError(f"{src}: hidden size {hidden} does not split into {heads} heads")
    g = _Graph(weights, src / "model.safetensors", float(cfg["layer_norm_eps"]))
    h, bias = _embeddings(g), _mask_bias(g)
    for i in range(int(cfg["num_hidden_layers"])):
        h = _layer(g, h, i, bias, heads, hidden)
    _pool(g, h)
    inputs = [helper.make_tensor_value_info(x, TensorProto.INT64, ["batch", "sequence"]) for x in INPUTS]
    output = helper.make_tensor_value_info(OUTPUT, TensorProto.FLOAT, ["batch", hidden])
    graph = helper.make_graph(g.nodes, "all-MiniLM-L6-v2", inputs, [output], initializer=g.inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)], producer_name="chunkwise")
    model.ir_version = 8  # readable by every onnxruntime this package accepts
    return model


def write_fp32(src: Path, dest: Path, *, fuse: bool = True) -> None:
    """Build the graph and write it to ``dest``, fused by ONNX Runtime's BERT optimizer when ``fuse``
    (it needs no torch; a graph it cannot fuse is still correct, only slower)."""
    import onnx

    model = build_model(src)
    cfg = _config(src)
    if not fuse:
        onnx.save_model(model, str(dest))
        return
    import logging

    try:
        from onnxruntime.transformers.optimizer import optimize_model
        import sympy  # noqa: F401  (the optimizer's shape inference needs it; onnxruntime does not declare it)
    except ImportError:  # the unfused graph: the same vectors up to rounding, a little slower
        onnx.save_model(model, str(dest))
        return

    raw = dest.with_name(dest.name + ".raw")
    log = logging.getLogger("onnxruntime.transformers.optimizer")
    level = log.level
    log.setLevel(logging.ERROR)  # it warns that the producer is not "pytorch": the graph has its shape
    try:
        onnx.save_model(model, str(raw))
        fused = optimize_model(str(raw), model_type="bert", num_heads=int(cfg["num_attention_heads"]),
                               hidden_size=int(cfg["hidden_size"]), opt_level=0)
        fused.save_model_to_file(str(dest))
    finally:
        log.setLevel(level)
        if raw.exists():
            raw.unlink()
