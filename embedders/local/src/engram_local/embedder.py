"""``LocalEmbedder``: all-MiniLM-L6-v2 (or another BERT-family model) on the CPU, offline.

Nothing heavy happens at construction: the model loads on the first ``embed`` (once, under a
lock), so ``import engram_local`` and ``engram --help`` stay fast and a missing model surfaces
as an ``EmbedderError`` the caller can degrade on (keyword-only search).
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

from engram import BaseEmbedder, EmbedderError, InputType
from engram_local.int8 import require_int8_runtime
from engram_local.loader import (
    DEFAULT_MAX_SEQ_LENGTH,
    KNOWN_DIMENSIONS,
    ModelSpec,
    base_model_id,
    check_model_dir,
    locate_model,
    model_id,
    read_spec,
)
from engram_local.options import LocalOptions
from engram_local.threads import available_cores

if TYPE_CHECKING:
    from engram_local.runtime import SentenceEncoder


class LocalEmbedder(BaseEmbedder):
    """Symmetric sentence embeddings; ``input_type`` only selects the optional text prefix."""

    name = "local"
    # Texts handed to one embed_batch call: plenty of room to sort by length before padding.
    max_batch = 512

    def __init__(self, options: LocalOptions | None = None) -> None:
        self.options = options if options is not None else LocalOptions()
        if self.options.precision == "int8":
            # Its own name too, so reports and logs tell the two variants apart.
            self.name = "local-int8"
        self.model = model_id(self.options)
        self.threads = self.options.threads or available_cores()
        if self.options.precision == "int8":
            require_int8_runtime()
        self._lock = threading.Lock()
        self._encoder: SentenceEncoder | None = None
        self._spec: ModelSpec | None = None
        if self.options.model_path is not None:
            # An explicit folder is checked now: a wrong path is a configuration error.
            folder = check_model_dir(self.options.model_path)
            self._spec = read_spec(folder, self.options.max_seq_length)
        elif base_model_id(self.options) not in KNOWN_DIMENSIONS:
            self._spec = read_spec(locate_model(self.options), self.options.max_seq_length)
        self.dimension = (
            self._spec.dimension if self._spec else KNOWN_DIMENSIONS[base_model_id(self.options)]
        )
        limit = (
            self._spec.max_seq_length
            if self._spec
            else self.options.max_seq_length or DEFAULT_MAX_SEQ_LENGTH
        )
        # Word pieces of a text the model sees ([CLS] and [SEP] take two); the rest is cut off.
        self.max_input_tokens = limit - 2

    def embed_batch(self, texts: list[str], input_type: InputType) -> list[list[float]]:
        prefix = (
            self.options.query_prefix if input_type == "query" else self.options.document_prefix
        )
        vectors = self.load().encode([prefix + t for t in texts] if prefix else texts)
        rows: list[list[float]] = vectors.tolist()
        return rows

    def load(self) -> SentenceEncoder:
        """The loaded model (loading it on the first call; later calls return the same one)."""
        encoder = self._encoder
        if encoder is not None:
            return encoder
        with self._lock:
            if self._encoder is None:
                from engram_local.runtime import SentenceEncoder

                spec = self._spec or read_spec(
                    locate_model(self.options), self.options.max_seq_length
                )
                if spec.dimension != self.dimension:
                    raise EmbedderError(
                        f"the model in {spec.folder} makes {spec.dimension}-dim vectors, not "
                        f"{self.dimension} as {self.model} should; reinstall the model files"
                    )
                self._encoder = SentenceEncoder(
                    spec,
                    batch_size=self.options.batch_size,
                    threads=self.threads,
                    precision=self.options.precision,
                    int8_cache=self.options.int8_cache,
                )
            return self._encoder
