"""Agent memories as markdown files: the files are the truth, the store is derived from them.

A memory is ``<memory dir>/<type>/<slug>.md`` with YAML frontmatter (id, title, type, scope, tags,
created_at, source). Files are written atomically (temp file, fsync, hard link to a fresh name),
so a reader never sees half a memory and an existing file is never overwritten. Every path an
agent hands in goes through ``check_path_syntax`` and ``resolve_inside`` first.
"""

from __future__ import annotations

import contextlib
import functools
import os
import re
import secrets
import tempfile
import unicodedata
from collections.abc import Iterable, Iterator, Sequence
from datetime import UTC, date, datetime
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Literal, get_args

import yaml
from pydantic import BaseModel, Field

from engram.chunking import read_frontmatter
from engram.errors import EngramError, UnsafePath
from engram.filters import parse_iso, to_utc
from engram.ingest.sync import IndexReport, chunk_markdown_document, sync_files
from engram.ingest.vault import ALWAYS_SKIPPED_DIRS, VaultFile, document_id_for
from engram.models import MemoryType
from engram.redact import strip_private

if TYPE_CHECKING:
    from engram.memory import Memory

Scope = Literal["user", "project"]
SCOPES: tuple[str, ...] = get_args(Scope)
MEMORY_TYPES: tuple[str, ...] = get_args(MemoryType)
MEMORY_ID = re.compile(r"^\d{8}-\d{6}-[0-9a-f]{6}$")
MAX_SLUG = 60
MAX_MEMORY_BYTES = 1_000_000
TEMP_PREFIX = ".engram-"
TEMP_SUFFIX = ".tmp"
# Names Windows refuses as files whatever the extension: a memory folder may be synced there.
_RESERVED = frozenset(
    {"con", "prn", "aux", "nul"} | {f"{p}{i}" for p in ("com", "lpt") for i in range(1, 10)}
)
_DRIVE = re.compile(r"^[A-Za-z]:")


class MemoryNotFound(EngramError):
    """No memory has the id or path that was asked for."""


class InvalidMemory(EngramError):
    """A memory cannot be written as asked (nothing left after redaction, bad tag, bad name)."""


class MemoryInfo(BaseModel):
    """What ``list`` shows of a memory file (its frontmatter plus where it is)."""

    id: str | None = None
    path: str
    title: str
    type: str | None = None
    scope: str | None = None
    tags: list[str] = Field(default_factory=list)
    created_at: str | None = None
    source: str | None = None


class StoredMemory(MemoryInfo):
    """A memory just written, how many chunks indexing it produced, and any warning (an
    embedder that failed leaves the memory searchable by keyword only until the next index)."""

    id: str
    chunks: int = 0
    warnings: list[str] = Field(default_factory=list)


# --------------------------------------------------------------------------- paths


def check_path_syntax(raw: str) -> None:
    """Refuse path forms that have no business in a tool call, before touching the disk."""
    if "\x00" in raw:
        raise UnsafePath("the path contains a NUL byte; refused. Pass a path from search results")
    if not raw.strip():
        raise UnsafePath("the path is empty; pass a path from search results")
    if "\\" in raw or _DRIVE.match(raw):
        raise UnsafePath(
            f"{raw!r} uses Windows separators or a drive letter; refused. Use forward slashes "
            "and a path relative to the project, as search results show it"
        )
    if ".." in PurePosixPath(raw).parts:
        raise UnsafePath(
            f"{raw!r} contains '..'; refused. Use a path inside the memory folders, as search "
            "results show it"
        )


def resolve_inside(raw: str, base: Path, allowed: Sequence[Path], *, what: str) -> Path:
    """``raw`` (relative to ``base``, or absolute) resolved through symlinks; ``UnsafePath``
    unless the real location is inside one of ``allowed`` (resolved folders)."""
    check_path_syntax(raw)
    candidate = Path(raw)
    if not candidate.is_absolute():
        candidate = base / candidate
    resolved = candidate.resolve()
    if not any(resolved == root or resolved.is_relative_to(root) for root in allowed):
        where = ", ".join(str(r) for r in allowed)
        raise UnsafePath(f"{raw} is outside the {what} ({where}); refused")
    return resolved


# --------------------------------------------------------------------------- writing


def new_memory_id(now: datetime) -> str:
    """Sortable by creation time, unique enough for one person's memories."""
    return f"{now:%Y%m%d-%H%M%S}-{secrets.token_hex(3)}"


