"""``engram export`` and ``engram import``: every memory with its history, as JSON lines.

A user's backup, or a move to another machine. One line per memory file: the whole markdown file
byte for byte but for ``<private>`` spans a person typed into it, which never leave the machine
(import would drop them anyway) (``markdown``: frontmatter with revisions, supersede chain,
links, importance),
plus what is not in the file (the memory folder's access counts) and, for readers, the fields
parsed out of it. Import writes the markdown back, so ids and chains survive the move.

Import is idempotent and goes through the same lossless rules as every write path:

- a memory whose id is new to its folder is written as a new file (a taken file name gets a
  ``-2`` suffix; a path that leads outside the folder, or a record whose markdown is unreadable
  or names another id, is skipped with a warning, and the others are imported);
- the same id with the same file: unchanged;
- the same id with another wording: the newer of the two (``updated_at``, else ``created_at``)
  stays current, never overwritten by an older one, and every wording the other holds that is
  not kept yet (its text, its revisions) becomes a revision; links and tags are joined.

Afterwards the written memories are indexed and the supersede chains repaired, as
``engram index`` does. External folders are never written: their memories are skipped.
"""

from __future__ import annotations

import json
import unicodedata
from collections.abc import Iterable, Iterator
from datetime import UTC, datetime
from pathlib import Path, PurePosixPath
from typing import Any

from pydantic import BaseModel, Field, ValidationError

from engram.chunking import read_frontmatter
from engram.errors import InvalidMemory, UnsafePath
from engram.filters import parse_iso
from engram.ingest.document_ids import document_id_for
from engram.memories.files import (
    MEMORY_ID,
    check_path_syntax,
    info_from,
    memory_files,
    render,
    replace_file,
    without_private,
    wording_of,
    write_new_file,
)
from engram.memories.lifecycle import chains
from engram.memories.lifecycle.locking import write_lock
from engram.memories.lifecycle.memory_io import MAX_MEMORY_BYTES, index_documents, now_ms, stamp
from engram.memories.lifecycle.revisions import REVISIONS_KEY, revisions_from
from engram.memories.scopes import SCOPES, MemoryFolder, writable_folder
from engram.memories.writer import Writer
from engram.models import Document, MemoryInfo, Revision
from engram.stores.origins import TEXT_KEY
from engram.text.redact import has_private_tag, strip_private

FORMAT = "engram.memory/1"
# A name leaves room for the "-9999" a taken name gets, under the usual 255-byte limit.
MAX_NAME_BYTES = 200
MAX_PATH = 1000
_LINK_KEYS = ("supersedes", "conflicts_with", "related")


class ExportRecord(BaseModel):
    """One memory as ``engram export`` writes it (one JSON object per line)."""

    format: str = FORMAT
    id: str | None = None
    scope: str
    path: str = Field(description="The file's path inside its memory folder (forward slashes).")
    type: str | None = None
    title: str | None = None
    status: str = "live"
    created_at: str | None = None
    updated_at: str | None = None
    importance: float = 1.0
    supersedes: list[str] = Field(default_factory=list)
    superseded_by: str | None = None
    conflicts_with: list[str] = Field(default_factory=list)
    related: list[str] = Field(default_factory=list)
    revisions: list[Revision] = Field(default_factory=list)
    access_count: int = 0
    last_accessed_at: str | None = None
    markdown: str = Field(description="The whole memory file: what import writes back.")


class ImportReport(BaseModel):
    """What ``engram import`` did, memory by memory (paths inside their folders)."""

    created: list[str] = Field(default_factory=list)
    merged: list[str] = Field(default_factory=list)
    unchanged: list[str] = Field(default_factory=list)
    skipped: list[str] = Field(default_factory=list)
    warnings: list[str] = Field(default_factory=list)

    def summary(self) -> str:
        return (
            f"imported {len(self.created)} new and {len(self.merged)} merged memories; "
            f"{len(self.unchanged)} unchanged, {len(self.skipped)} skipped"
        )


# --------------------------------------------------------------------------- export


