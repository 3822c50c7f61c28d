"""Agent memories as markdown files: written losslessly (merged, superseded, linked), aged,
listed and forgotten. The files are the truth; the store is derived from them.

A new memory is ``<memory folder>/<type>/<slug>.md`` in the folder of its scope (project or
user; external folders are never written). Under the folder's write lock
(``engram.memories.lifecycle.locking``), the same text already stored (``content_hash``) is merged
into first, with no embedder; otherwise the nearest live memories of its scope decide
(``engram.memories.judge.dedup``): the same fact is merged (``lifecycle.merge``: the earlier wording
kept as a revision), judged reversals are superseded, unsure ones and close-but-different ones
are linked (``lifecycle.links``). Nothing stored is ever discarded but by ``forget``/``prune``.
File formats and atomic writes live in ``engram.memories.files``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

from engram.chunking import read_frontmatter
from engram.errors import InvalidMemory, MemoryNotFound, UnsafePath
from engram.filters import parse_iso, to_utc
from engram.ingest.document_ids import document_id_for
from engram.ingest.sync import IndexReport
from engram.memories import aging as memory_aging
from engram.memories.files import (
    MEMORY_ID,
    check_path_syntax,
    clean_tags,
    default_title,
    info_from,
    memory_files,
    new_memory_id,
    present,
    read_info,
    render,
    slugify,
    target_folder,
    write_new_file,
)
from engram.memories.judge.dedup import WritePlan, find_neighbours, plan_write
from engram.memories.judge.merge import merge
from engram.memories.judge.slots import read_slots, same_subject
from engram.memories.lifecycle import collision
from engram.memories.lifecycle.content_hash import HASH_KEY, content_hash, same_text
from engram.memories.lifecycle.crash import crash_point
from engram.memories.lifecycle.links import added, link_back
from engram.memories.lifecycle.locking import write_lock
from engram.memories.lifecycle.memory_io import (
    Written,
    index_documents,
    mark,
    now_ms,
    read_known,
    retire,
    stamp,
    update_frontmatter,
)
from engram.memories.lifecycle.pending import add_healed, finishing
from engram.memories.scopes import (
    SCOPES,
    MemoryFolder,
    Scope,
    check_writable,
    folder_of,
    writable_folder,
)
from engram.memories.writer import Writer
from engram.models import ExtractedMemory, MemoryInfo, MemoryType, OnCollision, StoredMemory
from engram.text.redact import strip_private
from engram.text.unicode import require_unicode
from engram.types import NAMES, ages

MEMORY_TYPES: tuple[str, ...] = NAMES

__all__ = [
    "MEMORY_ID",
    "InvalidMemory",
    "MemoryInfo",
    "MemoryNotFound",
    "Scope",
    "StoredMemory",
    "forget",
    "index_documents",
    "list_memories",
    "read_known",
    "remember",
]


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
    subject: str | None = None,
    attribute: str | None = None,
    value: str | None = None,
    on_collision: OnCollision | None = None,
) -> StoredMemory:
    """Write a memory (private spans removed first), or merge it into the memory holding the
    same fact (keeping the earlier wording); supersede and link what the plan says; age its
    kind; index what changed. One writer at a time per memory folder. ``on_collision`` (default
    ``[memory] on_collision``): a taken file name keeps both, updates that memory, or fails
    (``engram.memories.lifecycle.collision``)."""
    choice = collision.check_choice(on_collision or writer.config.memory.on_collision)
    if type not in MEMORY_TYPES:
        raise InvalidMemory(f"unknown memory type {type!r}; use one of {', '.join(MEMORY_TYPES)}")
    if scope not in SCOPES:
        raise InvalidMemory(f"unknown scope {scope!r}; use one of {', '.join(SCOPES)}")
    if not 0 <= importance <= 10:
        raise InvalidMemory(f"importance must be between 0 and 10, got {importance}")
    for what, given in (
        ("the memory", content),
        ("the title", title or ""),
        ("the source", source),
    ):
        require_unicode(given, what, InvalidMemory)
    for tag in tags:
        require_unicode(tag, f"the tag {tag.encode('utf-8', 'replace').decode()!r}", InvalidMemory)
    text = strip_private(content).strip()
    if not text:
        raise InvalidMemory(
            "the memory is empty (after removing <private> spans); give it some content"
        )
    slots = _slots(text, {"subject": subject, "attribute": attribute, "value": value})
    new = ExtractedMemory(
        type=type,
        content=text,
        title=" ".join(strip_private(title or "").split()) or default_title(text),
        tags=clean_tags(tags),
        importance=importance,
        **slots,
    )
    clean_source = " ".join(strip_private(source).split()) or "agent"
    created = now_ms(now)
    folder = writable_folder(writer.folders, scope)
    target_dir, stem = target_folder(folder.path, type, path)
    writer.check_identity(writing=True)
    frontmatter: dict[str, Any] = {
        "id": new_memory_id(created),
        "title": new.title,
        "type": type,
        "scope": scope,
        "tags": new.tags,
        "created_at": stamp(created),
        "source": clean_source,
        "project": writer.config.root.name,
        "importance": importance,
        **{k: v for k, v in slots.items() if v},
        HASH_KEY: content_hash(text),
    }
    with write_lock(folder.path), finishing(writer, folder) as healed:
        same = same_text(folder.path, type, frontmatter[HASH_KEY])
        if same is not None:  # the same text: merged before (and without) the embedder
            stored, merged = merge(writer, document_id_for(same, writer.config.root), new, created)
            _add_index(stored, index_documents(writer, written={stored.path: Written(merged)}))
            add_healed(stored, healed)
            return stored
        existing = collision.taken(target_dir, stem or slugify(new.title or ""))
        settled = collision.settle(writer, existing, choice, new, created)
        if settled is not None:
            add_healed(settled, healed)
            return settled
        # Cut once: the plan compares the first window, the index reuses the cut (and vector).
        markdown = render(frontmatter, new.title or "", text)
        cut = Written(markdown, writer.chunker.chunk_document(markdown))
        plan, cut = _plan(writer, new, folder, cut)
        crash_point("after-plan")
        stored = _write(writer, plan, new, frontmatter, target_dir, stem, created, cut)
        if ages(type):
            aged = memory_aging.age(writer, remember, now=created, folders=[folder])
            stored.warnings.extend(aged.warnings)
        add_healed(stored, healed)
    return stored


def _slots(text: str, given: dict[str, str | None]) -> dict[str, str | None]:
    """The memory's subject, attribute and value: those given (private spans out), the rest
    read from its text (``engram.memories.judge.slots``)."""
    read_ = read_slots(text)
    out: dict[str, str | None] = {}
    for what, slot in given.items():
        if slot is not None:
            require_unicode(slot, f"the {what}", InvalidMemory)
        out[what] = " ".join(strip_private(slot or "").split()) or getattr(read_, what)
    return out


def _write(
    writer: Writer,
    plan: WritePlan,
    new: ExtractedMemory,
    frontmatter: dict[str, Any],
    target_dir: Path,
    stem: str | None,
    created: datetime,
    cut: Written | None = None,
) -> StoredMemory:
    """Carry out ``plan``: the new side first (it names what it supersedes and links), then
    the older memories, so a crash at any point is completed by the next index. ``cut``: the
    new memory's markdown as planned, its chunker reading and first window's vector."""
    cut = cut or Written("")
    links = {
        "supersedes": [n.id for n in plan.stale],
        "conflicts_with": [n.id for n in plan.conflicts],
        "related": [n.id for n in plan.related],
    }
    if plan.duplicate is not None:
        stored, text = merge(writer, plan.duplicate.document_id, new, created)
        meta = read_frontmatter(text).metadata
        changes = {k: added(meta.get(k), v) for k, v in links.items() if v}
        if any(v is not None for v in changes.values()):
            changed = {k: v for k, v in changes.items() if v}
            text = update_frontmatter(writer, stored.path, changed, text)
    else:
        frontmatter.update({k: v for k, v in links.items() if v})
        text = render(frontmatter, new.title or "", new.content)
        path = write_new_file(target_dir, stem or slugify(new.title or ""), text)
        # The text just written is at hand (read when cut, unless links changed it).
        got = cut.parsed if text == cut.text else None
        meta = got.metadata if got else read_frontmatter(text).metadata
        stored = StoredMemory(**info_from(meta, path, writer.config.root).model_dump())
    crash_point("after-new-file")
    stored.warnings.extend(plan.warnings)
    # Links change the frontmatter (so the lines), not the first window: its vector still fits.
    written = {stored.path: Written(text, cut.parsed if text == cut.text else None, cut.vectors)}
    _add_index(stored, index_documents(writer, written=written))
    crash_point("after-index-new")
    older: dict[str, Written] = {}
    if plan.stale:
        stored.superseded = [n.id for n in plan.stale]
        stale = [n.document_id for n in plan.stale]
        older = mark(writer, stale, {"status": "superseded", "superseded_by": stored.id}, created)
        crash_point("after-mark-old")
    for key, group in (("conflicts_with", plan.conflicts), ("related", plan.related)):
        older.update(link_back(writer, [n.document_id for n in group], key, stored.id))
    stored.linked_conflicts = [n.id for n in plan.conflicts]
    stored.linked_related = [n.id for n in plan.related]
    if older:
        stored.warnings.extend(index_documents(writer, written=older).warnings)
    crash_point("after-index-old")
    return stored


def _add_index(stored: StoredMemory, report: IndexReport) -> None:
    stored.chunks = report.chunks_written
    stored.warnings.extend(report.warnings)
    # Written but not searchable (a NUL byte, over max_file_bytes): the file keeps the words,
    # and the caller must hear that search will not find them.
    stored.warnings.extend(
        f"{s.path} was written but not indexed: {s.reason}" for s in report.skipped
    )


def _plan(
    writer: Writer, new: ExtractedMemory, folder: MemoryFolder, cut: Written
) -> tuple[WritePlan, Written]:
    """Dedup and contradiction for ``new``; an embedder that fails means neither (a warning).
    ``cut`` comes back with the vector of the first window, the only text compared."""
    spans = cut.parsed.chunks if cut.parsed else []
    if "vector" not in writer.store.capabilities or not spans:
        return WritePlan(), cut
    try:
        vector = writer.embedder.embed([spans[0].text], input_type="document")[0]
    except Exception as exc:  # the embedder is someone else's code, maybe over a network
        return WritePlan(
            warnings=[
                f"embedder failed ({type(exc).__name__}: {exc}); the memory was written without "
                "checking for near-duplicates or contradictions (exact duplicates still merge)"
            ]
        ), cut
    cut = replace(cut, vectors={spans[0].text: vector})
    neighbours = find_neighbours(
        writer.store,
        vector,
        folder.scope,
        writer.config.lifecycle.neighbours,
        lambda doc_id: read_known(writer, doc_id),
    )
    return plan_write(new, neighbours, writer.config.lifecycle, writer.extractor), cut


def supersede(
    writer: Writer, document_ids: Sequence[str], by_id: str, now: datetime | None = None
) -> IndexReport:
    """Supersede memories by the memory ``by_id`` (they stay on disk as history; it names them
    in ``supersedes``) and re-index them all."""
    newer = find(writer, by_id)[0]
    newer_doc = document_id_for(newer, writer.config.root)
    folder = folder_of(writer.folders, newer.resolve())
    with write_lock(folder.path if folder else newer.parent):
        retire(writer, document_ids, newer_doc, by_id, now_ms(now))
        return index_documents(writer, [newer_doc, *document_ids])


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
    subject: str | None = None,
) -> list[MemoryInfo]:
    """Memories of every folder matching every filter given, newest first (``until`` is
    inclusive); superseded and archived ones only when asked for. ``subject`` matches the
    frontmatter's ``subject`` whatever its case ("Alice" finds alice)."""
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
        if subject is not None and same_subject(info.subject, subject) is not True:
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
        for _path, info in present(memory_files(folder.path), writer.config.root):
            update: dict[str, Any] = {"scope": folder.scope}
            seen = counts.get(info.id or "")
            if seen is not None:
                when = datetime.fromtimestamp(seen.last_at, UTC)
                update.update(access_count=seen.count, last_accessed_at=stamp(when))
            out.append(info.model_copy(update=update))
    return out


def _as_bound(value: date | datetime | str | None, name: str) -> datetime | None:
    if value is None or not isinstance(value, str):
        return None if value is None else to_utc(value)
    if (parsed := parse_iso(value)) is None:
        raise InvalidMemory(f"{name}={value!r} is not a date; use an ISO date such as 2025-01-31")
    return parsed


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
            for p, info in present(memory_files(root), writer.config.root)
            if info.id == id_or_path
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
        folder = folder_of(writer.folders, path.resolve())
        with write_lock(folder.path if folder else path.parent):
            try:
                info = read_info(path, writer.config.root)
                path.unlink()
            except FileNotFoundError:  # another engram forgot it first: the wish came true
                raise MemoryNotFound(
                    f"{id_or_path} was just forgotten by another engram process; nothing left "
                    "to forget"
                ) from None
            writer.store.delete_documents([doc_id])
        if info.id:
            writer.access.forget(path, [info.id])
        removed.append(doc_id)
    return removed