def slugify(text: str) -> str:
    """A portable file name stem: ascii letters, digits and dashes, at most ``MAX_SLUG`` long."""
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    slug = re.sub(r"[^a-z0-9]+", "-", ascii_text.lower()).strip("-")
    if len(slug) > MAX_SLUG:
        cut = slug[: MAX_SLUG + 1]
        slug = cut[: cut.rfind("-")] if "-" in cut[MAX_SLUG // 2 :] else cut[:MAX_SLUG]
    slug = slug.strip("-") or "memory"
    return f"{slug}-memory" if slug in _RESERVED else slug


def default_title(content: str) -> str:
    """The first line with words, shortened: what a memory without a title is called."""
    for line in content.splitlines():
        words = " ".join(line.strip().lstrip("#>-*").split())
        if words:
            return words if len(words) <= 80 else words[:79].rstrip() + "…"
    return "memory"


def clean_tags(tags: Iterable[str]) -> list[str]:
    """Tags without private spans, surrounding space or duplicates; one line each."""
    out: list[str] = []
    for raw in tags:
        tag = " ".join(strip_private(raw).split())
        if not tag:
            continue
        if len(tag) > 64:
            raise InvalidMemory(f"tag {tag[:20]!r}… is longer than 64 characters; shorten it")
        if tag not in out:
            out.append(tag)
    return out


def render(
    *,
    memory_id: str,
    title: str,
    type: str,
    scope: str,
    tags: list[str],
    created_at: str,
    source: str,
    content: str,
) -> str:
    """The markdown of a memory: frontmatter, a heading (so the title is searchable, unless the
    text already starts with it), the text."""
    frontmatter = {
        "id": memory_id,
        "title": title,
        "type": type,
        "scope": scope,
        "tags": tags,
        "created_at": created_at,
        "source": source,
    }
    head = yaml.safe_dump(frontmatter, sort_keys=False, allow_unicode=True, width=1000)
    body = content.strip()
    if default_title(body) != title:
        body = f"# {title}\n\n{body}"
    return f"---\n{head}---\n{body}\n"


def write_new_file(folder: Path, stem: str, text: str) -> Path:
    """Write ``text`` to ``folder/stem.md`` (or ``stem-2.md``, ``stem-3.md`` … if taken).

    The bytes go to a temp file first and are fsynced; the final name is then created by a hard
    link, which fails rather than replace an existing file. A crash leaves at most a hidden
    ``.engram-*.tmp`` file behind, never a partial memory.
    """
    folder.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(dir=folder, prefix=TEMP_PREFIX, suffix=TEMP_SUFFIX)
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(text.encode("utf-8"))
            handle.flush()
            os.fsync(handle.fileno())
        for n in range(1, 10_000):
            target = folder / (f"{stem}.md" if n == 1 else f"{stem}-{n}.md")
            if _claim(tmp, target):
                _fsync_dir(folder)
                return target
        raise InvalidMemory(f"{folder} already holds 9999 memories named {stem!r}; pick a title")
    finally:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()


def _claim(tmp: Path, target: Path) -> bool:
    """Give ``tmp``'s content the name ``target`` unless that name exists (link or rename)."""
    try:
        os.link(tmp, target)
        return True
    except FileExistsError:
        return False
    except OSError:
        # No hard links here (some network or FAT file systems): fall back to check-and-rename.
        if target.exists() or target.is_symlink():
            return False
        os.replace(tmp, target)
        return True


def _fsync_dir(folder: Path) -> None:
    if os.name != "posix":
        return
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def target_folder(memory_dir: Path, type: str, path: str | None) -> tuple[Path, str | None]:
    """(folder to write in, stem asked for) for a new memory; refuses anything outside."""
    if path is None:
        folder = (memory_dir / type).resolve()
        stem = None
    else:
        rel = path if path.endswith(".md") else f"{path}.md"
        check_path_syntax(rel)
        if Path(rel).is_absolute():
            raise UnsafePath(
                f"{path!r} is absolute; refused. Give a file name relative to the memory "
                "folder, e.g. decisions/database.md"
            )
        pure = PurePosixPath(rel)
        if any(part.startswith(".") for part in pure.parts):
            raise UnsafePath(f"{path!r} names a hidden file or folder; refused")
        folder = (memory_dir / pure.parent).resolve()
        stem = slugify(pure.stem)
    if not (folder == memory_dir or folder.is_relative_to(memory_dir)):
        raise UnsafePath(f"{path or type} leads outside the memory folder {memory_dir}; refused")
    return folder, stem


def remember(
    memory: Memory,
    content: str,
    *,
    title: str | None = None,
    type: MemoryType = "note",
    scope: Scope = "project",
    tags: Sequence[str] = (),
    source: str = "agent",
    path: str | None = None,
    now: datetime | None = None,
) -> StoredMemory:
    """Write a memory file (private spans removed first) and index it at once."""
    if type not in MEMORY_TYPES:
        raise InvalidMemory(f"unknown memory type {type!r}; use one of {', '.join(MEMORY_TYPES)}")
    if scope not in SCOPES:
        raise InvalidMemory(f"unknown scope {scope!r}; use one of {', '.join(SCOPES)}")
    text = strip_private(content).strip()
    if not text:
        raise InvalidMemory(
            "the memory is empty (after removing <private> spans); give it some content"
        )
    clean_title = " ".join(strip_private(title or "").split()) or default_title(text)
    clean_source = " ".join(strip_private(source).split()) or "agent"
    tag_list = clean_tags(tags)
    created = (now or datetime.now(UTC)).astimezone(UTC).replace(microsecond=0)
    memory_dir = memory.memory_dir
    folder, stem = target_folder(memory_dir, type, path)
    memory_id = new_memory_id(created)
    markdown = render(
        memory_id=memory_id,
        title=clean_title,
        type=type,
        scope=scope,
        tags=tag_list,
        created_at=created.isoformat(),
        source=clean_source,
        content=text,
    )
    memory.check_identity(writing=True)
    written = write_new_file(folder, stem or slugify(clean_title), markdown)
    report = _index_one(memory, written)
    return StoredMemory(
        id=memory_id,
        path=document_id_for(written, memory.config.root),
        title=clean_title,
        type=type,
        scope=scope,
        tags=tag_list,
        created_at=created.isoformat(),
        source=clean_source,
        chunks=report.chunks_written,
        warnings=report.warnings,
    )


def _index_one(memory: Memory, path: Path) -> IndexReport:
    """Index one new memory file, recorded under the memory folder as its root."""
    file = VaultFile(path, memory.memory_dir, document_id_for(path, memory.config.root))
    return sync_files(
        [file],
        [path],
        memory.store,
        memory.embedder,
        functools.partial(chunk_markdown_document, memory.chunker),
        max_file_bytes=max(memory.config.vault.max_file_bytes, MAX_MEMORY_BYTES),
    )


# --------------------------------------------------------------------------- reading


def memory_files(memory_dir: Path) -> Iterator[Path]:
    """Markdown files of the memory folder (hidden and tool folders and temp files skipped)."""
    if not memory_dir.is_dir():
        return
    for folder, dirs, files in os.walk(memory_dir):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in ALWAYS_SKIPPED_DIRS)
        for name in sorted(files):
            if name.endswith((".md", ".markdown")) and not name.startswith("."):
                path = Path(folder) / name
                if path.resolve().is_relative_to(memory_dir):
                    yield path


