"""What the dashboard shows, as JSON-able data, read from an open memory and never written.

Every page has a JSON twin under ``/api/``, built from these same functions, so scripts and
tests see exactly what a person sees.
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from engram import __version__
from engram.chunking import read_frontmatter
from engram.errors import EngramError
from engram.ingest.engine import chunk_ids
from engram.memory import Memory
from engram.models import MemoryInfo
from engram.usage import UsageLedger, ledger_path

DAY = 86_400.0


class DashboardData:
    """One open memory behind a lock: the server answers requests on worker threads, and a
    store's connection is used by one of them at a time."""

    def __init__(self, memory: Memory) -> None:
        self.memory = memory
        self.ledger = ledger_path(memory.config)
        config = memory.config
        self.collections = config.resolve(config.memory.collections_dir).resolve()
        self._lock = threading.Lock()

    def health(self) -> dict[str, Any]:
        with self._lock:
            documents = len(self.memory.store.list_documents())
        return {
            "status": "ok",
            "version": __version__,
            "project": str(self.memory.config.root.resolve()),
            "store": self.memory.config.store.backend,
            "embedder": self.memory.config.embedder.provider,
            "documents": documents,
        }

    def memories(
        self, *, type: str | None = None, scope: str | None = None, history: bool = False
    ) -> dict[str, Any]:
        """Memory files by type and scope (counts over all of them) and the ones asked for."""
        with self._lock:
            every = self.memory.list_memories(include_superseded=True)
        live = [m for m in every if m.live]
        shown = [
            m
            for m in (every if history else live)
            if (type is None or m.type == type) and (scope is None or m.scope == scope)
        ]
        return {
            "by_type": dict(sorted(Counter(m.type or "note" for m in live).items())),
            "by_scope": dict(sorted(Counter(m.scope or "project" for m in live).items())),
            "history": len(every) - len(live),
            "memories": [_info(m) for m in shown],
        }

    def search(self, query: str, limit: int = 10) -> dict[str, Any]:
        """engram's search, as ``engram search`` runs it (memory history left out)."""
        with self._lock:
            result = self.memory.search(query, limit=limit, count_access=False)
        hits = []
        for hit in result.hits:
            meta = hit.chunk.metadata
            hits.append(
                {
                    "path": str(meta.get("path", hit.chunk.document_id)),
                    "title": str(meta.get("title", "")),
                    "type": meta.get("type"),
                    "source": meta.get("source"),
                    "score": round(hit.score, 4),
                    "snippet": hit.chunk.text[:400],
                }
            )
        return {
            "query": query,
            "mode": result.mode,
            "degraded": result.degraded,
            "warnings": result.warnings,
            "hits": hits,
        }

    def memory_page(self, id_or_path: str) -> dict[str, Any]:
        """A memory's frontmatter, text and supersede chain (``MemoryNotFound`` when unknown)."""
        with self._lock:
            chain = self.memory.history(id_or_path)
        info = chain.memory
        text = (self.memory.config.root / info.path).read_text(encoding="utf-8")
        parsed = read_frontmatter(text)
        return {
            "memory": _info(info),
            "frontmatter": parsed.metadata,
            "text": parsed.body,
            "chain": [_info(m) for m in chain.chain],
        }

    def index(self) -> dict[str, Any]:
        """Documents and chunks per source, when each source was last indexed, and the identity
        of the index (embedder, model, dimension, chunker)."""
        with self._lock:
            documents = self.memory.store.list_documents()
            chunks = self.memory.store.count()
            identity = self.memory.store.get_identity()
        sources: dict[str, dict[str, Any]] = {}
        for doc in documents.values():
            name = _source_of(doc.metadata, self.collections)
            entry = sources.setdefault(
                name, {"documents": 0, "chunks": 0, "pending": 0, "last_indexed": None}
            )
            entry["documents"] += 1
            entry["chunks"] += len(chunk_ids(doc))
            entry["pending"] += 0 if doc.hash else 1
            at = doc.metadata.get("indexed_at")
            if isinstance(at, int | float) and (entry["last_indexed"] or 0) < at:
                entry["last_indexed"] = at
        for entry in sources.values():
            entry["last_indexed"] = _when(entry["last_indexed"])
        return {
            "store": self.memory.config.store.backend,
            "embedder": self.memory.config.embedder.provider,
            "identity": identity.describe() if identity else None,
            "documents": len(documents),
            "chunks": chunks,
            "sources": dict(sorted(sources.items())),
        }

    def usage(self, days: int = 30) -> dict[str, Any]:
        """API requests, tokens and estimated cost per day over the last ``days`` days."""
        since = time.time() - days * DAY
        try:
            with UsageLedger(self.ledger) as book:
                rows = book.summary(["day"], since=since)
        except EngramError as exc:
            return {"ledger": str(self.ledger), "days": [], "error": str(exc)}
        return {
            "ledger": str(self.ledger),
            "days": [
                {
                    "day": row.day,
                    "requests": row.requests,
                    "errors": row.errors,
                    "tokens": row.input_tokens + row.output_tokens,
                    "cost_usd": row.cost_usd,
                }
                for row in rows
            ],
        }

    def activity(self, limit: int = 50) -> dict[str, Any]:
        """What happened lately, newest first: documents indexed (and those waiting for an
        embedder), memories written, API requests with their errors."""
        events = [*self._index_events(), *self._memory_events(), *self._request_events(limit)]
        events.sort(key=lambda e: e["at"], reverse=True)
        recent = events[:limit]
        for event in recent:
            event["when"] = _when(event["at"])
        return {"events": recent, "errors": sum(1 for e in recent if e["error"])}

    def _index_events(self) -> list[dict[str, Any]]:
        with self._lock:
            documents = self.memory.store.list_documents()
        events = []
        for doc_id, doc in documents.items():
            at = doc.metadata.get("indexed_at")
            if not isinstance(at, int | float):
                continue
            waiting = not doc.hash
            events.append(
                {
                    "at": float(at),
                    "kind": "indexed",
                    "what": f"{doc_id} ({_source_of(doc.metadata, self.collections)})",
                    "error": "stored for keyword search only: the embedder failed"
                    if waiting
                    else None,
                }
            )
        return events

    def _memory_events(self) -> list[dict[str, Any]]:
        with self._lock:
            every = self.memory.list_memories(include_superseded=True)
        events = []
        for m in every:
            at = _timestamp(m.touched_at)
            if at is not None:
                kind = "memory updated" if m.updated_at else "memory written"
                events.append({"at": at, "kind": kind, "what": m.title, "error": None})
        return events

    def _request_events(self, limit: int) -> list[dict[str, Any]]:
        try:
            with UsageLedger(self.ledger) as book:
                rows = book.recent(limit)
        except EngramError as exc:
            return [{"at": time.time(), "kind": "usage ledger", "what": "", "error": str(exc)}]
        return [
            {
                "at": r.at,
                "kind": f"{r.operation} request",
                "what": f"{r.provider}/{r.model}, {r.input_tokens + r.output_tokens} tokens",
                "error": r.error,
            }
            for r in rows
        ]


def _info(m: MemoryInfo) -> dict[str, Any]:
    data = m.model_dump(mode="json")
    data["live"] = m.live
    return data


def _source_of(metadata: dict[str, Any], collections: Path) -> str:
    """Where a document comes from: notes and memories, sessions, or a collection."""
    source = str(metadata.get("source", "unknown"))
    if source != "memory":
        return source
    path = Path(str(metadata.get("path", "")))
    return "collections" if path.is_relative_to(collections) else "notes and memories"


def _timestamp(iso: str | None) -> float | None:
    if not iso:
        return None
    try:
        moment = datetime.fromisoformat(iso)
    except ValueError:
        return None
    return (moment if moment.tzinfo else moment.replace(tzinfo=UTC)).timestamp()


def _when(at: float | None) -> str | None:
    if at is None:
        return None
    return datetime.fromtimestamp(at, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
