"""The ``memory_edit`` and ``memory_move`` agent tools: change a stored memory in place, or give
it another file name, keeping every earlier wording (``engram.memories.lifecycle.editing`` does the
file work; ``tools.TOOLS`` lists them)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, model_validator

from engram.memories import agent as memories
from engram.memories.lifecycle import editing
from engram.memories.scopes import Scope
from engram.memory import Memory
from engram.models import StoredMemory
from engram.stores.origins import refuse_foreign

MAX_CONTENT = 100_000


class MemoryEditInput(BaseModel):
    """Change a stored memory: replace one exact span of its text (old_text → new_text) or its
    whole text (content), and/or its title, tags or importance. The earlier wording is kept as
    a revision (memory_restore brings it back). Use it to correct a memory instead of storing a
    second one."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(
        min_length=1, max_length=1000, description="The memory's id (or its path) to change."
    )
    old_text: str | None = Field(
        default=None,
        min_length=1,
        max_length=MAX_CONTENT,
        description="Exact text to replace; it must occur exactly once in the memory.",
    )
    new_text: str | None = Field(
        default=None,
        max_length=MAX_CONTENT,
        description="What old_text becomes (empty removes it).",
    )
    content: str | None = Field(
        default=None,
        min_length=1,
        max_length=MAX_CONTENT,
        description="The memory's whole new text (instead of old_text/new_text).",
    )
    title: str | None = Field(default=None, max_length=200, description="A new title.")
    tags: list[str] | None = Field(
        default=None, max_length=20, description="The new tag list (replaces the old one)."
    )
    importance: float | None = Field(default=None, ge=0, le=10, description="0 to 10.")

    @model_validator(mode="after")
    def _one_change(self) -> MemoryEditInput:
        if self.content is not None and (self.old_text is not None or self.new_text is not None):
            raise ValueError("give either content or old_text/new_text, not both")
        if (self.old_text is None) != (self.new_text is None):
            raise ValueError("old_text and new_text go together")
        if all(
            v is None for v in (self.content, self.old_text, self.title, self.tags, self.importance)
        ):
            raise ValueError(
                "nothing to change: give old_text/new_text, content, title, tags or importance"
            )
        return self


class MemoryMoveInput(BaseModel):
    """Rename a stored memory's file or move it to the other scope's folder (project ↔ user).
    Its id, revisions and links stay; an existing file is never replaced."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(min_length=1, max_length=1000, description="The memory's id (or its path).")
    to: str = Field(
        min_length=1,
        max_length=300,
        description="New file name inside the memory folder, e.g. decision/database.md.",
    )
    scope: Scope | None = Field(
        default=None,
        description="Move into this scope's folder (user: every project; project: this one). "
        "Default: stay in the same folder.",
    )


def edit(memory: Memory, args: MemoryEditInput) -> StoredMemory:
    refuse_foreign(memory.store, args.id)  # another machine's, on a shared store
    target = memories.find(memory.writer, args.id)[0]
    return editing.edit(
        memory.writer,
        target,
        content=args.content,
        old_text=args.old_text,
        new_text=args.new_text,
        title=args.title,
        tags=args.tags,
        importance=args.importance,
    )


def render_edit(out: StoredMemory) -> str:
    notes = "".join(f"\nwarning: {w}" for w in out.warnings)
    if out.action == "unchanged":
        return f"Nothing changed in {out.id} ({out.path}): it already says that.{notes}"
    if out.action == "updated":
        return f"Updated the tags or importance of memory {out.id} at {out.path}.{notes}"
    return (
        f"Edited memory {out.id} at {out.path} (the earlier wording is revision "
        f"{out.revision_count}; memory_restore brings it back).{notes}"
    )


class MoveOutput(StoredMemory):
    moved_from: str


def move(memory: Memory, args: MemoryMoveInput) -> MoveOutput:
    refuse_foreign(memory.store, args.id)
    target = memories.find(memory.writer, args.id)[0]
    stored, old = editing.move(memory.writer, target, args.to, scope=args.scope)
    return MoveOutput(**stored.model_dump(), moved_from=old)


def render_move(out: MoveOutput) -> str:
    notes = "".join(f"\nwarning: {w}" for w in out.warnings)
    return f"Moved memory {out.id} from {out.moved_from} to {out.path}.{notes}"
