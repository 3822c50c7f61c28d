"""``BaseEmbedder``: batching and output checks shared by embedder plugins.

A subclass sets ``name``, ``model``, ``dimension`` and ``max_batch`` and implements
``embed_batch``. ``embed`` splits the input into batches and checks every answer (count,
dimension, finite values), so a provider's bad response becomes one clear ``EmbedderError``
instead of a corrupt index. Errors that are not engram's own (network, SDK) are wrapped in
``EmbedderError`` naming the embedder; engram errors (``MissingKeyError`` …) pass unchanged.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Any, get_args

import numpy as np

from engram.errors import EmbedderError, EngramError
from engram.models import InputType

_INPUT_TYPES: tuple[str, ...] = get_args(InputType)


class BaseEmbedder(ABC):
    """Implements the ``Embedder`` protocol's ``embed`` on top of ``embed_batch``."""

    name: str
    model: str
    dimension: int
    max_batch: int = 64

    @abstractmethod
    def embed_batch(self, texts: list[str], input_type: InputType) -> list[list[float]]:
        """Embed at most ``max_batch`` texts; return one vector of ``dimension`` floats per text."""

    def describe(self) -> str:
        """The embedder's identity as shown in messages: ``name/model (N dims)``."""
        return f"{self.name}/{self.model} ({self.dimension} dims)"

    def embed(self, texts: Sequence[str], input_type: InputType = "document") -> list[list[float]]:
        """Embed ``texts`` in batches of ``max_batch``; the output keeps the input order."""
        items = self._check_input(texts, input_type)
        if self.max_batch < 1:
            raise EmbedderError(
                f"{type(self).__name__}.max_batch is {self.max_batch}; set it to 1 or more"
            )
        out: list[list[float]] = []
        for start in range(0, len(items), self.max_batch):
            batch = items[start : start + self.max_batch]
            last = start + len(batch) - 1
            try:
                vectors = self.embed_batch(batch, input_type)
            except EngramError:
                raise
            except Exception as exc:
                raise EmbedderError(
                    f"embedder {self.describe()} failed on texts {start}..{last}: "
                    f"{type(exc).__name__}: {exc}; check the provider (network, API key, quota) "
                    f"and try again"
                ) from exc
            out.extend(self._check_output(vectors, len(batch), start))
        return out

    def _check_input(self, texts: Sequence[str], input_type: str) -> list[str]:
        if isinstance(texts, str):
            raise EmbedderError(
                "embed() takes a list of texts, got a single string; wrap it: embed([text])"
            )
        if input_type not in _INPUT_TYPES:
            raise EmbedderError(
                f"input_type must be one of {', '.join(_INPUT_TYPES)}, got {input_type!r}"
            )
        items = list(texts)
        for i, text in enumerate(items):
            if not isinstance(text, str):
                raise EmbedderError(
                    f"text {i} is a {type(text).__name__}, not a str; pass strings only"
                )
        return items

    def _check_output(self, vectors: Any, expected: int, start: int) -> list[list[float]]:
        where = f"embedder {self.describe()}"
        try:
            count = len(vectors)
        except TypeError:
            raise EmbedderError(
                f"{where} returned a {type(vectors).__name__}, not a list of vectors; "
                f"fix its embed_batch"
            ) from None
        if count != expected:
            raise EmbedderError(
                f"{where} returned {count} vectors for {expected} texts (from text {start}); "
                f"the provider's answer is incomplete: retry, or lower max_batch"
            )
        try:
            matrix = np.asarray(vectors, dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise EmbedderError(
                f"{where} returned vectors that are not lists of numbers of one length ({exc}); "
                f"fix its embed_batch"
            ) from None
        if expected == 0:
            return []
        if matrix.ndim != 2 or matrix.shape[1] != self.dimension:
            got = matrix.shape[1] if matrix.ndim == 2 else "ragged"
            raise EmbedderError(
                f"{where} returned vectors of {got} dims, expected {self.dimension}; set the "
                f"embedder's dimension option to what the model returns"
            )
        bad = np.nonzero(~np.isfinite(matrix).all(axis=1))[0]
        if bad.size:
            raise EmbedderError(
                f"{where} returned NaN or infinite values for text {start + int(bad[0])}; "
                f"the provider's answer is unusable: retry, or report it to the provider"
            )
        rows: list[list[float]] = matrix.tolist()
        return rows
