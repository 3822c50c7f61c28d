"""The change log: how every client's keyword index learns what any client wrote.

Before each Chroma write (one batch of an upsert or a delete) the writer adds one record to the
``<collection>__engram_log`` collection: a random stamp as its id, the operation, the ids it is
about to write or delete, and the writer's clock. Upserted chunks carry the stamp
(``engram:stamp``). Log records are only ever added, so ``count()`` of the log grows with every
write: an index that has seen that many records is in step. ``reset`` drops the log with
everything else; the new log has a new collection id, which the index also checks.

An index catches up by *re-reading* from Chroma the ids named by records it has not seen and
indexing what is there now, so it converges on Chroma's contents whatever order writes
interleave in. A record whose write may still be in flight (its upserted ids do not all carry
its stamp yet, or its deleted ids are not all gone) stays *pending* and is re-read at every
refresh, for ``PENDING_TTL`` seconds of the reader's own clock: data that lands after the record
was first seen, even from a writer that died half-way, is still found. The writer itself
applies its own batch to its index right after the write and marks the record seen.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from chromadb.api.models.Collection import Collection

OP_KEY = "engram:op"
IDS_KEY = "engram:ids"
AT_KEY = "engram:at"
PENDING_TTL = 300.0  # seconds a write may take to land after its record (one Chroma call)
Op = Literal["upsert", "delete"]
ONE = np.ones((1, 1), dtype=np.float32)  # the embedding of a bookkeeping record
PAGE = 5000  # ids per Chroma read: below its request limits, large enough to be quick


@dataclass(frozen=True)
class Entry:
    """One log record: the write's stamp, what it does, to which ids, and when it began."""

    stamp: str
    op: Op
    ids: tuple[str, ...]
    at: float


def new_stamp() -> str:
    return uuid.uuid4().hex


def announce(log: Collection, stamp: str, op: Op, ids: Sequence[str]) -> None:
    """Add the record of a write that is about to happen."""
    metadata: dict[str, Any] = {
        OP_KEY: op,
        IDS_KEY: json.dumps(list(ids), ensure_ascii=False),
        AT_KEY: time.time(),
    }
    log.add(ids=[stamp], embeddings=ONE, metadatas=[metadata])


def record_ids(log: Collection) -> list[str]:
    """Every record id in the log, in one read (ids only: a few bytes per write)."""
    return list(log.get(include=[])["ids"])


def read(log: Collection, stamps: Sequence[str]) -> list[Entry]:
    entries: list[Entry] = []
    for batch in batched(stamps, PAGE):
        got = log.get(ids=list(batch), include=["metadatas"])
        for stamp, meta in zip(got["ids"], got["metadatas"] or [], strict=True):
            meta = meta or {}
            op: Op = "delete" if meta.get(OP_KEY) == "delete" else "upsert"
            ids = tuple(json.loads(str(meta.get(IDS_KEY, "[]"))))
            at = meta.get(AT_KEY, 0.0)
            entries.append(Entry(stamp, op, ids, float(at) if isinstance(at, int | float) else 0.0))
    return entries


def batched(items: Sequence[str], size: int) -> Iterator[Sequence[str]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]
