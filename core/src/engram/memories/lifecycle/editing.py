"""Editing and moving a stored memory, losing nothing (the ``memory_edit`` / ``memory_move``
agent tools).

- **Edit**: replace one span of a memory's text (it must occur exactly once, so the edit cannot
  land in the wrong place) or its whole text, and optionally its title, tags or importance. The
  wording it replaces is kept as a revision (``why: edited``), as a merge or a restore keeps it
  (``engram.memories.lifecycle.revisions``), so ``memory_restore`` can undo any edit. The file is
  replaced with one atomic write under the folder's write lock, then indexed again.
- **Move**: give a memory another file name, or move it into the other scope's folder. Its id,
  revisions and links travel with it (links name ids, never paths). The new name is claimed
  with a hard link, which fails rather than replace an existing file; only then is the old name
  removed, so a crash leaves the memory under one name or both, never under none.
"""

from __future__ import annotations

import contextlib
import os
from datetime import datetime
from pathlib import Path
from typing import Any

from engram.chunking import read_frontmatter
from engram.errors import InvalidMemory
from engram.ingest.document_ids import document_id_for
from engram.memories.files import (
    clean_tags,
    read_info,
    render,
    replace_file,
    target_folder,
    with_frontmatter,
    wording_of,
    write_new_file,
)
from engram.memories.lifecycle.content_hash import HASH_KEY, content_hash
from engram.memories.lifecycle.locking import write_lock
from engram.memories.lifecycle.memory_io import index_documents, now_ms, stamp, writable_path
from engram.memories.lifecycle.revisions import REVISIONS_KEY, with_revision
from engram.memories.scopes import Scope, folder_of, writable_folder
from engram.memories.writer import Writer
from engram.models import Revision, StoredMemory
from engram.text.redact import strip_private
from engram.text.unicode import require_unicode


def edit(
    writer: Writer,
    target: Path,
    *,
    content: str | None = None,
    old_text: str | None = None,
    new_text: str | None = None,
    title: str | None = None,
    tags: list[str] | None = None,
    importance: float | None = None,
    now: datetime | None = None,
    why: str = "edited",
) -> StoredMemory:
    """Change the memory stored at ``target``: ``old_text`` → ``new_text`` (exactly one
    occurrence), or the whole text ``content``; the replaced wording stays as a revision
    (``why``: edited, or updated by a ``remember`` that chose ``on_collision = "update"``)."""
    for what, given in (("the content", content), ("old_text", old_text), ("new_text", new_text)):
        if given is not None:
            require_unicode(given, what, InvalidMemory)
    doc_id = document_id_for(target, writer.config.root)
    path = writable_path(writer, doc_id)
    folder = folder_of(writer.folders, path)
    when = now_ms(now)
    with write_lock(folder.path if folder else path.parent):
        fm = read_frontmatter(path.read_text(encoding="utf-8", errors="replace"))
        if fm.warning:
            raise InvalidMemory(f"{doc_id}'s frontmatter cannot be read ({fm.warning}); fix it")
        meta: dict[str, Any] = dict(fm.metadata)
        memory_id = str(meta.get("id") or doc_id)
        body = wording_of(meta, fm.body)
        old_title = str(meta.get("title") or "")
        new_body = _new_body(memory_id, body, content, old_text, new_text)
        new_title = " ".join(strip_private(title or "").split()) or old_title
        changes: dict[str, Any] = {}
        if tags is not None:
            changes["tags"] = clean_tags(tags)
        if importance is not None:
            changes["importance"] = importance
        reworded = new_body != body or new_title != old_title
        if not reworded and all(meta.get(k) == v for k, v in changes.items()):
            stored = StoredMemory(**read_info(path, writer.config.root).model_dump())
            stored.action = "unchanged"
            return stored
        if reworded:
            meta[REVISIONS_KEY] = with_revision(
                meta,
                Revision(
                    wording=body,
                    title=old_title or None,
                    when=_opt(meta.get("updated_at") or meta.get("created_at")),
                    replaced_at=stamp(when),
                    why=why,
                ),
            )
            meta[HASH_KEY] = content_hash(new_body)
        meta.update(changes, title=new_title, updated_at=stamp(when))
        replace_file(path, render(meta, new_title, new_body))
        report = index_documents(writer, [doc_id])
    stored = StoredMemory(**read_info(path, writer.config.root).model_dump())
    stored.action = "edited" if reworded else "updated"
    stored.chunks = report.chunks_written
    stored.warnings.extend(report.warnings)
    return stored