def export_memories(writer: Writer) -> Iterator[ExportRecord]:
    """Every memory of every folder (external ones too: they are readable), folder by folder."""
    for folder in writer.folders:
        counts = writer.access.read(folder)
        for path in memory_files(folder.path):
            text = without_private(path.read_text(encoding="utf-8", errors="replace"))
            meta = read_frontmatter(text).metadata
            info = info_from(meta, path, writer.config.root)
            seen = counts.get(info.id or "")
            yield _record(
                info, folder.scope, path.relative_to(folder.path).as_posix(), meta, text
            ).model_copy(
                update={
                    "access_count": seen.count if seen else 0,
                    "last_accessed_at": (
                        stamp(datetime.fromtimestamp(seen.last_at, UTC)) if seen else None
                    ),
                }
            )


def export_stored(records: Iterable[Document], memory_dir: str) -> Iterator[ExportRecord]:
    """Every memory among one origin's records on a shared store (``engram export --origin``):
    the server keeps each file's text, so a lost machine's memories come back as markdown.
    ``records`` are under the origin's own ids (project-relative, or absolute outside);
    ``memory_dir`` is ``[memory] dir``, which a team shares through its ``engram.toml``: a
    memory's path inside its folder is its id after that prefix, else its last two parts."""
    prefix = PurePosixPath(memory_dir).as_posix().strip("/") + "/"
    for record in sorted(records, key=lambda r: r.id):
        text = record.metadata.get(TEXT_KEY)
        if record.metadata.get("source") != "memory" or not isinstance(text, str):
            continue
        text = without_private(text)
        meta = read_frontmatter(text).metadata
        info = info_from(meta, Path(record.id), Path("/"))
        if info.id is None or info.scope not in SCOPES:
            continue  # a note someone placed in a memory folder: not a memory to bring back
        inside = record.id[len(prefix) :] if record.id.startswith(prefix) else ""
        path = inside or "/".join(PurePosixPath(record.id).parts[-2:])
        yield _record(info, info.scope, path, meta, text)


def _record(
    info: MemoryInfo, scope: str, path: str, meta: dict[str, Any], text: str
) -> ExportRecord:
    """The export line of one memory file (``text``, private spans already removed)."""
    return ExportRecord(
        id=info.id,
        scope=scope,
        path=path,
        type=info.type,
        title=info.title,
        status=info.status,
        created_at=info.created_at,
        updated_at=info.updated_at,
        importance=info.importance,
        supersedes=info.supersedes,
        superseded_by=info.superseded_by,
        conflicts_with=info.conflicts_with,
        related=info.related,
        revisions=revisions_from(meta),
        markdown=text,
    )


# --------------------------------------------------------------------------- import


def read_records(lines: Iterable[str], name: str) -> Iterator[ExportRecord]:
    """Records from JSON lines; a bad line is an ``InvalidMemory`` naming the line and why."""
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
        except ValueError as exc:
            raise InvalidMemory(
                f"{name}:{number} is not JSON ({exc}); give a file written by `engram export`"
            ) from None
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise InvalidMemory(
                f"{name}:{number} is not an engram memory record (format {FORMAT!r} expected); "
                "give a file written by `engram export`"
            )
        try:
            yield ExportRecord.model_validate(data)
        except ValidationError as exc:
            problem = exc.errors()[0]
            where = ".".join(str(p) for p in problem["loc"]) or "record"
            raise InvalidMemory(f"{name}:{number}: {where}: {problem['msg']}") from None


def import_memories(writer: Writer, records: Iterable[ExportRecord]) -> ImportReport:
    """Write ``records`` into the memory folders (module docstring), then index and repair."""
    writer.check_identity(writing=True)  # a new store takes the embedder's identity
    report = ImportReport()
    limit = max(writer.config.vault.max_file_bytes, MAX_MEMORY_BYTES)
    written: list[str] = []
    by_folder: dict[Path, dict[str, Path]] = {}
    for record in records:
        folder = _folder(writer, record, report)
        if folder is None:
            continue
        with write_lock(folder.path):
            known = by_folder.get(folder.path)
            if known is None:
                known = by_folder[folder.path] = _ids(folder.path)
            try:
                _check(record, limit)
                outcome, path = _import_one(folder, record, known)
            except (InvalidMemory, UnsafePath) as exc:  # this record only; the rest go on
                report.skipped.append(f"{folder.scope}:{shown(record.path)}")
                report.warnings.append(f"{exc}; skipped")
                continue
            except OSError as exc:  # the file system refused this one (a name, a full disk)
                report.skipped.append(f"{folder.scope}:{shown(record.path)}")
                report.warnings.append(
                    f"{shown(record.path)}: cannot be written ({exc.strerror or exc}); skipped"
                )
                continue
        getattr(report, outcome).append(f"{folder.scope}:{shown(record.path)}")
        if record.id and record.access_count:
            writer.access.log(folder).absorb(
                record.id, record.access_count, _epoch(record.last_accessed_at)
            )
        if path is not None and outcome != "unchanged":
            written.append(_document_id(writer, path))
    if written:
        report.warnings.extend(index_documents(writer, written).warnings)
    chains.repair(writer)
    return report


