"""Merging a memory into the one that holds the same fact, losing nothing.

The newer wording becomes the text (it is what the agent or the user said last); the earlier
wording, when it differs, is appended to the memory's ``revisions`` in the same atomic file
replace. Same id, file and creation time; tags joined; the higher importance; ``updated_at``.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from engram.chunking import read_frontmatter
from engram.memories.files import clean_tags, info_from, render, replace_file, wording_of
from engram.memories.lifecycle.content_hash import HASH_KEY, content_hash
from engram.memories.lifecycle.memory_io import stamp, writable_path
from engram.memories.lifecycle.revisions import REVISIONS_KEY, with_revision
from engram.memories.writer import Writer
from engram.models import ExtractedMemory, Revision, StoredMemory


def merge(
    writer: Writer, document_id: str, new: ExtractedMemory, now: datetime
) -> tuple[StoredMemory, str]:
    """Write ``new`` over the memory ``document_id``, keeping its earlier wording as a revision;
    the file is read once, and its new content returned (to index without reading it back)."""
    path = writable_path(writer, document_id)
    root = writer.config.root
    fm = read_frontmatter(path.read_text(encoding="utf-8", errors="replace"))
    old: dict[str, Any] = dict(fm.metadata)
    old_tags = old.get("tags")
    tags = clean_tags(
        [*(str(t) for t in old_tags if t), *new.tags] if isinstance(old_tags, list) else new.tags
    )
    importance = max(info_from(old, path, root).importance, new.importance)
    before = wording_of(old, fm.body)
    meta = dict(old)
    meta.update(title=new.title, tags=tags, importance=importance, updated_at=stamp(now))
    for slot in ("subject", "attribute", "value"):  # the newer wording's slots, as its text
        given = getattr(new, slot)
        if given:
            meta[slot] = given
    meta[HASH_KEY] = content_hash(new.content)
    if before != new.content.strip() or (old.get("title") or None) != new.title:
        meta[REVISIONS_KEY] = with_revision(
            old,
            Revision(
                wording=before,
                title=_opt(old.get("title")),
                when=_opt(old.get("updated_at") or old.get("created_at")),
                replaced_at=stamp(now),
                why="merged",
            ),
        )
    elif not isinstance(old.get(REVISIONS_KEY), list):
        meta.pop(REVISIONS_KEY, None)  # an old bare count: no wording was kept then
    text = render(meta, new.title or "", new.content)
    replace_file(path, text)
    stored = StoredMemory(**info_from(read_frontmatter(text).metadata, path, root).model_dump())
    stored.action = "updated"
    return stored, text


def _opt(value: object) -> str | None:
    return None if value is None else str(value)
