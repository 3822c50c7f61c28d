"""Token budgets without a tokenizer: a text's tokens are bounded by its UTF-8 length in bytes
(a byte-level BPE token, as in OpenAI's tokenizers, covers at least one byte), which needs no
download (tiktoken fetches its tables at run time) and never underestimates. ``split_text``
cuts a text into pieces within a budget; ``plan_requests`` groups texts into requests within an
API's input and token limits; ``embed_in_requests`` does both for an embedder."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from engram.errors import ConfigError, EmbedderError
from engram.usage.retry import MalformedResponse, Meter

LongTexts = Literal["truncate", "split"]
_SURROGATE = re.compile("[\ud800-\udfff]")
_MIN_BUDGET = 16  # bytes: room for any UTF-8 character plus some text


def clean_text(text: str) -> str:
    """``text`` as an API can take it: lone surrogates (from odd files) become U+FFFD, and an
    empty text becomes one space (the APIs reject empty strings)."""
    return _SURROGATE.sub("\ufffd", text) or " "


def token_bound(text: str) -> int:
    """An upper bound of the tokens any byte-level tokenizer makes of ``text``: its UTF-8 size."""
    return len(text.encode("utf-8", "surrogatepass"))


def split_text(text: str, max_tokens: int, max_pieces: int | None = None) -> list[str]:
    """``text`` cut into pieces of at most ``max_tokens`` (by ``token_bound``), at whitespace
    where there is some in the second half of a piece, never inside a character; only the first
    ``max_pieces`` pieces when given (``1`` truncates)."""
    if max_tokens < _MIN_BUDGET:
        raise ConfigError(f"a token budget of {max_tokens} is too small; use {_MIN_BUDGET} or more")
    data = text.encode("utf-8", "surrogatepass")
    if len(data) <= max_tokens:
        return [text]
    pieces: list[str] = []
    start = 0
    while start < len(data) and (max_pieces is None or len(pieces) < max_pieces):
        end = min(start + max_tokens, len(data))
        if end < len(data):
            while (data[end] & 0xC0) == 0x80:  # a continuation byte: back up to the char start
                end -= 1
            floor = start + max_tokens // 2
            space = max(data.rfind(b" ", floor, end), data.rfind(b"\n", floor, end))
            if space > start:
                end = space + 1
        pieces.append(data[start:end].decode("utf-8", "surrogatepass"))
        start = end
    return pieces


def plan_requests(sizes: Sequence[int], max_inputs: int, max_tokens: int) -> list[range]:
    """Consecutive groups of texts (as index ranges) with at most ``max_inputs`` texts and
    ``max_tokens`` tokens each. Every size must already be within ``max_tokens``."""
    groups: list[range] = []
    start, total = 0, 0
    for i, size in enumerate(sizes):
        if size > max_tokens:
            raise ConfigError(
                f"text {i} has {size} tokens, more than the {max_tokens} a request may hold; "
                "lower max_input_tokens below max_request_tokens"
            )
        if i > start and (i - start >= max_inputs or total + size > max_tokens):
            groups.append(range(start, i))
            start, total = i, 0
        total += size
    if start < len(sizes):
        groups.append(range(start, len(sizes)))
    return groups


@dataclass(frozen=True, slots=True)
class RequestLimits:
    """What one request to an API may hold, in texts and in tokens (by ``token_bound``)."""

    max_inputs: int
    max_request_tokens: int
    max_input_tokens: int


def embed_in_requests(
    texts: Sequence[str],
    send: Callable[[list[str]], tuple[list[list[float]], int]],
    *,
    meter: Meter,
    limits: RequestLimits,
    long_texts: LongTexts,
    dimension: int,
) -> list[list[float]]:
    """Embed ``texts`` in as few requests as the limits allow; one vector per text, in order.

    ``send`` makes one HTTP request for a list of texts and returns (vectors, billed tokens).
    A text over ``max_input_tokens`` is truncated to its first piece, or with
    ``long_texts="split"`` embedded piece by piece and averaged (weighted by piece size, then
    scaled to length 1).
    """
    keep = 1 if long_texts == "truncate" else None
    pieces = [split_text(clean_text(t), limits.max_input_tokens, keep) for t in texts]
    flat = [p for parts in pieces for p in parts]
    sizes = [token_bound(p) for p in flat]
    vectors: list[list[float]] = []
    for group in plan_requests(sizes, limits.max_inputs, limits.max_request_tokens):
        batch = flat[group.start : group.stop]
        vectors.extend(meter.call(_checked(send, batch), texts=len(batch)))
    for vector in vectors:
        if len(vector) != dimension:
            raise EmbedderError(
                f"{meter.provider}/{meter.model} returned vectors of {len(vector)} dims, "
                f"expected {dimension}; set the embedder's dimension option to what the model "
                "returns"
            )
    out: list[list[float]] = []
    at = 0
    for parts in pieces:
        n = len(parts)
        out.append(vectors[at] if n == 1 else _mean(vectors[at : at + n], sizes[at : at + n]))
        at += n
    return out


def _checked(
    send: Callable[[list[str]], tuple[list[list[float]], int]], batch: list[str]
) -> Callable[[], tuple[list[list[float]], int]]:
    def request() -> tuple[list[list[float]], int]:
        vectors, tokens = send(batch)
        if len(vectors) != len(batch):
            raise MalformedResponse(f"{len(vectors)} vectors for {len(batch)} inputs")
        return vectors, tokens

    return request


def _mean(vectors: list[list[float]], weights: list[int]) -> list[float]:
    """Weighted mean of piece vectors, scaled to length 1 (cosine is all that is compared)."""
    matrix = np.asarray(vectors, dtype=np.float64)
    mean = np.average(matrix, axis=0, weights=np.asarray(weights, dtype=np.float64))
    norm = float(np.linalg.norm(mean))
    result: list[float] = (mean / norm if norm > 0 else mean).tolist()
    return result
