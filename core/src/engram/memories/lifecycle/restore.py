"""``engram restore``: bring an earlier version of a memory back, losing nothing.

- ``--revision N`` (``engram history ID`` numbers them): the memory's text becomes revision N's
  wording again; the wording it replaces is kept as a new revision (``why: restored``), so a
  restore can itself be undone.
- A superseded (or archived) memory becomes live again. The memory that superseded it stays
  live too: which of two contradicting facts is true is the user's call, so they are linked
  ``conflicts_with`` both ways and read paths show the newer first with a note. Its id leaves
  the superseder's ``supersedes`` list (that list is the truth, so leaving it there would
  supersede the memory again at the next index). The superseder is written first: a crash in
  between leaves the memory superseded and a one-way link, never a chain that forks.
- A live memory without ``--revision`` goes back to its latest revision.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any

from engram.chunking import read_frontmatter
from engram.errors import InvalidMemory
from engram.ingest.document_ids import document_id_for
from engram.memories.files import (
    memory_files,
    read_info,
    render,
    replace_file,
    status_of,
    wording_of,
)
from engram.memories.lifecycle.content_hash import HASH_KEY, content_hash
from engram.memories.lifecycle.crash import crash_point
from engram.memories.lifecycle.links import added
from engram.memories.lifecycle.locking import write_lock
from engram.memories.lifecycle.memory_io import (
    index_documents,
    now_ms,
    stamp,
    update_frontmatter,
    writable_path,
)
from engram.memories.lifecycle.revisions import REVISIONS_KEY, revisions_from, with_revision
from engram.memories.scopes import folder_of
from engram.memories.writer import Writer
from engram.models import Revision, StoredMemory
from engram.text.redact import strip_private

_RETIRED_KEYS = ("status", "superseded_by", "superseded_at", "archived_at")


def restore(
    writer: Writer, target: Path, revision: int | None = None, now: datetime | None = None
) -> StoredMemory:
    """Make the memory stored at ``target`` live with its current text or revision ``revision``
    (1 = oldest); what it replaces stays as a revision."""
    doc_id = document_id_for(target, writer.config.root)
    path = writable_path(writer, doc_id)
    folder = folder_of(writer.folders, path)
    when = now_ms(now)
    with write_lock(folder.path if folder else path.parent):
        fm = read_frontmatter(path.read_text(encoding="utf-8", errors="replace"))
        meta: dict[str, Any] = dict(fm.metadata)
        memory_id = str(meta.get("id") or doc_id)
        retired = status_of(meta) != "live"
        revisions = revisions_from(meta)
        if revision is None and not retired:
            if not revisions:
                raise InvalidMemory(
                    f"{memory_id} is live and has no earlier wording to restore; "
                    f"`engram history {memory_id}` shows its chain"
                )
            revision = len(revisions)
        changed = [doc_id]
        if retired:
            changed += _release(writer, meta, memory_id)
            for key in _RETIRED_KEYS:
                meta.pop(key, None)
        body = wording_of(meta, fm.body)
        title = str(meta.get("title") or "")
        if revision is not None:
            if not 1 <= revision <= len(revisions):
                raise InvalidMemory(
                    f"{memory_id} has {len(revisions)} revisions; give --revision between 1 and "
                    f"{len(revisions)} (`engram history {memory_id}` lists them)"
                )
            chosen = revisions[revision - 1]
            meta[REVISIONS_KEY] = with_revision(
                meta,
                Revision(
                    wording=body,
                    title=title or None,
                    when=_opt(meta.get("updated_at") or meta.get("created_at")),
                    replaced_at=stamp(when),
                    why=f"restored revision {revision}",
                ),
            )
            # A hand-typed private span stays in the revision it came from, never goes live.
            body = strip_private(chosen.wording).strip()
            if not body:
                raise InvalidMemory(
                    f"revision {revision} of {memory_id} holds only private text; nothing to "
                    "restore"
                )
            title = " ".join(strip_private(chosen.title or "").split()) or title
            meta.update(title=title, updated_at=stamp(when))
            meta[HASH_KEY] = content_hash(body)
        replace_file(path, render(meta, title, body))
        crash_point("restore-after-file")
        report = index_documents(writer, changed)
    stored = StoredMemory(**read_info(path, writer.config.root).model_dump())
    stored.action = "restored"
    stored.warnings.extend(report.warnings)
    return stored


def _release(writer: Writer, meta: dict[str, Any], memory_id: str) -> list[str]:
    """Take ``memory_id`` out of every ``supersedes`` list naming it and link those memories
    (and the recorded superseder) with it as conflicting, on their side first; ``meta`` gets
    its side of the links. Returns the documents changed."""
    by = meta.get("superseded_by")
    changed: list[str] = []
    others: list[str] = []
    for folder in (f for f in writer.folders if f.writable):
        for path in memory_files(folder.path):
            other = read_frontmatter(path.read_text(encoding="utf-8", errors="replace")).metadata
            names = other.get("supersedes")
            names = [str(n) for n in names] if isinstance(names, list) else []
            other_id = other.get("id")
            if memory_id not in names and (other_id != by or not isinstance(other_id, str)):
                continue
            kept = [n for n in names if n != memory_id]
            links = added(other.get("conflicts_with"), [memory_id])
            doc_id = document_id_for(path, writer.config.root)
            update_frontmatter(
                writer,
                doc_id,
                {
                    "supersedes": kept or None,
                    "conflicts_with": links or other.get("conflicts_with"),
                },
            )
            crash_point("restore-after-superseder")
            changed.append(doc_id)
            if isinstance(other_id, str):
                others.append(other_id)
    links = added(meta.get("conflicts_with"), others)
    if links is not None:
        meta["conflicts_with"] = links
    return changed


def _opt(value: object) -> str | None:
    return None if value is None else str(value)
