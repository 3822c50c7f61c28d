"""Copy one store into another without re-embedding: every chunk with its vector and metadata,
every document record and the index identity; then check the copy against the source.

The source is only read (``get_identity``, ``iter_chunks``, ``list_documents``, ``count``,
``get`` and searches), never written. A target that already holds anything is refused unless
``overwrite`` is given, in which case it is reset first. Checks after the copy:

- counts: chunks and document records are equal, and so are the identities;
- a sample of chunks (spread evenly over the store) reads back equal: text, document, metadata,
  and the vector up to float32 rounding;
- a sample of searches: each sampled chunk's own vector finds a chunk just as similar in the
  target (its own score, 1), and a keyword query made of its words finds it in the target
  whenever it finds it in the source.

Any failed check raises ``StoreError`` naming the first problems; the source is untouched, so
the fix is to run the migration again with ``overwrite``.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence

from pydantic import BaseModel, Field

from engram.errors import StoreError
from engram.models import Chunk, IndexIdentity
from engram.protocols import Store
from engram.text.words import tokenize

VECTOR_TOLERANCE = 1e-6  # relative: stores keep float32 vectors
SCORE_TOLERANCE = 1e-3
SEARCH_DEPTH = 50
QUERY_WORDS = 8
Progress = Callable[[int, int], None]  # (chunks copied, chunks in the source)


class MigrationReport(BaseModel):
    """What a migration copied and checked."""

    chunks: int = 0
    vectors: int = 0
    documents: int = 0
    identity: IndexIdentity | None = None
    checked_chunks: int = 0
    vector_searches: int = 0
    keyword_searches: int = 0
    overwrote: bool = False
    seconds: float = 0.0
    problems: list[str] = Field(default_factory=list)

    def summary(self) -> str:
        identity = self.identity.describe() if self.identity else "no identity"
        return (
            f"copied {self.chunks} chunks ({self.vectors} with vectors) and {self.documents} "
            f"document records, {identity}; checked {self.checked_chunks} chunks, "
            f"{self.vector_searches} vector and {self.keyword_searches} keyword searches; "
            f"{self.seconds:.2f}s"
        )


def migrate(
    source: Store,
    target: Store,
    *,
    batch_size: int = 500,
    verify_sample: int = 20,
    overwrite: bool = False,
    progress: Progress | None = None,
) -> MigrationReport:
    """Copy ``source`` into ``target`` and verify the copy (see the module docstring)."""
    if source is target:
        raise StoreError("the source and the target are the same store; pick another target")
    if batch_size < 1 or verify_sample < 0:
        raise StoreError("batch_size must be at least 1 and verify_sample at least 0")
    started = time.perf_counter()
    report = MigrationReport(overwrote=overwrite)
    _prepare_target(target, overwrite)
    report.identity = source.get_identity()
    if report.identity is not None:
        target.set_identity(report.identity)
    total = source.count()
    for batch in source.iter_chunks(batch_size):
        target.upsert(batch)
        report.chunks += len(batch)
        report.vectors += sum(1 for c in batch if c.vector is not None)
        if progress is not None:
            progress(report.chunks, total)
    documents = source.list_documents()
    for document in documents.values():
        target.put_document(document)
    report.documents = len(documents)
    report.problems = _verify(source, target, report, verify_sample)
    report.seconds = time.perf_counter() - started
    if report.problems:
        shown = "; ".join(report.problems[:3])
        more = f" (and {len(report.problems) - 3} more)" if len(report.problems) > 3 else ""
        raise StoreError(
            f"the copy does not match the source: {shown}{more}. The source is untouched; "
            f"run the migration again with --overwrite"
        )
    return report


def _prepare_target(target: Store, overwrite: bool) -> None:
    holds = target.count()
    documents = len(target.list_documents())
    identity = target.get_identity()
    if not (holds or documents or identity):
        return
    if not overwrite:
        raise StoreError(
            f"the target store is not empty ({holds} chunks, {documents} document records"
            f"{', an index identity' if identity else ''}); pass --overwrite to reset it and "
            f"copy anyway, or point the target somewhere else"
        )
    target.reset()


def _verify(source: Store, target: Store, report: MigrationReport, sample: int) -> list[str]:
    problems: list[str] = []
    if target.count() != source.count() or report.chunks != source.count():
        problems.append(
            f"chunk counts differ: source {source.count()}, copied {report.chunks}, "
            f"target {target.count()}"
        )
    source_docs, target_docs = source.list_documents(), target.list_documents()
    if source_docs != target_docs:
        missing = sorted(set(source_docs) - set(target_docs))[:3]
        problems.append(
            f"document records differ ({len(source_docs)} vs {len(target_docs)}; "
            f"e.g. missing {missing})"
        )
    if target.get_identity() != report.identity:
        problems.append(
            f"identity differs: source {report.identity}, target {target.get_identity()}"
        )
    chosen = _sample(source, sample)
    copies = {c.id: c for c in target.get([c.id for c in chosen])}
    for chunk in chosen:
        report.checked_chunks += 1
        problem = _same_chunk(chunk, copies.get(chunk.id))
        if problem:
            problems.append(problem)
            continue
        problems += _searches_agree(source, target, chunk, report)
    return problems


def _sample(store: Store, size: int) -> list[Chunk]:
    """Up to ``size`` chunks spread evenly over the store's iteration order."""
    total = store.count()
    if size == 0 or total == 0:
        return []
    step = max(1, total // size)
    out: list[Chunk] = []
    position = 0
    for batch in store.iter_chunks(500):
        for chunk in batch:
            if position % step == 0 and len(out) < size:
                out.append(chunk)
            position += 1
    return out


def _same_chunk(original: Chunk, copy: Chunk | None) -> str | None:
    if copy is None:
        return f"chunk {original.id!r} is missing from the target"
    fields = ("document_id", "document_hash", "text", "metadata")
    for name in fields:
        if getattr(copy, name) != getattr(original, name):
            return f"chunk {original.id!r} has another {name} in the target"
    if (original.vector is None) != (copy.vector is None):
        return f"chunk {original.id!r} lost or gained a vector in the target"
    if original.vector is not None and not _close(original.vector, copy.vector or []):
        return f"chunk {original.id!r} has another vector in the target"
    return None


def _close(a: Sequence[float], b: Sequence[float]) -> bool:
    return len(a) == len(b) and all(
        math.isclose(x, y, rel_tol=VECTOR_TOLERANCE, abs_tol=1e-37)
        for x, y in zip(a, b, strict=True)
    )


def _searches_agree(
    source: Store, target: Store, chunk: Chunk, report: MigrationReport
) -> list[str]:
    problems: list[str] = []
    if chunk.vector is not None and "vector" in target.capabilities:
        report.vector_searches += 1
        expected = source.vector_search(chunk.vector, 1)
        found = target.vector_search(chunk.vector, 1)
        if not found or not expected or abs(found[0].score - expected[0].score) > SCORE_TOLERANCE:
            problems.append(
                f"a vector search for chunk {chunk.id!r} scores "
                f"{found[0].score if found else None} in the target, "
                f"{expected[0].score if expected else None} in the source"
            )
    words = list(dict.fromkeys(tokenize(chunk.text)))
    if words and {"keyword"} <= source.capabilities & target.capabilities:
        query = " ".join(sorted(words, key=len, reverse=True)[:QUERY_WORDS])
        report.keyword_searches += 1
        in_source = chunk.id in {h.chunk.id for h in source.keyword_search(query, SEARCH_DEPTH)}
        in_target = chunk.id in {h.chunk.id for h in target.keyword_search(query, SEARCH_DEPTH)}
        if in_source and not in_target:
            problems.append(f"a keyword search for chunk {chunk.id!r} misses it in the target")
    return problems
