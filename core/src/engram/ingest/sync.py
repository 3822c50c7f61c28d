"""Incremental sync of a vault into a store: index new and changed files, drop removed ones,
leave unchanged ones alone.

Write order keeps a crash harmless: a document's chunks are upserted, then its stale chunks
deleted, and only then is its record (id → content hash, chunk ids) written. A missing or stale
record always means "index this document again" on the next run.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from engram.chunking import Chunker, ChunkSpan, chunk_ids
from engram.errors import EngramError
from engram.ingest.vault import VaultFile
from engram.models import Chunk, Document
from engram.protocols import Embedder, Store
from engram.redact import strip_private

SOURCE = "memory"
EMBED_BATCH = 128
Progress = Callable[[int, int, str], None]  # (done, total, current path)


class Skipped(BaseModel):
    path: str
    reason: str


class IndexReport(BaseModel):
    """What one ``engram index`` run did; printed as the summary line and returned as JSON."""

    new: int = 0
    changed: int = 0
    unchanged: int = 0
    removed: int = 0
    empty: int = 0
    chunks_written: int = 0
    chunks_deleted: int = 0
    texts_embedded: int = 0
    pending_embeddings: int = 0
    skipped: list[Skipped] = Field(default_factory=list)
    warnings: list[str] = Field(default_factory=list)
    seconds: float = 0.0
    dry_run: bool = False

    def summary(self) -> str:
        verb = "would index" if self.dry_run else "indexed"
        parts = [
            f"{verb}: {self.new} new, {self.changed} changed, {self.unchanged} unchanged, "
            f"{self.removed} removed files",
            f"{self.chunks_written} chunks written, {self.chunks_deleted} deleted",
            f"{self.texts_embedded} texts embedded",
        ]
        if self.skipped:
            parts.append(f"{len(self.skipped)} skipped")
        if self.pending_embeddings:
            parts.append(f"{self.pending_embeddings} files still need embeddings (run index again)")
        parts.append(f"{self.seconds:.2f}s")
        return "; ".join(parts)


@dataclass
class _Pending:
    file: VaultFile
    hash: str
    chunks: list[Chunk]
    old: Document | None
    vectors: list[list[float] | None] = field(default_factory=list)


def read_text(file: VaultFile, max_bytes: int) -> tuple[str, str] | Skipped:
    """(text, sha256) of a vault file, or why it was skipped (binary, not UTF-8, too large)."""
    try:
        size = file.path.stat().st_size
        if size > max_bytes:
            return Skipped(
                path=file.document_id,
                reason=f"larger than {max_bytes} bytes (vault.max_file_bytes)",
            )
        data = file.path.read_bytes()
    except OSError as exc:
        return Skipped(path=file.document_id, reason=f"unreadable: {exc.strerror or exc}")
    if b"\x00" in data:
        return Skipped(path=file.document_id, reason="binary file (contains NUL bytes)")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return Skipped(
            path=file.document_id, reason=f"not UTF-8 text (bad byte at offset {exc.start})"
        )
    return text.removeprefix("\ufeff"), hashlib.sha256(data).hexdigest()


def sync_files(
    files: Sequence[VaultFile],
    roots: Sequence[Path],
    store: Store,
    embedder: Embedder,
    make_chunks: Callable[[str, str, str], tuple[list[Chunk], list[str]]],
    *,
    max_file_bytes: int,
    dry_run: bool = False,
    progress: Progress | None = None,
) -> IndexReport:
    """Bring the store in line with ``files`` (everything found under ``roots``)."""
    started = time.perf_counter()
    report = IndexReport(dry_run=dry_run)
    known = {
        doc_id: doc
        for doc_id, doc in store.list_documents().items()
        if doc.metadata.get("source") == SOURCE and _under(doc, roots)
    }
    seen: set[str] = set()
    batch: list[_Pending] = []
    for done, file in enumerate(files, 1):
        if progress:
            progress(done, len(files), file.document_id)
        seen.add(file.document_id)
        got = read_text(file, max_file_bytes)
        if isinstance(got, Skipped):
            report.skipped.append(got)
            continue
        text, digest = got
        old = known.get(file.document_id)
        if old is not None and old.hash == digest:
            report.unchanged += 1
            continue
        if old is None:
            report.new += 1
        else:
            report.changed += 1
        if dry_run:
            continue
        chunks, warnings = make_chunks(file.document_id, strip_private(text), digest)
        report.warnings.extend(f"{file.document_id}: {w}" for w in warnings)
        batch.append(_Pending(file, digest, chunks, old))
        if sum(len(p.chunks) for p in batch) >= EMBED_BATCH:
            _flush(batch, store, embedder, report)
            batch = []
    if batch:
        _flush(batch, store, embedder, report)
    removed = sorted(set(known) - seen)
    report.removed = len(removed)
    if removed and not dry_run:
        report.chunks_deleted += sum(len(_chunk_ids(known[d])) for d in removed)
        store.delete_documents(removed)
    report.seconds = time.perf_counter() - started
    return report


def _flush(batch: list[_Pending], store: Store, embedder: Embedder, report: IndexReport) -> None:
    texts = [c.text for p in batch for c in p.chunks]
    vectors: list[list[float]] | None
    try:
        vectors = embedder.embed(texts, input_type="document") if texts else []
    except EngramError as exc:
        vectors = None
        report.warnings.append(
            f"embedder failed, {len(batch)} files stored for keyword search only: {exc}"
        )
    except (
        Exception
    ) as exc:  # the embedder is someone else's code over a network: never lose the run
        vectors = None
        report.warnings.append(
            f"embedder failed ({type(exc).__name__}: {exc}); "
            f"{len(batch)} files stored for keyword search only"
        )
    if vectors is not None:
        report.texts_embedded += len(texts)
    offset = 0
    for pending in batch:
        n = len(pending.chunks)
        chunks = pending.chunks
        if vectors is not None:
            chunks = [
                c.model_copy(update={"vector": v})
                for c, v in zip(chunks, vectors[offset : offset + n], strict=True)
            ]
        offset += n
        _write(pending, chunks, store, report, complete=vectors is not None)


def _write(
    pending: _Pending, chunks: list[Chunk], store: Store, report: IndexReport, *, complete: bool
) -> None:
    new_ids = [c.id for c in chunks]
    keep = set(new_ids)
    if chunks:
        store.upsert(chunks)
    stale = [i for i in _chunk_ids(pending.old) if i not in keep]
    if stale:
        store.delete(stale)
    report.chunks_written += len(chunks)
    report.chunks_deleted += len(stale)
    if not chunks:
        report.empty += 1
    if not complete:
        report.pending_embeddings += 1
    store.put_document(
        Document(
            id=pending.file.document_id,
            # An incomplete document keeps no hash, so the next run embeds it again.
            hash=pending.hash if complete else "",
            metadata={
                "source": SOURCE,
                "root": pending.file.root.as_posix(),
                "path": pending.file.path.as_posix(),
                "chunk_ids": list(new_ids),
                "indexed_at": time.time(),
            },
        )
    )


def _chunk_ids(doc: Document | None) -> list[str]:
    if doc is None:
        return []
    ids = doc.metadata.get("chunk_ids")
    return [str(i) for i in ids] if isinstance(ids, list) else []


def _under(doc: Document, roots: Sequence[Path]) -> bool:
    path = doc.metadata.get("path")
    if not isinstance(path, str):
        return False
    p = Path(path)
    return any(p == r or p.is_relative_to(r) for r in (root.resolve() for root in roots))


def chunk_markdown_document(
    chunker: Chunker, document_id: str, text: str, digest: str
) -> tuple[list[Chunk], list[str]]:
    """Chunks of one markdown document with their metadata (frontmatter + where they come
    from), and any warning met while reading it (e.g. malformed frontmatter)."""
    parsed = chunker.chunk_document(text)
    spans = parsed.chunks
    title = _title(parsed.metadata, spans, document_id)
    chunks = []
    for span, cid in zip(spans, chunk_ids(document_id, spans), strict=True):
        metadata: dict[str, Any] = dict(parsed.metadata)
        metadata.update(
            source=SOURCE,
            path=document_id,
            title=title,
            start_line=span.start_line,
            end_line=span.end_line,
            headings=list(span.headings),
        )
        chunks.append(
            Chunk(
                id=cid,
                document_id=document_id,
                document_hash=digest,
                text=span.text,
                metadata=metadata,
            )
        )
    return chunks, parsed.warnings


def _title(frontmatter: dict[str, Any], spans: Sequence[ChunkSpan], document_id: str) -> str:
    title = frontmatter.get("title")
    if isinstance(title, str) and title.strip():
        return title.strip()
    for span in spans:
        if span.headings:
            return str(span.headings[0])
    return Path(document_id).stem
