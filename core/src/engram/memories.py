"""Agent memories as markdown files: written with dedup and contradiction, superseded, aged,
listed and forgotten. The files are the truth; the store is derived from them.

A new memory is ``<memory folder>/<type>/<slug>.md`` in the folder of its scope (project or
user; external folders are never written). Before it is written, the nearest live memories of
its scope decide what happens (``engram.lifecycle.dedup``): a near-duplicate of the same type is
updated in place instead, and memories the extractor calls stale are superseded. File formats
and atomic writes live in ``engram.memory_files``.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any, get_args

from engram.chunking import read_frontmatter
from engram.errors import InvalidMemory, MemoryNotFound, UnsafePath
from engram.filters import parse_iso, to_utc
from engram.ingest.sync import IndexReport, sync_files
from engram.ingest.vault import VaultFile, document_id_for
from engram.lifecycle.aging import plan_aging
from engram.lifecycle.dedup import WritePlan, document_path, find_neighbours, plan_write
from engram.memory_files import (
    MEMORY_ID,
    check_path_syntax,
    clean_tags,
    default_title,
    info_from,
    memory_files,
    new_memory_id,
    read_info,
    render,
    replace_file,
    slugify,
    target_folder,
    with_frontmatter,
    write_new_file,
)
from engram.models import ExtractedMemory, KnownMemory, MemoryInfo, MemoryType, StoredMemory
from engram.redact import strip_private
from engram.scopes import SCOPES, MemoryFolder, Scope, check_writable, folder_of, writable_folder
from engram.writer import Writer

MEMORY_TYPES: tuple[str, ...] = get_args(MemoryType)
MAX_MEMORY_BYTES = 1_000_000

__all__ = [
    "MEMORY_ID",
    "InvalidMemory",
    "MemoryInfo",
    "MemoryNotFound",
    "Scope",
    "StoredMemory",
    "forget",
    "list_memories",
    "remember",
]


def _now(now: datetime | None) -> datetime:
    moment = (now or datetime.now(UTC)).astimezone(UTC)
    return moment.replace(microsecond=moment.microsecond // 1000 * 1000)


def _stamp(moment: datetime) -> str:
    """Milliseconds: aging orders memories by creation time, and captures come in bursts."""
    return moment.isoformat(timespec="milliseconds")


# --------------------------------------------------------------------------- remember


def remember(
    writer: Writer,
    content: str,
    *,
    title: str | None = None,
    type: MemoryType = "note",
    scope: Scope = "project",
    tags: Sequence[str] = (),
    source: str = "agent",
    path: str | None = None,
    importance: float = 1.0,
    now: datetime | None = None,
) -> StoredMemory:
    """Write a memory (private spans removed first), or merge it into a near-duplicate; then
    supersede what it makes stale, age its kind, and index what changed."""
    if type not in MEMORY_TYPES:
        raise InvalidMemory(f"unknown memory type {type!r}; use one of {', '.join(MEMORY_TYPES)}")
    if scope not in SCOPES:
        raise InvalidMemory(f"unknown scope {scope!r}; use one of {', '.join(SCOPES)}")
    if not 0 <= importance <= 10:
        raise InvalidMemory(f"importance must be between 0 and 10, got {importance}")
    text = strip_private(content).strip()
    if not text:
        raise InvalidMemory(
            "the memory is empty (after removing <private> spans); give it some content"
        )
    new = ExtractedMemory(
        type=type,
        content=text,
        title=" ".join(strip_private(title or "").split()) or default_title(text),
        tags=clean_tags(tags),
        importance=importance,
    )
    clean_source = " ".join(strip_private(source).split()) or "agent"
    created = _now(now)
    folder = writable_folder(writer.folders, scope)
    target_dir, stem = target_folder(folder.path, type, path)
    writer.check_identity(writing=True)
    frontmatter: dict[str, Any] = {
        "id": new_memory_id(created),
        "title": new.title,
        "type": type,
        "scope": scope,
        "tags": new.tags,
        "created_at": _stamp(created),
        "source": clean_source,
        "project": writer.config.root.name,
        "importance": importance,
    }
    plan = _plan(writer, new, folder, render(frontmatter, new.title or "", text))
    if plan.duplicate is not None:
        stored = _merge(writer, plan.duplicate.document_id, new, created)
    else:
        if plan.stale:
            frontmatter["supersedes"] = [n.id for n in plan.stale]
        written = write_new_file(
            target_dir, stem or slugify(new.title or ""), render(frontmatter, new.title or "", text)
        )
        stored = StoredMemory(**read_info(written, writer.config.root).model_dump())
    stored.warnings.extend(plan.warnings)
    report = index_documents(writer, [stored.path])
    stored.chunks = report.chunks_written
    stored.warnings.extend(report.warnings)
    stale = [n.document_id for n in plan.stale]
    if stale:
        stored.superseded = [n.id for n in plan.stale]
        _mark(writer, stale, {"status": "superseded", "superseded_by": stored.id}, created)
        stored.warnings.extend(index_documents(writer, stale).warnings)
    if type in ("progress", "session-summary"):
        stored.warnings.extend(age(writer, now=created, folders=[folder]).warnings)
    return stored


def _plan(writer: Writer, new: ExtractedMemory, folder: MemoryFolder, markdown: str) -> WritePlan:
    """Dedup and contradiction for ``new``; an embedder that fails means neither (a warning)."""
    if "vector" not in writer.store.capabilities:
        return WritePlan()
    chunks, _ = writer.make_chunks("new-writer.md", markdown, "")
    if not chunks:
        return WritePlan()
    try:
        vector = writer.embedder.embed([chunks[0].text], input_type="document")[0]
    except Exception as exc:  # the embedder is someone else's code, maybe over a network
        return WritePlan(
            warnings=[
                f"embedder failed ({type(exc).__name__}: {exc}); the memory was written without "
                "checking for duplicates or contradictions"
            ]
        )
    neighbours = find_neighbours(
        writer.store,
        vector,
        folder.scope,
        writer.config.lifecycle.neighbours,
        lambda doc_id: read_known(writer, doc_id),
    )
    return plan_write(new, neighbours, writer.config.lifecycle, writer.extractor)


def _merge(writer: Writer, document_id: str, new: ExtractedMemory, now: datetime) -> StoredMemory:
    """Update a near-duplicate in place with the newer wording: same id, file and creation
    time; tags joined; importance the higher of the two; ``updated_at`` and ``revisions``."""
    path = _writable_path(writer, document_id)
    old: dict[str, Any] = dict(
        read_frontmatter(path.read_text(encoding="utf-8", errors="replace")).metadata
    )
    old_tags = old.get("tags")
    tags = clean_tags(
        [*(str(t) for t in old_tags if t), *new.tags] if isinstance(old_tags, list) else new.tags
    )
    importance = max(read_info(path, writer.config.root).importance, new.importance)
    revisions = old.get("revisions")
    meta = dict(old)
    meta.update(
        title=new.title,
        tags=tags,
        importance=importance,
        updated_at=_stamp(now),
        revisions=(revisions if isinstance(revisions, int) else 0) + 1,
    )
    replace_file(path, render(meta, new.title or "", new.content))
    stored = StoredMemory(**read_info(path, writer.config.root).model_dump())
    stored.action = "updated"
    return stored


def supersede(
    writer: Writer, document_ids: Sequence[str], by_id: str, now: datetime | None = None
) -> IndexReport:
    """Mark memories superseded by ``by_id`` (kept on disk as history) and re-index them."""
    _mark(writer, document_ids, {"status": "superseded", "superseded_by": by_id}, _now(now))
    return index_documents(writer, document_ids)


def _mark(
    writer: Writer, document_ids: Sequence[str], changes: dict[str, Any], now: datetime
) -> None:
    """Set frontmatter ``changes`` on memories (superseded or archived), with the time."""
    stamp = "superseded_at" if changes.get("status") == "superseded" else "archived_at"
    for doc_id in document_ids:
        path = _writable_path(writer, doc_id)
        text = path.read_text(encoding="utf-8")
        replace_file(path, with_frontmatter(text, {**changes, stamp: _stamp(now)}))


def _writable_path(writer: Writer, document_id: str) -> Path:
    path = document_path(document_id, writer.config.root).resolve()
    check_writable(writer.folders, path, document_id)
    if not path.is_file():
        raise MemoryNotFound(
            f"{document_id} is gone; run `engram index` to bring the index up to date"
        )
    return path


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


# --------------------------------------------------------------------------- aging


class AgingReport(IndexReport):
    """What ``engram age`` did (or would do): memories superseded, condensed, archived."""

    superseded: list[str] = []
    condensed: list[str] = []
    archived: list[str] = []
    learned: list[str] = []


def age(
    writer: Writer,
    *,
    dry_run: bool = False,
    now: datetime | None = None,
    folders: Sequence[MemoryFolder] | None = None,
) -> AgingReport:
    """Apply the aging rules to the given memory folders (default: every writable one)."""
    when = _now(now)
    report = AgingReport(dry_run=dry_run)
    for folder in (f for f in folders or writer.folders if f.writable):
        infos = [read_info(p, writer.config.root) for p in memory_files(folder.path)]
        plan = plan_aging(infos, writer.config.lifecycle)
        changed: list[str] = []
        for old, newer in plan.superseded:
            report.superseded.append(old.path)
            if not dry_run:
                _mark(writer, [old.path], {"status": "superseded", "superseded_by": newer.id}, when)
                changed.append(old.path)
        for group in plan.condense:
            changed.extend(_condense(writer, folder, group, report, dry_run, when))
        if changed:
            _add(report, index_documents(writer, changed))
    return report


def _condense(
    writer: Writer,
    folder: MemoryFolder,
    group: list[MemoryInfo],
    report: AgingReport,
    dry_run: bool,
    when: datetime,
) -> list[str]:
    """Condense old session summaries into a learned pattern, or archive them."""
    from engram.protocols import Condenses

    extractor = writer.extractor
    learned = None
    if isinstance(extractor, Condenses) and not dry_run:
        known = [k for k in (read_known(writer, m.path) for m in group) if k is not None]
        try:
            learned = extractor.condense(known)
        except Exception as exc:  # someone else's code: archive instead of failing the write
            report.warnings.append(f"condensing session summaries failed ({exc}); archived them")
    paths = [m.path for m in group]
    if dry_run:
        report.condensed.extend(paths)
        return []
    if learned is not None:
        stored = remember(
            writer,
            learned.content,
            title=learned.title,
            type="learned-pattern",
            scope="user" if folder.scope == "user" else "project",
            tags=learned.tags,
            source="condense",
            importance=learned.importance,
            now=when,
        )
        report.learned.append(stored.path)
        report.condensed.extend(paths)
        _mark(writer, paths, {"status": "superseded", "superseded_by": stored.id}, when)
    else:
        report.archived.extend(paths)
        _mark(writer, paths, {"status": "archived"}, when)
    return paths


def _add(report: IndexReport, other: IndexReport) -> None:
    report.chunks_written += other.chunks_written
    report.chunks_deleted += other.chunks_deleted
    report.texts_embedded += other.texts_embedded
    report.warnings.extend(other.warnings)


# --------------------------------------------------------------------------- reading


def list_memories(
    writer: Writer,
    *,
    type: str | None = None,
    scope: str | None = None,
    tag: str | None = None,
    since: date | datetime | str | None = None,
    until: date | datetime | str | None = None,
    limit: int | None = None,
    include_superseded: bool = False,
) -> list[MemoryInfo]:
    """Memories of every folder matching every filter given, newest first (``until`` is
    inclusive); superseded and archived ones only when asked for."""
    low = _as_bound(since, "since")
    high = _as_bound(until, "until")
    found: list[tuple[datetime | None, MemoryInfo]] = []
    for info in all_memories(writer):
        if not include_superseded and not info.live:
            continue
        if type is not None and info.type != type:
            continue
        if scope is not None and info.scope != scope:
            continue
        if tag is not None and tag not in info.tags:
            continue
        created = parse_iso(info.created_at) if info.created_at else None
        if (low or high) and created is None:
            continue
        if low and created and created < low:
            continue
        if high and created and created > high:
            continue
        found.append((created, info))
    oldest = datetime.min.replace(tzinfo=UTC)
    found.sort(key=lambda pair: (pair[0] or oldest, pair[1].path), reverse=True)
    infos = [info for _, info in found]
    return infos[:limit] if limit is not None else infos


def all_memories(writer: Writer) -> list[MemoryInfo]:
    """Every memory file of every folder, its ``scope`` the folder's (the folder is the truth),
    with its access counts."""
    out = []
    for folder in writer.folders:
        counts = writer.access.read(folder)
        for path in memory_files(folder.path):
            info = read_info(path, writer.config.root)
            update: dict[str, Any] = {"scope": folder.scope}
            seen = counts.get(info.id or "")
            if seen is not None:
                when = datetime.fromtimestamp(seen.last_at, UTC)
                update.update(access_count=seen.count, last_accessed_at=_stamp(when))
            out.append(info.model_copy(update=update))
    return out


def _as_bound(value: date | datetime | str | None, name: str) -> datetime | None:
    if value is None:
        return None
    if isinstance(value, str):
        parsed = parse_iso(value)
        if parsed is None:
            raise InvalidMemory(
                f"{name}={value!r} is not a date; use an ISO date such as 2025-01-31"
            )
        return parsed
    return to_utc(value)


# --------------------------------------------------------------------------- finding, forgetting


def find(writer: Writer, id_or_path: str) -> list[Path]:
    """Files of the memory named by id, or by path (as search results show it, or relative to
    the project memory folder). Paths outside every memory folder are refused."""
    roots = [f.path for f in writer.folders]
    check_path_syntax(id_or_path)
    if MEMORY_ID.match(id_or_path):
        matches = [
            p
            for root in roots
            for p in memory_files(root)
            if read_info(p, writer.config.root).id == id_or_path
        ]
        if not matches:
            raise MemoryNotFound(
                f"no memory with id {id_or_path}; `engram list` (or memory_list) shows the ids"
            )
        return matches
    if "/" not in id_or_path and not id_or_path.endswith((".md", ".markdown")):
        raise MemoryNotFound(
            f"no memory with id {id_or_path}; ids look like 20250131-120000-abc123 "
            "(`engram list` shows them), or pass the memory's path"
        )
    raw = Path(id_or_path)
    for base in (writer.config.root, roots[0]):
        target = (raw if raw.is_absolute() else base / raw).resolve()
        if folder_of(writer.folders, target) is not None and target.is_file():
            if not target.name.endswith((".md", ".markdown")):
                raise UnsafePath(f"{id_or_path} is not a markdown memory; refused")
            return [target]
    target = (raw if raw.is_absolute() else writer.config.root / raw).resolve()
    if folder_of(writer.folders, target) is None:
        where = ", ".join(str(r) for r in roots)
        raise UnsafePath(f"{id_or_path} is outside the memory folders ({where}); refused")
    raise MemoryNotFound(f"no memory file {id_or_path}; `engram list` shows the memories")


def forget(writer: Writer, id_or_path: str) -> list[str]:
    """Remove the memory's file(s) and every chunk of them; returns the paths removed.
    Memories in an external folder are refused (engram only reads those)."""
    paths = find(writer, id_or_path)
    for path in paths:
        check_writable(writer.folders, path.resolve(), id_or_path)
    removed: list[str] = []
    for path in paths:
        doc_id = document_id_for(path, writer.config.root)
        info = read_info(path, writer.config.root)
        path.unlink()
        writer.store.delete_documents([doc_id])
        if info.id:
            writer.access.forget(path, [info.id])
        removed.append(doc_id)
    return removed
