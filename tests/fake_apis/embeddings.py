"""What the embeddings wires share: their token count, their vectors, and what was embedded.

Vectors are deterministic and similarity-preserving: ``hash_vectors`` gives engram's
feature-hashing embedder's, so the same text always gets the same vector.
"""

from __future__ import annotations

import base64
import re
from typing import Any

import numpy as np

from engram.default_plugins.hash_embedder import HashEmbedder, HashEmbedderOptions
from fake_apis.server import FakeApi

_WORDS = re.compile(r"\w+|[^\w\s]")


def count_tokens(text: str) -> int:
    """A fake server's token count: words and punctuation marks (at most the UTF-8 size)."""
    return len(_WORDS.findall(text))


def hash_vectors(texts: list[str], dimension: int) -> list[list[float]]:
    return HashEmbedder(HashEmbedderOptions(dimension=dimension)).embed_batch(texts, "document")


def encode_vector(vector: list[float], encoding: str | None) -> Any:
    """A vector as the wire carries it: a list of floats, or base64 of little-endian float32."""
    if encoding == "base64":
        return base64.b64encode(np.asarray(vector, dtype="<f4").tobytes()).decode("ascii")
    return vector


def input_texts(body: Any) -> list[str] | None:
    """The ``input`` of an embeddings request as a list, or None when it is not strings."""
    texts = body.get("input") if isinstance(body, dict) else None
    if isinstance(texts, str):
        texts = [texts]
    if not isinstance(texts, list) or not texts or not all(isinstance(t, str) for t in texts):
        return None
    return texts


def embedded_inputs(api: FakeApi[Any]) -> list[str]:
    """Every input text of the requests answered normally (200, not scripted), in order."""
    out: list[str] = []
    for request in list(api.requests):
        if request.status == 200 and not request.scripted:
            out.extend(input_texts(request.body) or [])
    return out
