"""A new memory whose file name is already taken (the same title, or the same ``path``): the
``on_collision`` choice of ``remember`` (``[memory] on_collision``, ``--on-collision``,
``memory_store``'s ``on_collision``).

- ``new`` (the default): keep both; the new memory gets a numbered name (``title-2.md``).
- ``update``: the new text becomes the current wording of the memory in that file, through the
  same path as an edit (``engram.memories.lifecycle.editing``): the wording it replaces is kept
  as a revision (``why: updated``), so not a word is lost and ``engram restore`` brings it back.
  Its id, links and other fields stay; its tags gain the new ones. A memory already superseded
  or archived is not reworded (search would not show the new text): the new one is written
  beside it, as with ``new``.
- ``fail``: nothing is written; the error names the file and the choices.

Why before the near-duplicate plan: the caller named which memory this is (by its title), so
``update`` rewords that one rather than whichever neighbour the embedder finds closest, and
``fail`` refuses before the embedder is paid for. Exactly the same text stored anywhere still
merges first, as for every write (nothing new would be written).
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import get_args

from engram.errors import InvalidMemory
from engram.ingest.document_ids import document_id_for
from engram.memories.files import read_info
from engram.memories.lifecycle.editing import edit
from engram.memories.writer import Writer
from engram.models import ExtractedMemory, OnCollision, StoredMemory

# The choices, read off the type (one list: the config, the CLI and memory_store use the type).
ON_COLLISION: tuple[OnCollision, ...] = get_args(OnCollision)
UPDATED = "updated"


def check_choice(choice: str) -> OnCollision:
    """``choice`` if it is one of ``ON_COLLISION``; otherwise a clear error."""
    for known in ON_COLLISION:
        if choice == known:
            return known
    raise InvalidMemory(
        f"unknown on_collision {choice!r}; use one of {', '.join(ON_COLLISION)} "
        "(new: keep both files, update: a new revision of the existing memory, fail: refuse)"
    )


def taken(folder: Path, stem: str) -> Path | None:
    """The memory file a new memory named ``stem`` would collide with, if there is one."""
    path = folder / f"{stem}.md"
    return path if path.is_file() else None


def settle(
    writer: Writer,
    existing: Path | None,
    choice: OnCollision,
    new: ExtractedMemory,
    now: datetime,
) -> StoredMemory | None:
    """Carry out ``update`` or ``fail`` for ``new`` against the memory file ``existing`` (the
    caller holds the folder's write lock; the edit re-enters it). None: write ``new`` as a
    memory of its own (no file in the way, ``new``, or ``update`` of a superseded or archived
    memory, whose wording search no longer shows: the new text is the live one)."""
    if existing is None or choice == "new":
        return None
    name = document_id_for(existing, writer.config.root)
    if choice == "fail":
        raise InvalidMemory(
            f"{name} already exists (a memory with the same file name); nothing was written. "
            "Choose on_collision: update (the new text becomes a revision of that memory, its "
            "old text kept), new (keep both: a numbered file name), or give another title or path"
        )
    info = read_info(existing, writer.config.root)
    if not info.live:
        return None
    old_tags = info.tags
    tags = [*old_tags, *(t for t in new.tags if t not in old_tags)]
    stored = edit(
        writer,
        existing,
        content=new.content,
        title=new.title,
        tags=tags if tags != old_tags else None,
        now=now,
        why=UPDATED,
    )
    if stored.action != "unchanged":
        stored.action = UPDATED
    return stored
