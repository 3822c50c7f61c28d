"""``Int8Encoder``: the model's weights quantized to int8 per output channel and run by
onnxruntime, built from the installed safetensors on first use (no download, no PyTorch).

The ONNX graph (``onnx_graph``) goes through onnxruntime's BERT fusions (attention, GELU, skip
LayerNorm) and dynamic quantization of every weight matmul, then is kept in a cache folder under a
name derived from the weights file and the onnxruntime version, so it is built once per machine.
"""

from __future__ import annotations

import hashlib
import importlib.util
import logging
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from engram import EmbedderError
from engram_local.loader import ModelSpec, load_weights
from engram_local.model import F32, Ints

INSTALL_HINT = "pip install -e './embedders/local[int8]' in the engram checkout"
DEFAULT_CACHE = Path("~/.cache/engram/models")
# Bumped when the graph or the quantization recipe changes, so an old cached file is not reused.
RECIPE = 1


class Int8Encoder:
    """Last hidden states from the quantized model, one sequence per run.

    Dynamic quantization scales activations per tensor, so in a padded batch a text's vector
    would depend on its neighbours (cosine 0.988 between a text alone and in a batch); run alone,
    each text gets one vector wherever it is embedded, and no work goes to padding. Each run uses
    one core; the caller runs batches on parallel threads (``session.run`` is thread-safe).
    """

    def __init__(self, spec: ModelSpec, *, cache: Path | None = None) -> None:
        require_int8_runtime()
        import onnxruntime

        self._hidden = spec.config.hidden_size
        path = quantized_model(spec, (cache or DEFAULT_CACHE).expanduser())
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        options.log_severity_level = 3
        try:
            self._session = onnxruntime.InferenceSession(
                str(path), options, providers=["CPUExecutionProvider"]
            )
        except Exception as exc:  # onnxruntime raises its own untyped errors
            raise EmbedderError(
                f"onnxruntime cannot load the int8 model {path} ({exc}); delete it to rebuild it"
            ) from exc

    def forward(self, ids: Ints, mask: Ints) -> F32:
        out: F32 = np.zeros((*ids.shape, self._hidden), dtype=np.float32)
        for row, length in enumerate(mask.sum(axis=1).tolist()):
            feed = {
                "input_ids": ids[row : row + 1, :length],
                "attention_mask": mask[row : row + 1, :length],
            }
            (hidden,) = self._session.run(None, feed)
            out[row, :length] = hidden[0]
        return out


def require_int8_runtime() -> None:
    """Fail at construction, not at the first embed, when the int8 extra is not installed."""
    missing = [m for m in ("onnxruntime", "onnx") if importlib.util.find_spec(m) is None]
    if missing:
        raise EmbedderError(
            f"precision = 'int8' needs {' and '.join(missing)}; install with: {INSTALL_HINT}"
        )


def quantized_model(spec: ModelSpec, cache: Path) -> Path:
    """The cached int8 model for ``spec``'s weights, built (atomically) when missing."""
    import onnxruntime

    path = cache / f"{_fingerprint(spec, onnxruntime.__version__)}.int8.onnx"
    if path.is_file():
        return path
    try:
        cache.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=cache, prefix=".build-") as work:
            built = _build(spec, Path(work))
            os.replace(built, path)
    except OSError as exc:
        raise EmbedderError(
            f"cannot write the int8 model into {cache} ({exc}); set [embedder] int8_cache to a "
            f"writable folder"
        ) from exc
    return path


def _fingerprint(spec: ModelSpec, runtime_version: str) -> str:
    """Weights (by content), sequence limit, recipe and onnxruntime version: what the file holds."""
    digest = hashlib.sha256()
    with (spec.folder / "model.safetensors").open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    digest.update(f"|{RECIPE}|{runtime_version}".encode())
    return f"{spec.folder.name}-{digest.hexdigest()[:16]}"


def _build(spec: ModelSpec, work: Path) -> Path:
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic
    from onnxruntime.transformers.optimizer import optimize_model

    from engram_local.onnx_graph import build_bert_graph

    plain = work / "model.onnx"
    fused = work / "fused.onnx"
    quantized = work / "model.int8.onnx"
    onnx.save(build_bert_graph(spec.config, load_weights(spec)), str(plain))
    heads, hidden = spec.config.num_heads, spec.config.hidden_size
    with _quiet():
        # opt_level 0: the Python fusions only (higher levels import PyTorch); the session applies
        # onnxruntime's own graph optimisations when it loads the model.
        optimize_model(
            str(plain), model_type="bert", num_heads=heads, hidden_size=hidden, opt_level=0
        ).save_model_to_file(str(fused))
        quantize_dynamic(
            str(fused),
            str(quantized),
            weight_type=QuantType.QInt8,
            per_channel=True,
            # Fused operators are outside ONNX's shape inference; their outputs are float32.
            extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT},
        )
    return quantized


@contextmanager
def _quiet() -> Iterator[None]:
    """onnxruntime's tools log advice to the root logger; it is not for engram's users."""
    root = logging.getLogger()
    level = root.level
    root.setLevel(logging.ERROR)
    try:
        yield
    finally:
        root.setLevel(level)
