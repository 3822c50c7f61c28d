"""Incremental sync of a vault into a store: index new and changed files, drop removed ones,
leave unchanged ones alone. The writing itself (batches, keyword-only fallback, crash-safe
order) is ``engram.ingest.engine``'s, shared with agent sessions.

A file is unchanged, without being read, when its (size, mtime_ns, inode, ctime_ns) are those
its record kept, taken before the read that indexed it, and its mtime was at least
``STABLE_S`` seconds older than that indexing (a file written within the file system's
timestamp granularity of its indexing could change again unseen: it is hashed, as git treats
"racily clean" files); see ``engram.stamps``. When the stat differs, the content hash decides,
and a file whose content is the same gets its record's stat refreshed, so the next run needs
no read either.

A no-op run is then one bulk read of the stamps (both labels in one query) and one pass over
the vault that finds and stats each file (``engram.ingest.scan``): no record is built, no root
resolved more than once, no file opened, no object made for an unchanged file.
"""

from __future__ import annotations

import hashlib
import os
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from engram.ingest.bulk import gc_paused
from engram.ingest.engine import DocumentWriter, Pending, remove_documents
from engram.ingest.records import Records
from engram.ingest.report import IndexInterrupted, IndexReport, Progress, Skipped
from engram.ingest.scan import Finder, Survey
from engram.ingest.vault import VaultFile
from engram.models import Chunk, Document
from engram.protocols import Embedder, Store
from engram.stamps import Stamp, Stat, stat_from, stat_of
from engram.stores.origins import TEXT_KEY, OriginStore
from engram.text.redact import strip_private

SOURCE = (
    "memory"  # the default label of a file (a vault note's is ``vault``: engram.ingest.sources)
)
LABELS = (SOURCE, "vault")  # the labels of the files sync owns
STABLE_S = 2.0  # how much older than its indexing a file's mtime must be to trust its stat
MakeChunks = Callable[[str, str, str], tuple[list[Chunk], list[str]]]

__all__ = [
    "SOURCE",
    "IndexReport",
    "Progress",
    "Skipped",
    "read_text",
    "sync_files",
    "sync_vault",
]


def read_text(
    file: VaultFile, max_bytes: int, size: int | None = None
) -> tuple[str, str] | Skipped:
    """(text, sha256) of a vault file, or why it was skipped (binary, not UTF-8, too large).
    ``size``: what the caller's stat of it just said (no second stat); the read stops past
    ``max_bytes`` either way, so a file grown since is skipped, not read whole."""
    try:
        if (os.stat(file.location).st_size if size is None else size) > max_bytes:
            return Skipped(path=file.document_id, reason=_too_large(max_bytes))
        with open(file.location, "rb") as handle:
            data = handle.read(max_bytes + 1)
    except OSError as exc:
        return Skipped(path=file.document_id, reason=f"unreadable: {exc.strerror or exc}")
    if len(data) > max_bytes:
        return Skipped(path=file.document_id, reason=_too_large(max_bytes))
    return _checked(file.document_id, data)


def written_text(file: VaultFile, text: str, max_bytes: int) -> tuple[str, str] | Skipped:
    """``read_text`` of a file whose writer has just written ``text``, without reading it."""
    data = text.encode("utf-8")
    if len(data) > max_bytes:
        return Skipped(path=file.document_id, reason=_too_large(max_bytes))
    return _checked(file.document_id, data)


def _checked(document_id: str, data: bytes) -> tuple[str, str] | Skipped:
    if b"\x00" in data:
        return Skipped(path=document_id, reason="binary file (contains NUL bytes)")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return Skipped(path=document_id, reason=f"not UTF-8 text (bad byte at offset {exc.start})")
    return text.removeprefix("\ufeff"), hashlib.sha256(data).hexdigest()


def _too_large(max_bytes: int) -> str:
    return f"larger than {max_bytes} bytes (vault.max_file_bytes)"


