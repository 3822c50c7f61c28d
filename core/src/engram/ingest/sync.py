"""Incremental sync of a vault into a store: index new and changed files, drop removed ones,
leave unchanged ones alone. The writing itself (batches, keyword-only fallback, crash-safe
order) is ``engram.ingest.engine``'s, shared with agent sessions.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from engram.ingest.engine import DocumentWriter, Pending, remove_documents
from engram.ingest.report import IndexInterrupted, IndexReport, Progress, Skipped
from engram.ingest.vault import VaultFile
from engram.models import Chunk, Document
from engram.protocols import Embedder, Store
from engram.redact import strip_private

SOURCE = "memory"

__all__ = ["SOURCE", "IndexReport", "Progress", "Skipped", "read_text", "sync_files"]


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
    writer = DocumentWriter(store, embedder, report, "files")
    try:
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
            writer.add(Pending(file.document_id, digest, chunks, old, _record(file)))
        writer.flush()
    except KeyboardInterrupt as exc:  # Ctrl+C: nothing is removed; say what was done
        report.seconds = time.perf_counter() - started
        raise IndexInterrupted(report) from exc
    removed = set(known) - seen
    if dry_run:
        report.removed = len(removed)
    else:
        remove_documents(store, known, removed, report)
    report.seconds = time.perf_counter() - started
    return report


def _record(file: VaultFile) -> dict[str, str]:
    """A vault file's record: its source, and where it lives (``root`` is what ``get`` may
    read)."""
    return {"source": SOURCE, "root": file.root.as_posix(), "path": file.path.as_posix()}


def _under(doc: Document, roots: Sequence[Path]) -> bool:
    path = doc.metadata.get("path")
    if not isinstance(path, str):
        return False
    p = Path(path)
    return any(p == r or p.is_relative_to(r) for r in (root.resolve() for root in roots))
