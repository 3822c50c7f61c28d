"""A memory as a markdown file: naming, rendering, atomic writes and reading its frontmatter.

The file is the truth. Its frontmatter holds every piece of a memory's state, so an index
rebuilt from the files loses nothing:

- ``id``, ``title``, ``type``, ``scope``, ``tags``, ``created_at``, ``source``, ``project``;
- ``importance`` (default 1.0: what ``engram prune`` removes last);
- ``updated_at`` and ``revisions`` once a near-duplicate was merged into it;
- ``supersedes`` (ids this memory replaced), ``status`` (``superseded`` or ``archived``),
  ``superseded_by`` / ``superseded_at`` / ``archived_at`` once it stopped being live.

New files are written atomically (temp file, fsync, hard link to a fresh name), so a reader never
sees half a memory and an existing file is never overwritten; an update replaces a file with
``os.replace`` after the same fsync. Every path an agent hands in goes through
``check_path_syntax`` and ``resolve_inside`` first.
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import tempfile
import unicodedata
from collections.abc import Iterable, Iterator, Sequence
from datetime import datetime
from pathlib import Path, PurePosixPath
from typing import Any

import yaml

from engram.chunking import read_frontmatter
from engram.errors import InvalidMemory, UnsafePath
from engram.ingest.document_ids import document_id_for
from engram.ingest.vault import ALWAYS_SKIPPED_DIRS
from engram.memories.fields import scalar_text, when_text
from engram.models import HIDDEN_STATUSES, MemoryInfo
from engram.text.redact import has_private_tag, strip_private, strip_private_data

MEMORY_ID = re.compile(r"^\d{8}-\d{6}-[0-9a-f]{6}$")
MAX_SLUG = 60
TEMP_PREFIX = ".engram-"
TEMP_SUFFIX = ".tmp"
# Names Windows refuses as files whatever the extension: a memory folder may be synced there.
_RESERVED = frozenset(
    {"con", "prn", "aux", "nul"} | {f"{p}{i}" for p in ("com", "lpt") for i in range(1, 10)}
)
_DRIVE = re.compile(r"^[A-Za-z]:")


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


# --------------------------------------------------------------------------- naming and rendering


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


def render(frontmatter: dict[str, Any], title: str, content: str) -> str:
    """The markdown of a memory: frontmatter, a heading (so the title is searchable, unless the
    text already starts with it), the text."""
    head = yaml.safe_dump(frontmatter, sort_keys=False, allow_unicode=True, width=1000)
    body = content.strip()
    if default_title(body) != title:
        body = f"# {title}\n\n{body}"
    return f"---\n{head}---\n{body}\n"


def wording_of(meta: dict[str, Any], body: str) -> str:
    """The text a memory was written with: its body without the heading ``render`` added."""
    text = body.strip()
    title = meta.get("title")
    if isinstance(title, str) and title:
        heading = f"# {title}"
        if text.startswith(heading + "\n"):
            rest = text[len(heading) :].strip()
            if rest and default_title(rest) != title:
                return rest
    return text


def with_frontmatter(text: str, changes: dict[str, Any]) -> str:
    """``text`` with its frontmatter keys updated (``None`` removes a key), the body unchanged
    byte for byte and keys a person added kept in place."""
    fm = read_frontmatter(text)
    if fm.warning:
        raise InvalidMemory(f"the memory's frontmatter cannot be read ({fm.warning})")
    meta: dict[str, Any] = dict(fm.metadata)
    for key, value in changes.items():
        if value is None:
            meta.pop(key, None)
        else:
            meta[key] = value
    head = yaml.safe_dump(meta, sort_keys=False, allow_unicode=True, width=1000)
    return f"---\n{head}---\n{fm.body}"


def without_private(text: str) -> str:
    """A memory file's text without its ``<private>`` spans, frontmatter value by value and the
    body apart: an unclosed tag a person left in a title hides the rest of the title, not the
    whole memory. Text with no tag comes back unchanged, byte for byte."""
    if not has_private_tag(text):
        return text
    fm = read_frontmatter(text)
    if fm.warning or not fm.metadata:
        return strip_private(text)
    head = yaml.safe_dump(
        strip_private_data(fm.metadata), sort_keys=False, allow_unicode=True, width=1000
    )
    return f"---\n{head}---\n{strip_private(fm.body)}"


# --------------------------------------------------------------------------- writing


def write_new_file(folder: Path, stem: str, text: str) -> Path:
    """Write ``text`` to ``folder/stem.md`` (or ``stem-2.md``, ``stem-3.md`` … if taken).

    The bytes go to a temp file first and are fsynced; the final name is then created by a hard
    link, which fails rather than replace an existing file. A crash leaves at most a hidden
    ``.engram-*.tmp`` file behind, never a partial memory.
    """
    folder.mkdir(parents=True, exist_ok=True)
    tmp = _temp_copy(folder, text)
    try:
        for n in range(1, 10_000):
            target = folder / (f"{stem}.md" if n == 1 else f"{stem}-{n}.md")
            if _claim(tmp, target):
                _fsync_dir(folder)
                return target
        raise InvalidMemory(f"{folder} already holds 9999 memories named {stem!r}; pick a title")
    finally:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()


def replace_file(path: Path, text: str) -> None:
    """Give ``path`` the content ``text`` atomically: readers see the old file or the new one."""
    tmp = _temp_copy(path.parent, text)
    try:
        os.replace(tmp, path)
        _fsync_dir(path.parent)
    finally:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()


def _temp_copy(folder: Path, text: str) -> Path:
    fd, tmp_name = tempfile.mkstemp(dir=folder, prefix=TEMP_PREFIX, suffix=TEMP_SUFFIX)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(text.encode("utf-8"))
            handle.flush()
            os.fsync(handle.fileno())
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp_name)
        raise
    return Path(tmp_name)


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


# --------------------------------------------------------------------------- reading


def memory_files(memory_dir: Path) -> Iterator[Path]:
    """Markdown files of a memory folder (hidden and tool folders and temp files skipped)."""
    if not memory_dir.is_dir():
        return
    for folder, dirs, files in os.walk(memory_dir):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in ALWAYS_SKIPPED_DIRS)
        for name in sorted(files):
            if name.endswith((".md", ".markdown")) and not name.startswith("."):
                path = Path(folder) / name
                # os.walk does not enter linked folders, so only a linked file can lead out
                if not os.path.islink(path) or path.resolve().is_relative_to(memory_dir):
                    yield path


def read_info(path: Path, project_root: Path) -> MemoryInfo:
    """A memory file's frontmatter as ``MemoryInfo`` (unreadable YAML gives bare metadata)."""
    text = path.read_text(encoding="utf-8", errors="replace")
    return info_from(read_frontmatter(text).metadata, path, project_root)


