"""Incremental sync of a vault into a store: index new and changed files, drop removed ones,
leave unchanged ones alone. The writing itself (batches, keyword-only fallback, crash-safe
order) is ``engram.ingest.engine``'s, shared with agent sessions.

A file is unchanged, without being read, when its (size, mtime_ns, inode) are those its record
kept, taken before the read that indexed it, and its mtime was at least ``STABLE_S`` seconds
older than that indexing (a file written within the file system's timestamp granularity of its
indexing could change again unseen: it is hashed, as git treats "racily clean" files). When the
stat differs, the content hash decides, and a file whose content is the same gets its record's
stat refreshed, so the next run needs no read either.
"""

from __future__ import annotations

import hashlib
import os
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from engram.ingest.engine import DocumentWriter, Pending, remove_documents
from engram.ingest.report import IndexInterrupted, IndexReport, Progress, Skipped
from engram.ingest.vault import VaultFile
from engram.models import Chunk, Document
from engram.protocols import Embedder, Store
from engram.redact import strip_private

SOURCE = "memory"  # the default label of a file (a vault note's is ``vault``: engram.sources)
LABELS = (SOURCE, "vault")  # the labels of the files sync owns
STABLE_S = 2.0  # how much older than its indexing a file's mtime must be to trust its stat

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
    resolved = [root.resolve().as_posix() for root in roots]
    known = {
        doc_id: doc
        for doc_id, doc in store.list_documents().items()
        if doc.metadata.get("source") in LABELS and _under(doc, resolved)
    }
    seen: set[str] = set()
    writer = DocumentWriter(store, embedder, report, "files")
    try:
        for done, file in enumerate(files, 1):
            if progress:
                progress(done, len(files), file.document_id)
            seen.add(file.document_id)
            old = known.get(file.document_id)
            stat = stat_of(file.path)
            got = _changed_text(file, old, stat, max_file_bytes, None if dry_run else store)
            if got is None:
                report.unchanged += 1
                continue
            if isinstance(got, Skipped):
                report.skipped.append(got)
                continue
            text, digest = got
            if old is None:
                report.new += 1
            else:
                report.changed += 1
            if dry_run:
                continue
            chunks, warnings = make_chunks(file.document_id, strip_private(text), digest)
            if file.source != SOURCE:
                chunks = _labelled(chunks, file.source)
            report.warnings.extend(f"{file.document_id}: {w}" for w in warnings)
            writer.add(Pending(file.document_id, digest, chunks, old, _record(file, stat)))
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


def _changed_text(
    file: VaultFile,
    old: Document | None,
    stat: list[int] | None,
    max_file_bytes: int,
    store: Store | None,
) -> tuple[str, str] | Skipped | None:
    """The file's (text, hash) when it must be indexed, None when it is unchanged (its stat
    proves it, or its content hash; then ``store`` gets the record's new stat). A file whose
    record carries another label (a vault note of an older store says ``memory``) is indexed
    again, to relabel its chunks."""
    relabel = old is not None and old.metadata.get("source") != file.source
    if old is not None and not relabel and unchanged_by_stat(old, stat):
        return None
    got = read_text(file, max_file_bytes)
    if isinstance(got, Skipped) or old is None or relabel or old.hash != got[1]:
        return got
    if store is not None and stat is not None and _restamp(old, stat):
        store.put_document(_restamped(old, stat))
    return None


def _restamp(old: Document, stat: list[int]) -> bool:
    """Whether an unchanged file's record needs its stat written: it changed, or the file was
    racily clean and is now old enough to be trusted (else it would be hashed every run)."""
    return old.metadata.get("stat") != stat or stat[1] / 1e9 + STABLE_S <= time.time()


def stat_of(path: Path) -> list[int] | None:
    """(size, mtime_ns, inode) of a file, or None when it cannot be stat'ed (the read says
    why)."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return [st.st_size, st.st_mtime_ns, st.st_ino]


def unchanged_by_stat(old: Document, stat: list[int] | None) -> bool:
    """The record proves the file unchanged without reading it (see the module docstring)."""
    if stat is None or not old.hash:
        return False
    mtime_s = stat[1] / 1e9
    if old.metadata.get("stat") != stat:
        return False
    indexed_at = old.metadata.get("indexed_at")
    return isinstance(indexed_at, int | float) and mtime_s + STABLE_S <= indexed_at


def _restamped(old: Document, stat: list[int]) -> Document:
    """The record of a file whose stat changed but not its content (touched, copied back)."""
    return old.model_copy(
        update={"metadata": {**old.metadata, "stat": stat, "indexed_at": time.time()}}
    )


def _record(file: VaultFile, stat: list[int] | None) -> dict[str, object]:
    """A vault file's record: its source, where it lives (``root`` is what ``get`` may read),
    and its stat before it was read."""
    record: dict[str, object] = {
        "source": file.source,
        "root": file.root.as_posix(),
        "path": file.path.as_posix(),
    }
    if stat is not None:
        record["stat"] = stat
    return record


def _labelled(chunks: list[Chunk], source: str) -> list[Chunk]:
    """``chunks`` with the file's ``source`` label (the chunker writes the default one)."""
    return [c.model_copy(update={"metadata": {**c.metadata, "source": source}}) for c in chunks]


def _under(doc: Document, resolved_roots: Sequence[str]) -> bool:
    """The record's file lies under one of the roots (posix strings; compared as text, since
    this runs once per record of the store)."""
    path = doc.metadata.get("path")
    if not isinstance(path, str):
        return False
    return any(
        path == r or path.startswith(r if r.endswith("/") else r + "/") for r in resolved_roots
    )
