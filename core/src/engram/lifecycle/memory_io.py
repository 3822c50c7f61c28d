"""Reading, marking and re-indexing memory files: the steps every write path shares (remember,
merge, supersede, link, restore, aging, chain repair)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from engram.chunking import read_frontmatter
from engram.document_ids import document_path
from engram.errors import MemoryNotFound
from engram.ingest.sync import IndexReport, sync_files
from engram.ingest.vault import VaultFile
from engram.memory_files import info_from, replace_file, with_frontmatter
from engram.models import KnownMemory
from engram.redact import strip_private
from engram.scopes import check_writable, folder_of
from engram.writer import Writer

MAX_MEMORY_BYTES = 1_000_000


def now_ms(now: datetime | None = None) -> datetime:
    moment = (now or datetime.now(UTC)).astimezone(UTC)
    return moment.replace(microsecond=moment.microsecond // 1000 * 1000)


def stamp(moment: datetime) -> str:
    """Milliseconds: aging orders memories by creation time, and captures come in bursts."""
    return moment.isoformat(timespec="milliseconds")


def writable_path(writer: Writer, document_id: str) -> Path:
    """The file of a memory engram may change (external folders refused)."""
    path = document_path(document_id, writer.config.root).resolve()
    check_writable(writer.folders, path, document_id)
    if not path.is_file():
        raise MemoryNotFound(
            f"{document_id} is gone; run `engram index` to bring the index up to date"
        )
    return path


def update_frontmatter(writer: Writer, document_id: str, changes: dict[str, Any]) -> None:
    """Set (``None``: remove) frontmatter keys of a memory, its body untouched."""
    path = writable_path(writer, document_id)
    replace_file(path, with_frontmatter(path.read_text(encoding="utf-8"), changes))


def mark(
    writer: Writer, document_ids: Sequence[str], changes: dict[str, Any], now: datetime
) -> None:
    """Set frontmatter ``changes`` on memories (superseded or archived), with the time."""
    key = "superseded_at" if changes.get("status") == "superseded" else "archived_at"
    for doc_id in document_ids:
        update_frontmatter(writer, doc_id, {**changes, key: stamp(now)})


def retire(
    writer: Writer, old_ids: Sequence[str], newer_doc: str, newer_id: str, now: datetime
) -> None:
    """Supersede the memories ``old_ids`` (document ids) by ``newer_id``: the newer memory names
    them in ``supersedes`` first (the truth ``chains.repair`` completes from after a crash), then
    each older file is marked."""
    names = []
    for doc_id in old_ids:
        path = writable_path(writer, doc_id)
        memory_id = read_frontmatter(path.read_text(encoding="utf-8", errors="replace")).metadata
        if isinstance(memory_id.get("id"), str):
            names.append(str(memory_id["id"]))
    newer = writable_path(writer, newer_doc)
    meta = read_frontmatter(newer.read_text(encoding="utf-8", errors="replace")).metadata
    links = added(meta.get("supersedes"), names)
    if links is not None:
        update_frontmatter(writer, newer_doc, {"supersedes": links})
    mark(writer, old_ids, {"status": "superseded", "superseded_by": newer_id}, now)


def added(current: object, ids: Sequence[str]) -> list[str] | None:
    """``current`` (a frontmatter list) with ``ids`` added, or None when nothing is new."""
    have = [str(v) for v in current] if isinstance(current, list) else []
    new = [i for i in ids if i not in have]
    return [*have, *new] if new else None


def read_known(writer: Writer, document_id: str) -> KnownMemory | None:
    """A stored memory as a contradiction check sees it (None when the file is gone)."""
    path = document_path(document_id, writer.config.root)
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    fm = read_frontmatter(text)
    info = info_from(fm.metadata, path, writer.config.root)
    if info.id is None:
        return None
    return KnownMemory(
        id=info.id,
        type=info.type,
        title=info.title,
        content=strip_private(fm.body).strip(),
        created_at=info.created_at,
    )


def index_documents(writer: Writer, document_ids: Sequence[str]) -> IndexReport:
    """Index (again) the given memory files, each under its memory folder as root."""
    root = writer.config.root
    files = []
    for doc_id in dict.fromkeys(document_ids):
        path = document_path(doc_id, root).resolve()
        folder = folder_of(writer.folders, path)
        files.append(VaultFile(path, folder.path if folder else path.parent, doc_id))
    return sync_files(
        files,
        [f.path for f in files],
        writer.store,
        writer.embedder,
        writer.make_chunks,
        max_file_bytes=max(writer.config.vault.max_file_bytes, MAX_MEMORY_BYTES),
    )
