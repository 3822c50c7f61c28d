"""Write-time dedup and contradiction: what a new memory does to the memories already stored.

For a memory about to be written in a scope (seed constants, ``[lifecycle]`` keys):

1. the ``neighbours`` (25) nearest live memories of the same scope, by cosine distance
   (``1 - cosine``) between the new memory's text and theirs;
2. those within ``contradiction_distance`` (0.5; 0.75 for structural types) are shown to the
   extractor's contradiction check, which names the stale ones;
3. the nearest neighbour of the same type within ``duplicate_distance`` (0.12; 0.25 for
   structural types) that is not stale is the duplicate: the memory is merged into it (the file
   is updated in place) instead of written again;
4. every stale memory is superseded (kept on disk as history, hidden from search).

The seed skipped the contradiction check for duplicates. A reversal ("prefers tabs" → "prefers
spaces") is a near-duplicate by embedding distance, so skipping it would overwrite the old
preference and lose it; here the check runs first and a stale neighbour is never the duplicate.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from engram.config import LifecycleConfig
from engram.filters import And, Eq, Filter, matches
from engram.memory_files import MEMORY_ID
from engram.models import ExtractedMemory, Hit, KnownMemory
from engram.protocols import ChecksContradictions, Extractor, ReportsFailures, Store
from engram.scopes import FolderScope

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Neighbour:
    """A stored memory close to the new one."""

    id: str
    document_id: str
    type: str | None
    distance: float
    memory: KnownMemory


@dataclass
class WritePlan:
    """What writing the new memory does: merge into ``duplicate`` (the same fact: the old
    wording is kept as a revision), or write a new file that supersedes ``stale`` (a judged
    reversal), links ``conflicts`` (maybe a reversal, not sure: both stay live, newest shown
    first) and ``related`` (close, but something that carries meaning differs: both stay)."""

    duplicate: Neighbour | None = None
    stale: list[Neighbour] = field(default_factory=list)
    conflicts: list[Neighbour] = field(default_factory=list)
    related: list[Neighbour] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def live_in_scope(scope: FolderScope) -> Filter:
    """Live memories of one memory folder (vault notes and history excluded)."""
    return And(
        filters=[
            Eq(field="source", value="memory"),
            Eq(field="memory_scope", value=scope),
            Eq(field="live", value=True),
        ]
    )


def find_neighbours(
    store: Store,
    vector: Sequence[float],
    scope: FolderScope,
    limit: int,
    read: Callable[[str], KnownMemory | None],
) -> list[Neighbour]:
    """The ``limit`` nearest live memories of ``scope``, nearest first, one per memory file.

    ``read`` turns a document id into the memory as stored (None when the file is gone).
    """
    flt = live_in_scope(scope)
    pool = limit * 3  # a long memory has several chunks; ask for more than `limit` files
    if "filter" in store.capabilities:
        hits = store.vector_search(vector, pool, flt)
    else:
        hits = [h for h in store.vector_search(vector, pool * 4) if matches(flt, h.chunk.metadata)]
    best: dict[str, Hit] = {}
    for hit in hits:
        best.setdefault(hit.chunk.document_id, hit)
    out: list[Neighbour] = []
    for doc_id, hit in sorted(best.items(), key=lambda pair: -pair[1].score):
        memory_id = hit.chunk.metadata.get("id")
        if not isinstance(memory_id, str) or not MEMORY_ID.match(memory_id):
            continue  # a hand-written note in the memory folder: never merged into
        known = read(doc_id)
        if known is None:
            continue
        kind = hit.chunk.metadata.get("type")
        out.append(
            Neighbour(
                id=memory_id,
                document_id=doc_id,
                type=kind if isinstance(kind, str) else None,
                distance=max(0.0, 1.0 - hit.score),
                memory=known,
            )
        )
        if len(out) >= limit:
            break
    return out


def plan_write(
    new: ExtractedMemory,
    neighbours: Sequence[Neighbour],
    rules: LifecycleConfig,
    extractor: Extractor | None,
) -> WritePlan:
    """Decide what writing ``new`` does, given its ``neighbours`` (nearest first)."""
    plan = WritePlan()
    limit = rules.contradiction_limit(new.type)
    candidates = [n for n in neighbours if n.distance <= limit]
    stale_ids: set[str] = set()
    if candidates and isinstance(extractor, ChecksContradictions):
        try:
            stale_ids = set(extractor.find_contradictions(new, [n.memory for n in candidates]))
        except Exception as exc:  # someone else's code, maybe a model behind a network
            log.warning("contradiction check failed: %s", exc)
            plan.warnings.append(
                f"the contradiction check failed ({type(exc).__name__}: {exc}); nothing was "
                "superseded"
            )
        if isinstance(extractor, ReportsFailures) and extractor.last_error:
            plan.warnings.append(f"contradiction check: {extractor.last_error}")
    plan.stale = [n for n in candidates if n.id in stale_ids]
    for neighbour in neighbours:
        if neighbour.distance > rules.duplicate_limit(new.type):
            break
        if neighbour.id not in stale_ids and neighbour.type == new.type:
            plan.duplicate = neighbour
            break
    return plan


def document_path(document_id: str, project_root: Path) -> Path:
    """The file a memory document id names (ids are project-relative, or absolute outside)."""
    path = Path(document_id)
    return path if path.is_absolute() else project_root / path
