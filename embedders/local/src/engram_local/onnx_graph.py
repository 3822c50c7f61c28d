"""The BERT encoder of ``model.py`` written as an ONNX graph, built from the same safetensors
weights with the ``onnx`` package (no PyTorch, no download), so onnxruntime can quantize and run it.

The graph takes ``input_ids`` and ``attention_mask`` (int64, batch x length) and returns the last
hidden states (float32, batch x length x hidden); pooling and normalising stay in numpy, shared
with the float32 path.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np
import numpy.typing as npt
import onnx
from onnx import TensorProto, helper, numpy_helper

from engram_local.model import BertConfig, strip_prefix

# Operators used here (LayerNormalization, Erf, Tanh; no Gelu operator) are all in opset 17.
OPSET = 17
ACTIVATIONS = frozenset({"gelu", "gelu_new", "gelu_pytorch_tanh", "relu"})


class _Graph:
    """Nodes and initializers under construction, with unique names."""

    def __init__(self) -> None:
        self.nodes: list[onnx.NodeProto] = []
        self.initializers: list[onnx.TensorProto] = []
        self._count = 0

    def name(self, hint: str) -> str:
        self._count += 1
        return f"{hint}_{self._count}"

    def const(self, hint: str, value: npt.NDArray[Any]) -> str:
        name = self.name(hint)
        self.initializers.append(numpy_helper.from_array(np.ascontiguousarray(value), name))
        return name

    def op(self, kind: str, inputs: list[str], hint: str | None = None, **attrs: Any) -> str:
        out = self.name(hint or kind.lower())
        self.nodes.append(helper.make_node(kind, inputs, [out], **attrs))
        return out


def build_bert_graph(
    config: BertConfig, weights: Mapping[str, npt.NDArray[Any]]
) -> onnx.ModelProto:
    """The encoder as an ONNX model (float32 weights, dynamic batch and length)."""
    if config.hidden_act not in ACTIVATIONS:
        raise ValueError(
            f"unsupported hidden_act {config.hidden_act!r} (supported: {sorted(ACTIVATIONS)})"
        )
    w = {k: np.asarray(v, dtype=np.float32) for k, v in strip_prefix(weights).items()}
    g = _Graph()
    hidden, heads = config.hidden_size, config.num_heads
    head_dim = hidden // heads

    # Embeddings: word + position (the first `length` rows) + token type 0, then LayerNorm.
    words = g.op("Gather", [g.const("word", w["embeddings.word_embeddings.weight"]), "input_ids"])
    shape = g.op("Shape", ["input_ids"])
    length = g.op("Slice", [shape, _i64(g, [1]), _i64(g, [2]), _i64(g, [0])])
    positions = g.op(
        "Slice",
        [
            g.const("position", w["embeddings.position_embeddings.weight"]),
            _i64(g, [0]),
            length,
            _i64(g, [0]),
        ],
    )
    x = g.op("Add", [words, positions])
    types = w.get("embeddings.token_type_embeddings.weight")
    if types is not None:
        x = g.op("Add", [x, g.const("type0", types[0])])
    x = _layer_norm(g, x, w, "embeddings.LayerNorm", config.layer_norm_eps)

    # Additive attention mask over keys: 0 for tokens, -1e9 for padding; (batch, 1, 1, length).
    # Written as Hugging Face's export writes it, so onnxruntime's attention fusion recognises it.
    mask = g.op("Unsqueeze", ["attention_mask", _i64(g, [1])])
    mask = g.op("Unsqueeze", [mask, _i64(g, [2])])
    mask = g.op("Cast", [mask], to=TensorProto.FLOAT)
    bias = g.op("Mul", [g.op("Sub", [_f32(g, 1.0), mask]), _f32(g, -10000.0)])

    root = _f32(g, math.sqrt(head_dim))
    heads_shape = _i64(g, [0, 0, heads, head_dim])
    merged_shape = _i64(g, [0, 0, hidden])
    for i in range(config.num_layers):
        p = f"encoder.layer.{i}."
        att = p + "attention.self."
        q = _dense(g, x, w, att + "query")
        k = _dense(g, x, w, att + "key")
        v = _dense(g, x, w, att + "value")
        q = g.op("Transpose", [g.op("Reshape", [q, heads_shape])], perm=[0, 2, 1, 3])
        k = g.op("Transpose", [g.op("Reshape", [k, heads_shape])], perm=[0, 2, 3, 1])
        v = g.op("Transpose", [g.op("Reshape", [v, heads_shape])], perm=[0, 2, 1, 3])
        scores = g.op("Add", [g.op("Div", [g.op("MatMul", [q, k]), root]), bias])
        ctx = g.op("MatMul", [g.op("Softmax", [scores], axis=-1), v])
        ctx = g.op("Reshape", [g.op("Transpose", [ctx], perm=[0, 2, 1, 3]), merged_shape])
        attended = g.op("Add", [_dense(g, ctx, w, p + "attention.output.dense"), x])
        x = _layer_norm(g, attended, w, p + "attention.output.LayerNorm", config.layer_norm_eps)
        h = _activate(g, _dense(g, x, w, p + "intermediate.dense"), config.hidden_act)
        out = g.op("Add", [_dense(g, h, w, p + "output.dense"), x])
        x = _layer_norm(g, out, w, p + "output.LayerNorm", config.layer_norm_eps)

    g.nodes.append(helper.make_node("Identity", [x], ["last_hidden_state"]))
    graph = helper.make_graph(
        g.nodes,
        "bert",
        [
            helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "length"]),
            helper.make_tensor_value_info("attention_mask", TensorProto.INT64, ["batch", "length"]),
        ],
        [
            helper.make_tensor_value_info(
                "last_hidden_state", TensorProto.FLOAT, ["batch", "length", hidden]
            )
        ],
        g.initializers,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


def _i64(g: _Graph, values: list[int]) -> str:
    return g.const("i64", np.asarray(values, dtype=np.int64))


def _f32(g: _Graph, value: float) -> str:
    return g.const("f32", np.asarray(value, dtype=np.float32))


def _dense(
    g: _Graph, x: str, w: Mapping[str, npt.NDArray[np.float32]], prefix: str, scale: float = 1.0
) -> str:
    """``x @ W.T + b`` (Hugging Face stores W as out x in); ``scale`` folds into W and b."""
    weight = np.ascontiguousarray(w[prefix + ".weight"].T * np.float32(scale))
    product = g.op("MatMul", [x, g.const(prefix + ".weight", weight)])
    return g.op(
        "Add", [product, g.const(prefix + ".bias", w[prefix + ".bias"] * np.float32(scale))]
    )


def _layer_norm(
    g: _Graph, x: str, w: Mapping[str, npt.NDArray[np.float32]], prefix: str, eps: float
) -> str:
    return g.op(
        "LayerNormalization",
        [
            x,
            g.const(prefix + ".weight", w[prefix + ".weight"]),
            g.const(prefix + ".bias", w[prefix + ".bias"]),
        ],
        axis=-1,
        epsilon=eps,
    )


def _activate(g: _Graph, x: str, act: str) -> str:
    if act == "relu":
        return g.op("Relu", [x])
    if act != "gelu":
        # tanh approximation: x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 x^3))) / 2.
        cube = g.op("Mul", [g.op("Mul", [x, x]), x])
        inner = g.op("Add", [x, g.op("Mul", [cube, _f32(g, 0.044715)])])
        tanh = g.op("Tanh", [g.op("Mul", [inner, _f32(g, math.sqrt(2.0 / math.pi))])])
        return g.op("Mul", [g.op("Mul", [x, g.op("Add", [tanh, _f32(g, 1.0)])]), _f32(g, 0.5)])
    # Exact GELU, x * (1 + erf(x / sqrt 2)) / 2; onnxruntime fuses this pattern into one kernel.
    erf = g.op("Erf", [g.op("Div", [x, _f32(g, math.sqrt(2.0))])])
    return g.op("Mul", [g.op("Mul", [x, g.op("Add", [erf, _f32(g, 1.0)])]), _f32(g, 0.5)])