def _folder(writer: Writer, record: ExportRecord, report: ImportReport) -> MemoryFolder | None:
    if record.scope not in SCOPES:
        report.skipped.append(f"{shown(record.scope)}:{shown(record.path)}")
        report.warnings.append(
            f"{shown(record.path)}: scope {shown(record.scope)!r} is not written by engram "
            "(external folders are read-only); skipped"
        )
        return None
    try:
        return writable_folder(writer.folders, record.scope)
    except UnsafePath as exc:
        report.skipped.append(f"{record.scope}:{shown(record.path)}")
        report.warnings.append(f"{shown(record.path)}: {exc}; skipped")
        return None


def _check(record: ExportRecord, limit: int) -> None:
    """Refuse what ``remember`` and ``memory_store`` would never write: an id engram did not
    make (``../../pwn``), a memory too large to index, a name with a private span or a line
    break. Messages show the record without its private spans."""
    where = shown(record.path)
    if record.id is not None and not MEMORY_ID.match(record.id):
        raise InvalidMemory(
            f"{where}: id {shown(record.id)[:40]!r} is not an engram memory id (like "
            "20250131-120000-abc123)"
        )
    size = len(record.markdown.encode("utf-8", errors="replace"))
    if size > limit:
        raise InvalidMemory(
            f"{where}: the memory is {size} bytes, more than the {limit} bytes a memory may hold "
            "to be indexed ([vault] max_file_bytes); split it, or raise the limit"
        )


def _ids(folder: Path) -> dict[str, Path]:
    out: dict[str, Path] = {}
    for path in memory_files(folder):
        meta = read_frontmatter(path.read_text(encoding="utf-8", errors="replace")).metadata
        memory_id = meta.get("id")
        if isinstance(memory_id, str):
            out.setdefault(memory_id, path)
    return out


def _import_one(
    folder: MemoryFolder, record: ExportRecord, known: dict[str, Path]
) -> tuple[str, Path | None]:
    text = without_private(record.markdown)
    incoming = read_frontmatter(text)
    if incoming.warning:
        raise InvalidMemory(
            f"{shown(record.path)}: the frontmatter cannot be read ({incoming.warning})"
        )
    memory_id = incoming.metadata.get("id")
    if record.id is not None and memory_id != record.id:
        raise InvalidMemory(
            f"{shown(record.path)}: the record says id {record.id} but its markdown says "
            f"{shown(str(memory_id))[:40]!r}"
        )
    if memory_id is not None and not (isinstance(memory_id, str) and MEMORY_ID.match(memory_id)):
        raise InvalidMemory(
            f"{shown(record.path)}: its markdown's id {shown(str(memory_id))[:40]!r} is not an "
            "engram memory id (like 20250131-120000-abc123)"
        )
    existing = known.get(memory_id) if isinstance(memory_id, str) else None
    if existing is None:
        target = _target(folder, record.path)
        path = write_new_file(target.parent, target.stem, text)
        if isinstance(memory_id, str):
            known[memory_id] = path
        return "created", path
    current = existing.read_text(encoding="utf-8", errors="replace")
    if current == text:
        return "unchanged", existing
    merged = _merged(current, text)
    if merged is None:
        return "unchanged", existing
    replace_file(existing, merged)
    return "merged", existing