def read_info(path: Path, project_root: Path) -> MemoryInfo:
    """A memory file's frontmatter as ``MemoryInfo`` (unreadable YAML gives bare metadata)."""
    text = path.read_text(encoding="utf-8", errors="replace")
    meta = read_frontmatter(text).metadata
    tags = meta.get("tags")
    return MemoryInfo(
        id=_opt_str(meta.get("id")),
        path=document_id_for(path, project_root),
        title=_opt_str(meta.get("title")) or path.stem,
        type=_opt_str(meta.get("type")),
        scope=_opt_str(meta.get("scope")),
        tags=[str(t) for t in tags] if isinstance(tags, list) else [],
        created_at=_opt_str(meta.get("created_at")),
        source=_opt_str(meta.get("source")),
    )


def _opt_str(value: object) -> str | None:
    return None if value is None else str(value)


def list_memories(
    memory: Memory,
    *,
    type: str | None = None,
    scope: str | None = None,
    tag: str | None = None,
    since: date | datetime | str | None = None,
    until: date | datetime | str | None = None,
    limit: int | None = None,
) -> list[MemoryInfo]:
    """Memories matching every filter given, newest first (``until`` is inclusive)."""
    low = _as_bound(since, "since")
    high = _as_bound(until, "until")
    found: list[tuple[datetime | None, MemoryInfo]] = []
    for path in memory_files(memory.memory_dir):
        info = read_info(path, memory.config.root)
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


# --------------------------------------------------------------------------- forgetting


def find(memory: Memory, id_or_path: str) -> list[Path]:
    """Files of the memory named by id, or by path (as search results show it, or relative to
    the memory folder). Paths outside the memory folder are refused."""
    memory_dir = memory.memory_dir
    if MEMORY_ID.match(id_or_path):
        matches = [
            p for p in memory_files(memory_dir) if read_info(p, memory.config.root).id == id_or_path
        ]
        if not matches:
            raise MemoryNotFound(
                f"no memory has id {id_or_path}; `engram list` (or memory_list) shows the ids"
            )
        return matches
    check_path_syntax(id_or_path)
    raw = Path(id_or_path)
    for base in (memory.config.root, memory_dir):
        target = (raw if raw.is_absolute() else base / raw).resolve()
        if _inside(target, memory_dir) and target.is_file():
            if not target.name.endswith((".md", ".markdown")):
                raise UnsafePath(f"{id_or_path} is not a markdown memory; refused")
            return [target]
    # Nothing found: say why (outside the folder is refused, inside is simply missing).
    resolve_inside(id_or_path, memory.config.root, [memory_dir], what="memory folder")
    raise MemoryNotFound(
        f"no memory file {id_or_path} in {memory_dir}; `engram list` shows the memories"
    )


def _inside(resolved: Path, folder: Path) -> bool:
    return resolved == folder or resolved.is_relative_to(folder)


def forget(memory: Memory, id_or_path: str) -> list[str]:
    """Remove the memory's file(s) and every chunk of them; returns the paths removed."""
    removed: list[str] = []
    for path in find(memory, id_or_path):
        doc_id = document_id_for(path, memory.config.root)
        path.unlink()
        memory.store.delete_documents([doc_id])
        removed.append(doc_id)
    return removed