def sync_vault(
    roots: Sequence[Path],
    store: Store,
    embedder: Embedder,
    make_chunks: MakeChunks,
    *,
    find: Finder,
    max_file_bytes: int,
    dry_run: bool = False,
    progress: Progress | None = None,
    resolved: bool = False,
) -> IndexReport:
    """Bring the store in line with the files ``find`` finds under ``roots`` (a vault's:
    ``engram.ingest.scan`` walks, matches and stats them in one pass against the stamps).
    ``resolved``: the roots are ``Path.resolve()``'s already (each resolve is an ``lstat`` a
    path component, paid again by every index run)."""

    def survey(known: Mapping[str, Stamp]) -> Survey:
        return find(roots, known, resolved=resolved)

    return _sync(
        survey, roots, store, embedder, make_chunks, max_file_bytes, dry_run, progress, {}, resolved
    )


def sync_files(
    files: Sequence[VaultFile],
    roots: Sequence[Path],
    store: Store,
    embedder: Embedder,
    make_chunks: MakeChunks,
    *,
    max_file_bytes: int,
    dry_run: bool = False,
    progress: Progress | None = None,
    written: Mapping[str, str] | None = None,
) -> IndexReport:
    """Bring the store in line with ``files`` (everything there is under ``roots``: a memory
    folder's or a collection's files, listed by their caller).

    ``written`` maps document ids to the text their writer has just written (under the folder's
    write lock): those files are stat'ed like any other but not read back. Their records are
    the ones a read would give: the stat is taken after the write, and a file edited between
    the write and the stat has an mtime too recent for its stamp to be trusted (``STABLE_S``),
    so the next run hashes it."""

    def survey(known: Mapping[str, Stamp]) -> Survey:
        return _survey(files, known)

    given = written or {}
    return _sync(
        survey, roots, store, embedder, make_chunks, max_file_bytes, dry_run, progress, given
    )


def _sync(
    survey: Callable[[Mapping[str, Stamp]], Survey],
    roots: Sequence[Path],
    store: Store,
    embedder: Embedder,
    make_chunks: MakeChunks,
    max_file_bytes: int,
    dry_run: bool,
    progress: Progress | None,
    given: Mapping[str, str],
    resolved: bool = False,
) -> IndexReport:
    """Two passes: the first (``survey``) stats every file against its record's stamp (all
    stamps read in one go, roots resolved once) and keeps the files it cannot prove unchanged;
    the second reads those (or takes the text their writer gave, ``given``), with the full
    records of just them, and writes what changed."""
    started = time.perf_counter()
    report = IndexReport(dry_run=dry_run)
    records = Records(store)
    try:
        with gc_paused():  # no cycles here, only many small objects
            posix = [_posix_root(root if resolved else root.resolve()) for root in roots]
            known = records.stamps(LABELS, posix, STABLE_S)
            found = survey(known)
        report.unchanged += found.unchanged
        suspects, removed = found.suspects, found.removed
        full = records.documents([f.document_id for f, _ in suspects if f.document_id in known])
        writer = DocumentWriter(store, embedder, report, "files")
        # On a shared store a record keeps its file's text: other machines read it from there.
        keep_text = isinstance(store, OriginStore)
        if progress and found.files and not suspects:
            progress(found.files, found.files, "")
        for done, (file, stat) in enumerate(suspects, found.unchanged + 1):
            if progress:  # the reads and embeddings are what takes time
                progress(done, found.files, file.document_id)
            old_doc = full.get(file.document_id)
            text_now = given.get(file.document_id) if stat is not None else None
            store_now = None if dry_run else store
            got = _changed_text(file, old_doc, stat, max_file_bytes, store_now, text_now)
            if got is None:
                report.unchanged += 1
                continue
            if isinstance(got, Skipped):
                report.skipped.append(got)
                continue
            text, digest = got
            if old_doc is None:
                report.new += 1
            else:
                report.changed += 1
            if dry_run:
                continue
            clean = strip_private(text)
            chunks, warnings = make_chunks(file.document_id, clean, digest)
            chunks = _labelled(chunks, file.source)
            report.warnings.extend(f"{file.document_id}: {w}" for w in warnings)
            record = _record(file, stat, clean if keep_text else None)
            writer.add(Pending(file.document_id, digest, chunks, old_doc, record))
        writer.flush()
    except KeyboardInterrupt as exc:  # Ctrl+C: nothing is removed; say what was done
        report.seconds = time.perf_counter() - started
        raise IndexInterrupted(report) from exc
    if dry_run:
        report.removed = len(removed)
    else:
        remove_documents(store, records.documents(sorted(removed)), removed, report)
    report.seconds = time.perf_counter() - started
    return report