def _target(folder: MemoryFolder, raw: str) -> Path:
    """Where a new imported memory goes: ``raw`` inside ``folder``, nothing hidden, no way out,
    no private span or control character in a name, every name short enough to be a file's."""
    where = shown(raw)
    if has_private_tag(raw):
        raise UnsafePath(f"{where!r} holds a <private> tag; a memory's path never does; refused")
    if any(unicodedata.category(c) in ("Cc", "Cf", "Cs", "Zl", "Zp") for c in raw):
        raise UnsafePath(
            f"{where!r} holds a control character or a line break; a file name never does; refused"
        )
    check_path_syntax(raw)
    pure = PurePosixPath(raw)
    if pure.is_absolute() or any(p.startswith(".") for p in pure.parts) or pure.suffix != ".md":
        raise UnsafePath(
            f"{where!r} is not a memory file path inside a memory folder (relative, no hidden "
            "parts, ending in .md); refused"
        )
    if len(raw) > MAX_PATH or any(len(p.encode("utf-8")) > MAX_NAME_BYTES for p in pure.parts):
        raise UnsafePath(
            f"{where[:60]!r}… is too long for a file path (at most {MAX_NAME_BYTES} bytes a "
            f"name, {MAX_PATH} characters in all); refused"
        )
    target = (folder.path / pure).resolve()
    if not target.is_relative_to(folder.path):
        raise UnsafePath(f"{where!r} leads outside the memory folder {folder.path}; refused")
    return target


def shown(text: str) -> str:
    """A record's value as a message may show it: private spans out, control characters
    escaped, so a warning stays one line and never prints a secret."""
    clean = strip_private(text)
    return "".join(c if c.isprintable() else ascii(c)[1:-1] for c in clean)


def _merged(current: str, incoming: str) -> str | None:
    """``current`` with what ``incoming`` holds that it does not (None: nothing new); the newer
    of the two stays the text."""
    mine, theirs = read_frontmatter(current), read_frontmatter(incoming)
    newer, older = (
        (theirs, mine)
        if _touched(theirs.metadata) > _touched(mine.metadata)
        else (
            mine,
            theirs,
        )
    )
    meta: dict[str, Any] = dict(newer.metadata)
    kept = revisions_from(newer.metadata)
    body = wording_of(newer.metadata, newer.body)
    candidates = [
        *revisions_from(older.metadata),
        Revision(
            wording=wording_of(older.metadata, older.body),
            title=_opt(older.metadata.get("title")),
            when=_opt(older.metadata.get("updated_at") or older.metadata.get("created_at")),
            replaced_at=stamp(now_ms()),
            why="imported",
        ),
    ]
    have = {r.wording.strip() for r in kept} | {body.strip()}
    added = []
    for revision in candidates:
        if revision.wording.strip() not in have:
            have.add(revision.wording.strip())
            added.append(revision)
    links = {key: _union(newer.metadata.get(key), older.metadata.get(key)) for key in _LINK_KEYS}
    tags = _union(newer.metadata.get("tags"), older.metadata.get("tags"))
    changed = bool(added) or any(
        links[key] != _as_list(newer.metadata.get(key)) for key in _LINK_KEYS
    )
    changed = changed or tags != _as_list(newer.metadata.get("tags"))
    if newer is mine and not changed:
        return None
    for key, values in links.items():
        if values:
            meta[key] = values
    if tags:
        meta["tags"] = tags
    if added:
        meta[REVISIONS_KEY] = [
            r.model_dump(exclude_none=True) for r in sorted([*kept, *added], key=_when)
        ]
    return render(meta, str(meta.get("title") or ""), body)


def _touched(meta: dict[str, Any]) -> datetime:
    raw = meta.get("updated_at") or meta.get("created_at")
    parsed = parse_iso(str(raw)) if raw is not None else None
    return parsed or datetime.min.replace(tzinfo=UTC)


def _when(revision: Revision) -> str:
    return revision.when or ""


def _union(first: object, second: object) -> list[str]:
    return list(dict.fromkeys([*_as_list(first), *_as_list(second)]))


def _as_list(value: object) -> list[str]:
    return [str(v) for v in value] if isinstance(value, list) else []


def _opt(value: object) -> str | None:
    return None if value is None else str(value)


def _epoch(raw: str | None) -> float:
    parsed = parse_iso(raw) if raw else None
    return parsed.timestamp() if parsed else datetime.now(UTC).timestamp()


def _document_id(writer: Writer, path: Path) -> str:
    return document_id_for(path, writer.config.root)
