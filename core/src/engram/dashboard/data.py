"""What the dashboard shows, as JSON-able data, read from an open memory and never written.

Every page has a JSON twin under ``/api/``, built from these same functions, so scripts and
tests see exactly what a person sees.
"""

from __future__ import annotations

import time
from collections import Counter
from pathlib import Path
from typing import Any

from engram import __version__
from engram.chunking import read_frontmatter
from engram.dashboard import activity
from engram.errors import EngramError, MemoryNotFound
from engram.ingest.sources import SourceNamer
from engram.keeper import Keeper
from engram.memories.files import info_from
from engram.memories.judge.slots import same_subject
from engram.memories.subjects import subject_key
from engram.memory import Memory
from engram.models import Document, MemoryInfo
from engram.stores.origins import ORIGIN_NAME_KEY, TEXT_KEY, OriginStore
from engram.text.redact import strip_private, strip_private_data
from engram.usage import UsageLedger, ledger_path

DAY = 86_400.0


class DashboardData:
    """One open memory behind a lock: the server answers requests on worker threads, and a
    store's connection is used by one of them at a time."""

    def __init__(self, memory: Memory | Keeper) -> None:
        # The keeper reopens (and heals) the index when it is replaced, removed or damaged
        # while the dashboard runs; its lock serialises the worker threads' reads.
        self.keeper = memory if isinstance(memory, Keeper) else Keeper(memory)
        memory = self.keeper.memory
        self.ledger = ledger_path(memory.config)
        config = memory.config
        collections = config.resolve(config.memory.collections_dir)
        self.source_of = SourceNamer(config.root, [f.path for f in memory.folders], collections)

    @property
    def memory(self) -> Memory:
        return self.keeper.memory

    def health(self) -> dict[str, Any]:
        documents = len(self.keeper.run(lambda m: m.store.list_documents()))
        return {
            "status": "ok",
            "version": __version__,
            "project": str(self.memory.config.root.resolve()),
            "store": self.memory.config.store.backend,
            "embedder": self.memory.config.embedder.provider,
            "documents": documents,
        }

    def memories(
        self,
        *,
        type: str | None = None,
        scope: str | None = None,
        subject: str | None = None,
        history: bool = False,
    ) -> dict[str, Any]:
        """Memory files by type and scope (counts over all of them) and the ones asked for;
        ``subject`` matches as ``engram list --subject`` does (any case, "Darrieux" finds
        "Danielle Darrieux")."""
        every = self.keeper.run(lambda m: m.list_memories(include_superseded=True))
        live = [m for m in every if m.live]
        shown = [
            m
            for m in (every if history else live)
            if (type is None or m.type == type)
            and (scope is None or m.scope == scope)
            and (subject is None or same_subject(m.subject, subject) is True)
        ]
        return {
            "by_type": dict(sorted(Counter(m.type or "note" for m in live).items())),
            "by_scope": dict(sorted(Counter(m.scope or "project" for m in live).items())),
            "history": len(every) - len(live),
            "subject": subject,
            "memories": [_info(m) for m in shown],
        }

    def subjects(self) -> dict[str, Any]:
        """What the live memories are about: each subject (as most of its memories write it)
        with how many memories name it, most first, and how many name none. Subjects that
        differ only in case or spacing are one."""
        every = self.keeper.run(lambda m: m.list_memories())
        spellings: dict[str, Counter[str]] = {}
        without = 0
        for m in every:  # newest first: of two spellings as common, the newest is shown
            written = " ".join((m.subject or "").split())
            key = subject_key(written)
            if not key:
                without += 1
                continue
            spellings.setdefault(key, Counter())[written] += 1
        ranked = sorted(spellings.items(), key=lambda pair: (-pair[1].total(), pair[0]))
        rows = [
            {"subject": names.most_common(1)[0][0], "key": key, "memories": names.total()}
            for key, names in ranked
        ]
        return {"subjects": rows, "without_subject": without}

    def search(self, query: str, limit: int = 10) -> dict[str, Any]:
        """engram's search, as ``engram search`` runs it (``Memory.search``, the one entry:
        memory history left out, a type the query names first)."""
        result = self.keeper.run(lambda m: m.search(query, limit=limit, count_access=False))
        hits = []
        for hit in result.hits:
            meta = hit.chunk.metadata
            # Another machine's document on a shared store is named by its stored id, and its
            # page is read from the server.
            elsewhere = self._foreign(hit.chunk.document_id)
            path = (
                hit.chunk.document_id if elsewhere else str(meta.get("path", hit.chunk.document_id))
            )
            ref = _memory_ref(meta) if "memory_scope" in meta else None
            hits.append(
                {
                    "id": hit.chunk.id,  # the chunk's, as `engram search --json` names it
                    "path": path,
                    "title": str(meta.get("title", "")),
                    "type": meta.get("type"),
                    "source": meta.get("source"),
                    "origin": meta.get(ORIGIN_NAME_KEY),
                    "score": round(hit.score, 4),
                    "snippet": hit.chunk.text[:400],
                    # The memory page's reference, for a memory file (not a vault note).
                    "memory": path if elsewhere and ref else ref,
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
        """A memory's frontmatter, text, supersede chain and every wording of the chain, oldest
        first (``MemoryNotFound`` when unknown)."""
        if self._foreign(id_or_path):
            return self._foreign_page(id_or_path)
        chain = self.keeper.run(lambda m: m.history(id_or_path))
        info = chain.memory
        text = (self.memory.config.root / info.path).read_text(encoding="utf-8")
        parsed = read_frontmatter(text)
        return {
            "memory": _info(info),
            # A hand-edited file may hold <private> spans: shown nowhere, here neither.
            "frontmatter": strip_private_data(parsed.metadata),
            "text": strip_private(parsed.body),
            "chain": [_info(m) for m in chain.chain],
            "entries": [e.model_dump(mode="json") for e in chain.entries],
        }

    def _foreign(self, some_id: str) -> bool:
        store = self.memory.store
        return isinstance(store, OriginStore) and store.foreign(some_id)

    def _foreign_page(self, stored_id: str) -> dict[str, Any]:
        """Another machine's memory, read-only from the text the shared store keeps: its own
        machine holds its history (``read_only`` says so)."""

        def read(memory: Memory) -> Document | None:
            store = memory.store
            assert isinstance(store, OriginStore)
            return store.foreign_document(stored_id)

        record = self.keeper.run(read)
        text = record.metadata.get(TEXT_KEY) if record is not None else None
        if record is None or not isinstance(text, str):
            raise MemoryNotFound(f"{stored_id} is not on the shared store (or keeps no text)")
        parsed = read_frontmatter(strip_private(text))
        info = info_from(parsed.metadata, Path(stored_id), Path("/"))
        return {
            "memory": _info(info.model_copy(update={"path": stored_id})),
            "frontmatter": parsed.metadata,
            "text": parsed.body,
            "chain": [],
            "entries": [],
            "read_only": True,
            "origin": record.metadata.get(ORIGIN_NAME_KEY),
        }

    def index(self) -> dict[str, Any]:
        """Documents and chunks per source (vault notes, memories, collections, sessions), when
        each was last indexed, the identity of the index (embedder, model, dimension, chunker)
        and the embedding cache's size."""
        counts, identity = self.keeper.run(lambda m: (m.stats(), m.store.get_identity()))
        sources = {
            name: {
                "documents": s["documents"],
                "chunks": s["chunks"],
                "pending": s["keyword_only"],
                "last_indexed": activity.when(s["last_indexed"]),
            }
            for name, s in counts["sources"].items()
        }
        return {
            "store": counts["store"],
            "embedder": counts["embedder"],
            "identity": identity.describe() if identity else None,
            "documents": counts["documents"],
            "chunks": counts["chunks"],
            "sources": sources,
            "embedding_cache": counts["cache"],
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
        """What happened lately, newest first, from everything engram records durably (see
        ``engram.dashboard.activity``): errors included, and what is not recorded said."""
        documents, every = self.keeper.run(
            lambda m: (m.store.list_documents(), m.list_memories(include_superseded=True))
        )
        events = [
            *activity.index_events(documents, self.source_of),
            *activity.memory_events(every),
            *activity.capture_events(self.memory.memory_dir),
            *activity.request_events(self.ledger, limit),
        ]
        return activity.newest(events, limit)


def _info(m: MemoryInfo) -> dict[str, Any]:
    data = m.model_dump(mode="json")
    data["live"] = m.live
    return data


def _memory_ref(meta: dict[str, Any]) -> str | None:
    """What ``/memory/…`` takes for a memory's chunk: its id, else its path."""
    ref = meta.get("id") or meta.get("path")
    return ref if isinstance(ref, str) and ref else None
