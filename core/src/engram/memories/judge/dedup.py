"""Write-time dedup and contradiction: what a new memory does to the memories already stored.

For a memory about to be written in a scope (``[lifecycle]`` keys, docs/memory-lifecycle.md):

1. the ``neighbours`` (25) nearest live memories of the same scope, by cosine distance
   (``1 - cosine``) between the new memory's text and theirs;
2. each one within ``contradiction_distance`` (0.5; 0.75 for structural types) is judged
   (``engram.memories.judge.verdicts``): ``same`` (only within ``duplicate_distance``, 0.12 / 0.25,
   same type, and nothing that carries meaning differs), ``supersedes`` (a confident reversal),
   ``conflicts`` (maybe a reversal), ``related`` (close, but a number, name, polarity or word
   differs) or ``distinct``; past it, nothing (the judge's similarity floor); two memories
   about different subjects (``engram.memories.judge.slots``) are at most related;
3. the nearest ``same`` is the duplicate (merged into); every ``supersedes`` is stale.

The seed merged anything within ``duplicate_distance``: "Invoice INV-2024-0042 was paid" then
"... INV-2024-0043 ..." overwrote the first invoice, and "is walking" → "is not walking" was a
merge. A merge now needs the judge's ``same``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from engram.config import LifecycleConfig
from engram.filters import And, Eq, Filter, matches
from engram.memories.files import MEMORY_ID
from engram.memories.scopes import FolderScope
from engram.models import ExtractedMemory, Hit, KnownMemory
from engram.protocols import ChecksContradictions, Extractor, ReportsFailures, Store

if TYPE_CHECKING:  # the judge is imported by the first write that needs it, never by a read
    from engram.memories.judge.verdicts import Candidate, Verdict

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
    """Decide what writing ``new`` does, given its ``neighbours`` (nearest first): each one
    within the contradiction limit is judged (``engram.memories.judge.verdicts``), and the nearest
    ``same`` is the duplicate."""
    from engram.memories.judge.verdicts import Candidate

    plan = WritePlan()
    limit = rules.judged_limit(new.type)
    near = [n for n in neighbours if n.distance <= limit]
    if not near:
        return plan
    candidates = [Candidate(memory=n.memory, distance=n.distance) for n in near]
    verdicts = _verdicts(new, candidates, rules, extractor, plan.warnings)
    for neighbour, verdict in zip(near, verdicts, strict=True):
        log.debug("judge: %s is %s: %s", neighbour.id, verdict.relation, verdict.reason)
        if verdict.relation == "supersedes":
            plan.stale.append(neighbour)
        elif verdict.relation == "conflicts":
            plan.conflicts.append(neighbour)
        elif verdict.relation == "related":
            plan.related.append(neighbour)
        elif verdict.relation == "same" and plan.duplicate is None:
            plan.duplicate = neighbour
    return plan


def _verdicts(
    new: ExtractedMemory,
    candidates: list[Candidate],
    rules: LifecycleConfig,
    extractor: Extractor | None,
    warnings: list[str],
) -> list[Verdict]:
    """The extractor's verdicts where it judges (a ``same`` checked by ``keep_safe``), else
    the offline judge's, with what the extractor's own contradiction check names as stale."""
    from engram.memories.judge.verdicts import JudgesMemories, Verdict, keep_safe, offline_verdicts

    offline = offline_verdicts(new, candidates, rules)
    # An extractor's judge and check see what the contradiction limit lets in.
    limit = rules.contradiction_limit(new.type)
    within = [i for i, c in enumerate(candidates) if c.distance <= limit]
    if isinstance(extractor, JudgesMemories):
        try:
            asked = [candidates[i] for i in within]
            theirs = extractor.judge_memories(new, asked, rules) if asked else []
            if len(theirs) != len(asked):
                raise ValueError(f"{len(theirs)} verdicts for {len(asked)} memories")
            verdicts = list(offline)
            for i, v in zip(within, theirs, strict=True):
                verdicts[i] = keep_safe(new, candidates[i], v, rules)
        except Exception as exc:  # someone else's code, maybe a model behind a network
            log.warning("the extractor's judge failed: %s", exc)
            warnings.append(
                f"the extractor's judge failed ({type(exc).__name__}: {exc}); the offline judge "
                "decided instead"
            )
            verdicts = offline
        _failure(extractor, warnings, "judge")
        return verdicts
    if not isinstance(extractor, ChecksContradictions):
        return offline
    try:
        shown = [candidates[i].memory for i in within]
        stale = set(extractor.find_contradictions(new, shown)) if shown else set()
    except Exception as exc:
        log.warning("contradiction check failed: %s", exc)
        warnings.append(
            f"the contradiction check failed ({type(exc).__name__}: {exc}); the offline judge "
            "decided alone"
        )
        stale = set()
    _failure(extractor, warnings, "contradiction check")
    return [
        Verdict("supersedes", "named stale by the extractor's contradiction check")
        if c.memory.id in stale and v.relation != "supersedes"
        else v
        for c, v in zip(candidates, offline, strict=True)
    ]


def _failure(extractor: Extractor, warnings: list[str], what: str) -> None:
    if isinstance(extractor, ReportsFailures) and extractor.last_error:
        warnings.append(f"{what}: {extractor.last_error}")
