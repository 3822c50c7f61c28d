"""Reading, marking and re-indexing memory files: the steps every write path shares (remember,
merge, supersede, link, restore, aging, chain repair)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from engram.chunking import ChunkedDocument, read_frontmatter
from engram.errors import MemoryNotFound, StoreError
from engram.ingest.document_ids import document_path
from engram.ingest.sync import IndexReport, sync_files
from engram.ingest.vault import VaultFile
from engram.memories.files import info_from, replace_file, with_frontmatter
from engram.memories.scopes import check_writable, folder_of
from engram.memories.writer import Writer
from engram.models import Chunk, KnownMemory, Vector
from engram.text.redact import strip_private

MAX_MEMORY_BYTES = 1_000_000


@dataclass(frozen=True)
class Written:
    """A memory file's content as its writer just wrote it, and what the writer already made
    of it: ``parsed``, the chunker's reading of exactly ``text``, and ``vectors``, chunk texts
    it embedded (as documents). Indexing it then reads nothing back, and cuts and embeds
    nothing a second time."""

    text: str
    parsed: ChunkedDocument | None = None
    vectors: Mapping[str, Vector] = field(default_factory=dict)


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


def update_frontmatter(
    writer: Writer, document_id: str, changes: dict[str, Any], text: str | None = None
) -> str:
    """Set (``None``: remove) frontmatter keys of a memory, its body untouched; ``text``: its
    content when the caller has just written it. Returns the new content."""
    path = writable_path(writer, document_id)
    updated = with_frontmatter(path.read_text(encoding="utf-8") if text is None else text, changes)
    replace_file(path, updated)
    return updated


def mark(
    writer: Writer, document_ids: Sequence[str], changes: dict[str, Any], now: datetime
) -> dict[str, Written]:
    """Set frontmatter ``changes`` on memories (superseded or archived), with the time; returns
    what was written, to index."""
    key = "superseded_at" if changes.get("status") == "superseded" else "archived_at"
    return {
        doc_id: Written(update_frontmatter(writer, doc_id, {**changes, key: stamp(now)}))
        for doc_id in document_ids
    }


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
        subject=info.subject,
        attribute=info.attribute,
        value=info.value,
    )


def index_documents(
    writer: Writer, document_ids: Sequence[str] = (), written: Mapping[str, Written] | None = None
) -> IndexReport:
    """Index (again) the given memory files, each under its memory folder as root, and those
    ``written`` (by document id) from what their writer holds, not from disk."""
    root = writer.config.root
    known = written or {}
    files = []
    for doc_id in dict.fromkeys([*document_ids, *known]):
        path = document_path(doc_id, root).resolve()
        folder = folder_of(writer.folders, path)
        files.append(VaultFile(path, folder.path if folder else path.parent, doc_id))

    def make_chunks(
        document_id: str, text: str, digest: str, parsed: ChunkedDocument | None = None
    ) -> tuple[list[Chunk], list[str]]:
        held = known.get(document_id)
        if held is None:
            return writer.make_chunks(document_id, text, digest, parsed)
        # ``text`` is the file's without private spans: the writer's reading fits if the same.
        reading = held.parsed if text == held.text else None
        chunks, warnings = writer.make_chunks(document_id, text, digest, reading)
        vectors = held.vectors
        return [
            c.model_copy(update={"vector": vectors[c.text]}) if c.text in vectors else c
            for c in chunks
        ], warnings

    def sync() -> IndexReport:
        return sync_files(
            files,
            [f.path for f in files],
            writer.store,
            writer.embedder,
            make_chunks,
            max_file_bytes=max(writer.config.vault.max_file_bytes, MAX_MEMORY_BYTES),
            written={doc_id: w.text for doc_id, w in known.items()},
        )

    try:
        return sync()
    except StoreError:
        # `engram reset` or `rebuild` in another process emptied the index since this writer
        # checked it (its identity gone with it): the file is written, so take the identity
        # again and index it, rather than fail a write that was kept.
        if writer.store.get_identity() is not None:
            raise
        writer.check_identity(writing=True)
        return sync()