def present(paths: Iterable[Path], project_root: Path) -> Iterator[tuple[Path, MemoryInfo]]:
    """(path, info) of each memory file still there when read: another process may forget
    one between the folder listing and the read."""
    for path in paths:
        try:
            yield path, read_info(path, project_root)
        except FileNotFoundError:
            continue


def info_from(meta: dict[str, Any], path: Path, project_root: Path) -> MemoryInfo:
    """What every read path shows of a memory: the words a person may have typed into its
    frontmatter (title, tags, source, project) with their ``<private>`` spans removed, as the
    index removes them from the body. A file engram wrote never holds one; a hand edit may."""
    tags = meta.get("tags")
    supersedes = meta.get("supersedes")
    revisions = meta.get("revisions")
    return MemoryInfo(
        id=_opt_str(meta.get("id")),
        path=document_id_for(path, project_root),
        title=_shown(meta.get("title")) or strip_private(path.stem).strip() or "memory",
        type=_opt_str(meta.get("type")),
        scope=_opt_str(meta.get("scope")),
        tags=[t for t in (_shown(t) for t in tags) if t] if isinstance(tags, list) else [],
        created_at=when_text(meta.get("created_at")),
        updated_at=when_text(meta.get("updated_at")),
        source=_shown(meta.get("source")),
        project=_shown(meta.get("project")),
        importance=_importance(meta.get("importance")),
        subject=_shown(meta.get("subject")),
        attribute=_shown(meta.get("attribute")),
        value=_shown(meta.get("value")),
        status=status_of(meta),
        superseded_by=_opt_str(meta.get("superseded_by")),
        supersedes=[str(s) for s in supersedes] if isinstance(supersedes, list) else [],
        conflicts_with=_ids(meta.get("conflicts_with")),
        related=_ids(meta.get("related")),
        revision_count=len(revisions) if isinstance(revisions, list) else 0,
    )


def _ids(value: object) -> list[str]:
    return [str(v) for v in value] if isinstance(value, list) else []


def status_of(meta: dict[str, Any]) -> str:
    """``live``, ``superseded`` or ``archived``, from a memory's frontmatter."""
    status = meta.get("status")
    if status in HIDDEN_STATUSES:
        return str(status)
    return "superseded" if scalar_text(meta.get("superseded_by")) else "live"


def read_body(path: Path) -> str:
    """A memory's text without its frontmatter."""
    return read_frontmatter(path.read_text(encoding="utf-8", errors="replace")).body


def _importance(value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return 1.0
    return max(0.0, float(value))


def _shown(value: object) -> str | None:
    """A frontmatter text as read paths show it: private spans out."""
    text = _opt_str(value)
    return (strip_private(text).strip() or None) if text is not None else None


def _opt_str(value: object) -> str | None:
    return scalar_text(value)  # a list or mapping is ignored (memory_fields warns on index)
