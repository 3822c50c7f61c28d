"""Bring a keyword index in step with the Chroma collection by replaying the change log.

See ``changelog.py`` for the protocol. ``refresh`` costs one ``count()`` when nothing changed, a
re-read of the ids other clients wrote after they wrote, and a full rebuild only when the log is
new to this index (first use, another index file, or after a ``reset`` by another client).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import cast

from chromadb.api.models.Collection import Collection
from chromadb.api.types import Where

from engram_chroma import changelog
from engram_chroma.changelog import Entry, Op
from engram_chroma.connection import Collections
from engram_chroma.keyword import KeywordIndex
from engram_chroma.records import STAMP_KEY

LOG_ID = "log_collection"
RECENT = 3600.0  # at a rebuild, log records younger than this (writer's clock) are re-checked


def refresh(index: KeywordIndex, cols: Collections) -> None:
    """Apply every write the index has not seen (a full rebuild if the log is unknown to it)."""
    with index.transaction():
        if index.state(LOG_ID) != str(cols.log.id):
            _rebuild(index, cols)
            return
        pending = index.pending()
        now = time.time()
        if cols.log.count() != index.seen_count():
            unseen = index.unseen(changelog.record_ids(cols.log))
            for entry in changelog.read(cols.log, unseen):
                pending[entry.stamp] = (entry, now)
            index.mark_seen(unseen)
        if pending:
            _settle(index, cols.chunks, pending, now)


def apply_own(
    index: KeywordIndex, stamp: str, op: Op, ids: Sequence[str], texts: Sequence[str] = ()
) -> None:
    """The writer's own batch, which it knows, straight into its index (no re-read needed)."""
    with index.transaction():
        if op == "upsert":
            index.replace(zip(ids, texts, strict=True))
        else:
            index.remove(ids)
        index.mark_seen([stamp])


def reset(index: KeywordIndex, cols: Collections) -> None:
    """An empty index, in step with a freshly created (empty) log."""
    with index.transaction():
        index.clear()
        index.set_state(LOG_ID, str(cols.log.id))


def _settle(
    index: KeywordIndex, chunks: Collection, writes: dict[str, tuple[Entry, float]], now: float
) -> None:
    """Re-read every id the writes name, index what Chroma holds now, and keep pending the
    writes that may still be landing."""
    ids = sorted({i for entry, _ in writes.values() for i in entry.ids})
    current = _current(chunks, ids)
    index.remove(i for i in ids if i not in current)
    index.replace((i, text) for i, (text, _) in current.items())
    _keep_pending(index, writes, {i: stamp for i, (_, stamp) in current.items()}, now)


def _keep_pending(
    index: KeywordIndex,
    writes: dict[str, tuple[Entry, float]],
    stamps: dict[str, str],
    now: float,
) -> None:
    """Drop the writes that have landed (or waited too long); keep the others pending.
    ``stamps`` maps ids (at least those the writes name) to the stamp Chroma holds for them."""
    finished: list[str] = []
    for stamp, (entry, since) in writes.items():
        if entry.op == "upsert":
            landed = all(stamps.get(i) == stamp for i in entry.ids)
        else:
            landed = all(i not in stamps for i in entry.ids)
        if landed or now - since > changelog.PENDING_TTL:
            finished.append(stamp)
        else:
            index.set_pending(entry, since)
    index.drop_pending(finished)


def _current(chunks: Collection, ids: Sequence[str]) -> dict[str, tuple[str, str]]:
    """{id: (text, stamp)} of those of ``ids`` that exist."""
    out: dict[str, tuple[str, str]] = {}
    for batch in changelog.batched(ids, changelog.PAGE):
        got = chunks.get(ids=list(batch), include=["documents", "metadatas"])
        documents = got["documents"] or []
        metadatas = got["metadatas"] or []
        for i, text, meta in zip(got["ids"], documents, metadatas, strict=True):
            out[i] = (text or "", str((meta or {}).get(STAMP_KEY, "")))
    return out


def _rebuild(index: KeywordIndex, cols: Collections) -> None:
    """Index every chunk; recent writes that had not landed at the scan stay pending."""
    index.clear()
    now = time.time()
    records = changelog.record_ids(cols.log)
    recent_where = cast(Where, {changelog.AT_KEY: {"$gte": now - RECENT}})
    recent = cols.log.get(where=recent_where, include=[])["ids"]
    stamps: dict[str, str] = {}
    ids = sorted(cols.chunks.get(include=[])["ids"])
    for batch in changelog.batched(ids, changelog.PAGE):
        current = _current(cols.chunks, batch)
        index.replace(((i, text) for i, (text, _) in current.items()), fresh=True)
        stamps.update((i, stamp) for i, (_, stamp) in current.items())
    index.mark_seen(records)
    index.set_state(LOG_ID, str(cols.log.id))
    writes = {e.stamp: (e, now) for e in changelog.read(cols.log, recent)}
    _keep_pending(index, writes, stamps, now)
