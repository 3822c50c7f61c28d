"""What an open memory holds, counted once for everyone who shows it: ``engram stats`` and
``engram doctor``, the ``memory_stats`` tool and the dashboard's index page all read
``collect`` (a test holds the three to the same numbers on a real store).

Documents and chunks are counted per source as a person names it (``engram.ingest.sources``: vault
notes, memories, collections, sessions); memories (the live files of the memory folders) per
type and per scope; a document without a content hash is keyword-only (its embedder failed; the
next index embeds it).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict
from typing import Any

from engram.config import EngramConfig
from engram.embedding.cache import EmbeddingCache
from engram.ingest.engine import chunk_ids
from engram.ingest.sources import SourceNamer
from engram.memories.scopes import MemoryFolder
from engram.models import MemoryInfo
from engram.protocols import Store


def collect(
    config: EngramConfig,
    store: Store,
    cache: EmbeddingCache | None,
    folders: Sequence[MemoryFolder],
    every: Sequence[MemoryInfo],
) -> dict[str, Any]:
    """The counts of an open memory (``Memory.stats`` passes its parts; ``every``: all its
    memory files, history included), JSON-able; ``last_indexed`` is a Unix time or None."""
    documents = store.list_documents()
    identity = store.get_identity()
    name_of = SourceNamer(
        config.root, [f.path for f in folders], config.resolve(config.memory.collections_dir)
    )
    sources: dict[str, dict[str, Any]] = {}
    for doc in documents.values():
        entry = sources.setdefault(
            name_of(doc.metadata),
            {"documents": 0, "chunks": 0, "keyword_only": 0, "last_indexed": None},
        )
        entry["documents"] += 1
        entry["chunks"] += len(chunk_ids(doc))
        entry["keyword_only"] += 0 if doc.hash else 1
        at = doc.metadata.get("indexed_at")
        if isinstance(at, int | float) and (entry["last_indexed"] or 0) < at:
            entry["last_indexed"] = at
    live = [m for m in every if m.live]
    return {
        "store": config.store.backend,
        "embedder": config.embedder.provider,
        "identity": identity.model_dump() if identity else None,
        "documents": len(documents),
        "chunks": store.count(),
        "keyword_only": sum(s["keyword_only"] for s in sources.values()),
        "sources": dict(sorted(sources.items())),
        "documents_by_source": {name: s["documents"] for name, s in sorted(sources.items())},
        "memories": len(live),
        "memories_by_type": dict(sorted(Counter(m.type or "note" for m in live).items())),
        "memories_by_scope": dict(sorted(Counter(m.scope or "project" for m in live).items())),
        "history": len(every) - len(live),
        "memory_dir": str(folders[0].path),
        "cache": asdict(cache.stats()) if cache else None,
        "root": str(config.root),
    }