def _new_body(
    memory_id: str, body: str, content: str | None, old_text: str | None, new_text: str | None
) -> str:
    """The memory's new text. Only what the edit brings in loses its ``<private>`` spans: a span
    a person typed elsewhere in the memory stays where it was (read paths never show it)."""
    if content is not None:
        text = strip_private(content).strip()
    elif old_text is not None:
        found = body.count(old_text)
        if found == 0:
            raise InvalidMemory(
                f"old_text does not occur in {memory_id}; copy it exactly from the memory's "
                "current text (memory_get or fetch shows it)"
            )
        if found > 1:
            raise InvalidMemory(
                f"old_text occurs {found} times in {memory_id}; include more of the words "
                "around it so it occurs once"
            )
        text = body.replace(old_text, strip_private(new_text or ""), 1).strip()
    else:
        return body
    if not strip_private(text).strip():
        raise InvalidMemory(
            "the edit leaves the memory empty (after removing <private> spans); to delete a "
            "memory use memory_forget"
        )
    return text


def move(
    writer: Writer, target: Path, to: str, *, scope: Scope | None = None
) -> tuple[StoredMemory, str]:
    """Move the memory stored at ``target`` to ``to`` (a file name inside its memory folder, or
    the ``scope`` folder's); returns it as it is now and its old document id."""
    old_doc = document_id_for(target, writer.config.root)
    path = writable_path(writer, old_doc)
    source = folder_of(writer.folders, path)
    if source is None:  # writable_path refuses paths outside the folders: never here
        raise InvalidMemory(f"{old_doc} is not in a memory folder")
    dest = writable_folder(writer.folders, scope) if scope else source
    text = path.read_text(encoding="utf-8", errors="replace")
    meta = read_frontmatter(text).metadata
    kind = str(meta.get("type") or "note")
    folder, stem = target_folder(dest.path, kind, to)
    new_path = folder / f"{stem}.md"
    if new_path == path:
        raise InvalidMemory(f"{old_doc} is already there; give another name")
    if new_path.exists():
        raise InvalidMemory(
            f"{document_id_for(new_path, writer.config.root)} already exists; a move never "
            "replaces a memory, pick another name"
        )
    locks = sorted({source.path, dest.path})
    with contextlib.ExitStack() as held:
        for lock in locks:
            held.enter_context(write_lock(lock))
        if dest.scope != source.scope and meta.get("scope") != dest.scope:
            text = with_frontmatter(text, {"scope": dest.scope})
            moved = write_new_file(folder, stem or "memory", text)
        else:
            moved = _claim_name(path, folder, stem or "memory", text)
        path.unlink()
        new_doc = document_id_for(moved, writer.config.root)
        writer.store.delete_documents([old_doc])
        report = index_documents(writer, [new_doc])
    stored = StoredMemory(**read_info(moved, writer.config.root).model_dump())
    stored.action = "moved"
    stored.chunks = report.chunks_written
    stored.warnings.extend(report.warnings)
    return stored, old_doc


def _claim_name(path: Path, folder: Path, stem: str, text: str) -> Path:
    """``path``'s file under ``folder/stem.md`` by a hard link (never over an existing file);
    another file system, or none with hard links, gets a fresh copy instead."""
    folder.mkdir(parents=True, exist_ok=True)
    wanted = folder / f"{stem}.md"
    try:
        os.link(path, wanted)
        return wanted
    except FileExistsError:
        raise InvalidMemory(f"{wanted.name} was just taken; pick another name") from None
    except OSError:
        return write_new_file(folder, stem, text)


def _opt(value: object) -> str | None:
    return None if value is None else str(value)