def _survey(files: Sequence[VaultFile], known: Mapping[str, Stamp]) -> Survey:
    """The files (with their stat) whose record's stamp, under the file's own label, does not
    prove them unchanged (a record under another label is relabelled), and the records under
    the roots whose file is not among ``files``."""
    suspects: list[tuple[VaultFile, Stat | None]] = []
    unchanged = 0
    seen = 0
    for file in files:
        doc_id = file.document_id
        try:
            st = os.stat(file.location)
        except OSError:
            seen += doc_id in known
            suspects.append((file, None))  # the read says why
            continue
        stat = stat_of(st)
        stamp = known.get(doc_id)
        if stamp is not None:
            seen += 1
            if stamp == (*stat, file.source, doc_id):
                unchanged += 1
                continue
        suspects.append((file, stat))
    if seen == len(known):  # every record has its file (ids are unique): none is gone
        return Survey(suspects, len(files), unchanged)
    return Survey(suspects, len(files), unchanged, known.keys() - {f.document_id for f in files})


def _changed_text(
    file: VaultFile,
    old: Document | None,
    stat: Stat | None,
    max_file_bytes: int,
    store: Store | None,
    written: str | None,
) -> tuple[str, str] | Skipped | None:
    """The file's (text, hash) when it must be indexed, None when its content hash shows it
    unchanged (then ``store`` gets the record's new stat). A file whose record carries another
    label (a vault note of an older store says ``memory``) is indexed again, to relabel its
    chunks. ``written``: its text as just written (not read back)."""
    relabel = old is not None and old.metadata.get("source") != file.source
    if written is None:
        got = read_text(file, max_file_bytes, None if stat is None else stat[0])
    else:
        got = written_text(file, written, max_file_bytes)
    if isinstance(got, Skipped) or old is None or relabel or old.hash != got[1]:
        return got
    if store is not None and stat is not None and _restamp(old, stat):
        store.put_document(_restamped(old, stat))
    return None


def _restamp(old: Document, stat: Stat) -> bool:
    """Whether an unchanged file's record needs its stat written: it changed, or the file was
    racily clean and is now old enough to be trusted (else it would be hashed every run)."""
    return stat_from(old.metadata.get("stat")) != stat or stat[1] / 1e9 + STABLE_S <= time.time()


def _restamped(old: Document, stat: Stat) -> Document:
    """The record of a file whose stat changed but not its content (touched, copied back)."""
    return old.model_copy(
        update={"metadata": {**old.metadata, "stat": list(stat), "indexed_at": time.time()}}
    )


def _record(file: VaultFile, stat: Stat | None, text: str | None) -> dict[str, object]:
    """A vault file's record: its source, where it lives (``root`` is what ``get`` may read),
    its stat before it was read, and (``text``) what it says, when other machines read it."""
    record: dict[str, object] = {
        "source": file.source,
        "root": file.root.as_posix(),
        "path": _posix(file.location),
    }
    if stat is not None:
        record["stat"] = list(stat)
    if text is not None:
        record[TEXT_KEY] = text
    return record


def _labelled(chunks: list[Chunk], source: str) -> list[Chunk]:
    """``chunks`` with the file's ``source`` label (the chunker writes the default one)."""
    if source == SOURCE:
        return chunks
    return [c.model_copy(update={"metadata": {**c.metadata, "source": source}}) for c in chunks]


def _posix_root(root: Path) -> str:
    """A resolved root as its files' recorded paths start (resolved once a run, not once a
    record): posix, without a trailing "/" (so the file system's root is "")."""
    return root.as_posix().rstrip("/")


def _posix(location: str) -> str:
    return location if os.sep == "/" else location.replace(os.sep, "/")
