"""A BERT encoder forward pass in plain numpy (float32), so the default embedder needs no PyTorch.

Matches Hugging Face ``BertModel`` in eval mode: embeddings (word + position + token type) and
LayerNorm, then post-LN transformer layers with exact (erf) GELU. The three attention projections
are fused into one matrix so each layer does one large matmul instead of three small ones.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

F32 = npt.NDArray[np.float32]
Ints = npt.NDArray[np.int64]

# numpy cannot fuse element-wise operations, so each one is a pass over its array. Running them
# on row chunks that fit in a core's L2 cache keeps those passes out of main memory.
CHUNK_FLOATS = 1 << 16
# Rows per feed-forward matmul: large enough for an efficient matmul, bounded for memory.
FFN_ROW_BLOCK = 1024
# Attention scores computed at once (floats), for as many sequences as fit (at least one).
ATTENTION_GROUP_FLOATS = 1 << 18


@dataclass(frozen=True)
class BertConfig:
    """The parts of a Hugging Face ``config.json`` the forward pass needs."""

    hidden_size: int
    num_layers: int
    num_heads: int
    intermediate_size: int
    max_positions: int
    layer_norm_eps: float
    hidden_act: str

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any]) -> BertConfig:
        return cls(
            hidden_size=int(raw["hidden_size"]),
            num_layers=int(raw["num_hidden_layers"]),
            num_heads=int(raw["num_attention_heads"]),
            intermediate_size=int(raw["intermediate_size"]),
            max_positions=int(raw.get("max_position_embeddings", 512)),
            layer_norm_eps=float(raw.get("layer_norm_eps", 1e-12)),
            hidden_act=str(raw.get("hidden_act", "gelu")),
        )

    @classmethod
    def from_file(cls, path: Path) -> BertConfig:
        return cls.from_dict(json.loads(path.read_text(encoding="utf-8")))


@dataclass(frozen=True)
class _Layer:
    qkv_w: F32  # (hidden, 3 * hidden), query | key | value, query pre-scaled by 1/sqrt(head_dim)
    qkv_b: F32
    out_w: F32
    out_b: F32
    ln1_g: F32
    ln1_b: F32
    ff1_w: F32
    ff1_b: F32
    ff2_w: F32
    ff2_b: F32
    ln2_g: F32
    ln2_b: F32


class BertEncoder:
    """Last hidden states of a BERT model for a padded batch of token ids."""

    def __init__(self, config: BertConfig, weights: Mapping[str, npt.NDArray[Any]]) -> None:
        if config.hidden_act not in _ACTIVATIONS:
            raise ValueError(
                f"unsupported hidden_act {config.hidden_act!r} (supported: {sorted(_ACTIVATIONS)})"
            )
        self.config = config
        self._act = _ACTIVATIONS[config.hidden_act]
        w = strip_prefix(weights)
        self.word = _f32(w["embeddings.word_embeddings.weight"])
        self.position = _f32(w["embeddings.position_embeddings.weight"])
        types = w.get("embeddings.token_type_embeddings.weight")
        self.type0 = (
            _f32(types[0]) if types is not None else np.zeros(config.hidden_size, np.float32)
        )
        self.emb_ln_g = _f32(w["embeddings.LayerNorm.weight"])
        self.emb_ln_b = _f32(w["embeddings.LayerNorm.bias"])
        scale = np.float32(1.0 / math.sqrt(config.hidden_size // config.num_heads))
        self.layers = [self._layer(w, i, scale) for i in range(config.num_layers)]

    @staticmethod
    def _layer(w: Mapping[str, npt.NDArray[Any]], i: int, scale: np.float32) -> _Layer:
        p = f"encoder.layer.{i}."

        def get(name: str) -> F32:
            return _f32(w[p + name])

        att = "attention.self."
        qkv_w = np.concatenate(
            [get(att + "query.weight") * scale, get(att + "key.weight"), get(att + "value.weight")]
        )
        qkv_b = np.concatenate(
            [get(att + "query.bias") * scale, get(att + "key.bias"), get(att + "value.bias")]
        )
        return _Layer(
            qkv_w=np.ascontiguousarray(qkv_w.T),
            qkv_b=qkv_b,
            out_w=np.ascontiguousarray(get("attention.output.dense.weight").T),
            out_b=get("attention.output.dense.bias"),
            ln1_g=get("attention.output.LayerNorm.weight"),
            ln1_b=get("attention.output.LayerNorm.bias"),
            ff1_w=np.ascontiguousarray(get("intermediate.dense.weight").T),
            ff1_b=get("intermediate.dense.bias"),
            ff2_w=np.ascontiguousarray(get("output.dense.weight").T),
            ff2_b=get("output.dense.bias"),
            ln2_g=get("output.LayerNorm.weight"),
            ln2_b=get("output.LayerNorm.bias"),
        )

    def forward(self, ids: Ints, mask: Ints) -> F32:
        """``ids`` and ``mask`` are (batch, length); returns (batch, length, hidden) float32."""
        batch, length = ids.shape
        cfg = self.config
        if length > cfg.max_positions:
            raise ValueError(f"sequence of {length} tokens exceeds {cfg.max_positions}")
        embedded = self.word[ids.reshape(-1)].reshape(batch, length, cfg.hidden_size)
        embedded += self.position[:length]
        embedded += self.type0
        x: F32 = embedded.reshape(batch * length, cfg.hidden_size)
        self._norm(x, self.emb_ln_g, self.emb_ln_b)
        # Additive mask over keys: 0 for real tokens, a large negative number for padding.
        bias = ((mask.astype(np.float32) - 1.0) * np.float32(1e9)).reshape(batch, 1, 1, length)
        for layer in self.layers:
            x = self._attention(x, bias, layer)
            x = self._feed_forward(x, layer)
        return x.reshape(batch, length, cfg.hidden_size)

    def _attention(self, x: F32, bias: F32, layer: _Layer) -> F32:
        """Self-attention over groups of sequences, then projection, residual and LayerNorm."""
        batch, length = bias.shape[0], bias.shape[-1]
        heads = self.config.num_heads
        head_dim = self.config.hidden_size // heads
        qkv = x @ layer.qkv_w
        _chunked_rows(qkv, lambda rows: np.add(qkv[rows], layer.qkv_b, out=qkv[rows]))
        qkv = qkv.reshape(batch, length, 3, heads, head_dim)
        ctx = np.empty((batch, length, heads, head_dim), dtype=np.float32)
        group = max(1, ATTENTION_GROUP_FLOATS // (heads * length * length))
        for b in range(0, batch, group):
            part = qkv[b : b + group]
            scores = np.matmul(
                part[:, :, 0].transpose(0, 2, 1, 3), part[:, :, 1].transpose(0, 2, 3, 1)
            )
            scores += bias[b : b + group]
            np.matmul(
                _softmax(scores),
                part[:, :, 2].transpose(0, 2, 1, 3),
                out=ctx[b : b + group].transpose(0, 2, 1, 3),
            )
        out = ctx.reshape(batch * length, -1) @ layer.out_w

        def finish(rows: slice) -> None:
            block = out[rows]
            block += layer.out_b
            block += x[rows]
            self._norm(block, layer.ln1_g, layer.ln1_b)

        _chunked_rows(out, finish)
        return out

    def _feed_forward(self, x: F32, layer: _Layer) -> F32:
        """GELU feed-forward, residual and LayerNorm; element-wise work in cache-sized chunks."""
        out = np.empty_like(x)
        for start in range(0, x.shape[0], FFN_ROW_BLOCK):
            rows = x[start : start + FFN_ROW_BLOCK]
            h = rows @ layer.ff1_w

            def activate(sub: slice, h: F32 = h) -> None:
                block = h[sub]
                block += layer.ff1_b
                self._act(block)

            _chunked_rows(h, activate)
            block = out[start : start + FFN_ROW_BLOCK]
            np.matmul(h, layer.ff2_w, out=block)

            def finish(sub: slice, block: F32 = block, rows: F32 = rows) -> None:
                part = block[sub]
                part += layer.ff2_b
                part += rows[sub]
                self._norm(part, layer.ln2_g, layer.ln2_b)

            _chunked_rows(block, finish)
        return out

    def _norm(self, x: F32, gain: F32, bias: F32) -> None:
        _layer_norm(x, gain, bias, self.config.layer_norm_eps)


def mean_pool(hidden: F32, mask: Ints) -> F32:
    """Average of the token vectors, padding excluded (sentence-transformers' mean pooling)."""
    m = mask.astype(np.float32)[:, :, None]
    summed = (hidden * m).sum(axis=1)
    counts = np.maximum(m.sum(axis=1), np.float32(1e-9))
    pooled: F32 = (summed / counts).astype(np.float32)
    return pooled


def cls_pool(hidden: F32, mask: Ints) -> F32:
    """The first ([CLS]) token's vector."""
    return np.ascontiguousarray(hidden[:, 0])


def max_pool(hidden: F32, mask: Ints) -> F32:
    """Element-wise maximum over real tokens."""
    masked = np.where(mask[:, :, None] > 0, hidden, np.float32(-1e9))
    pooled: F32 = masked.max(axis=1).astype(np.float32)
    return pooled


def l2_normalize(x: F32) -> F32:
    """Unit-length rows (zero rows stay zero), as sentence-transformers' Normalize module."""
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    unit: F32 = (x / np.maximum(norms, np.float32(1e-12))).astype(np.float32)
    return unit


def _f32(a: npt.NDArray[Any]) -> F32:
    return np.ascontiguousarray(a, dtype=np.float32)


def strip_prefix(weights: Mapping[str, npt.NDArray[Any]]) -> dict[str, npt.NDArray[Any]]:
    """Accept both bare ``BertModel`` keys and keys saved under a ``bert.`` prefix."""
    prefix = "bert."
    if any(k.startswith(prefix + "embeddings.") for k in weights):
        return {k.removeprefix(prefix): v for k, v in weights.items()}
    return dict(weights)


def _chunked_rows(x: F32, apply: Callable[[slice], object]) -> None:
    """Call ``apply`` on consecutive row slices of ``x`` holding about ``CHUNK_FLOATS`` values."""
    step = max(1, CHUNK_FLOATS // x.shape[1])
    for start in range(0, x.shape[0], step):
        apply(slice(start, start + step))


def _layer_norm(x: F32, gain: F32, bias: F32, eps: float) -> None:
    """In-place LayerNorm over the last axis of a 2-D array."""
    x -= x.mean(axis=-1, keepdims=True)
    var = np.einsum("ij,ij->i", x, x) / np.float32(x.shape[-1])
    var += np.float32(eps)
    np.sqrt(var, out=var)
    np.reciprocal(var, out=var)
    x *= var[:, None]
    x *= gain
    x += bias


def _softmax(x: F32) -> F32:
    """Softmax over the last axis.

    Scores are exponentiated directly and normalised with a matmul (row sums over short rows are
    slow as numpy reductions); a group whose sums overflow or come near underflow is redone the
    numerically safe way, subtracting each row's maximum first.
    """
    with np.errstate(over="ignore"):
        e = np.exp(x)
    sums = e @ np.ones(x.shape[-1], dtype=np.float32)
    if not (np.isfinite(sums).all() and sums.min() > _SAFE_SUM):
        np.subtract(x, x.max(axis=-1, keepdims=True), out=e)
        np.exp(e, out=e)
        sums = e.sum(axis=-1)
    np.reciprocal(sums, out=sums)
    e *= sums[..., None]
    return e


_SAFE_SUM = np.float32(1e-30)


# Abramowitz & Stegun 7.1.26: erfc(z) = t * poly(t) * exp(-z^2), t = 1 / (1 + p z), z >= 0, to
# within 1.5e-7. The coefficients are halved here (GELU needs erfc / 2) and p carries the 1/sqrt(2).
_P = np.float32(0.3275911 / math.sqrt(2.0))
_HALF_A = tuple(
    np.float32(a / 2) for a in (1.061405429, -1.453152027, 1.421413741, -0.284496736, 0.254829592)
)


def _gelu_erf(x: F32) -> None:
    """In-place exact GELU, ``x * Phi(x)`` with Phi the normal CDF (BERT's ``"gelu"``).

    Written as ``max(x, 0) - |x| * erfc(|x| / sqrt 2) / 2``, which is ``x * Phi(x)`` for either
    sign of x and needs no branch.
    """
    a = np.abs(x)
    t = a * _P
    t += np.float32(1.0)
    np.reciprocal(t, out=t)
    q = t * _HALF_A[0]
    for coef in _HALF_A[1:]:
        q += coef
        q *= t
    np.square(a, out=t)
    t *= np.float32(-0.5)
    np.exp(t, out=t)
    q *= t
    q *= a
    np.maximum(x, np.float32(0.0), out=x)
    x -= q


def _gelu_tanh(x: F32) -> None:
    """In-place tanh-approximated GELU (``"gelu_new"`` / ``"gelu_pytorch_tanh"``)."""
    inner = x * x
    inner *= np.float32(0.044715)
    inner += np.float32(1.0)
    inner *= x
    inner *= np.float32(math.sqrt(2.0 / math.pi))
    np.tanh(inner, out=inner)
    inner += np.float32(1.0)
    inner *= np.float32(0.5)
    x *= inner


def _relu(x: F32) -> None:
    np.maximum(x, np.float32(0.0), out=x)


_ACTIVATIONS: dict[str, Callable[[F32], None]] = {
    "gelu": _gelu_erf,
    "gelu_new": _gelu_tanh,
    "gelu_pytorch_tanh": _gelu_tanh,
    "relu": _relu,
}

SUPPORTED_ACTIVATIONS = frozenset(_ACTIVATIONS)
