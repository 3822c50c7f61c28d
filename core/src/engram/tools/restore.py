"""The ``memory_restore`` agent tool: bring an earlier version of a memory back (kept apart
from ``engram.tools`` so that module stays small; ``tools.TOOLS`` lists it)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from engram.memory import Memory
from engram.models import StoredMemory


class MemoryRestoreInput(BaseModel):
    """Bring an earlier version of a memory back: one of its revisions (earlier wordings), or a
    superseded memory made live again. Nothing is lost: what it replaces stays as a revision."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(
        min_length=1,
        max_length=1000,
        description="The memory's id (from memory_list or memory_store) or its path.",
    )
    revision: int | None = Field(
        default=None,
        ge=1,
        description="Which earlier wording (1 = oldest; `engram history ID` numbers them). "
        "Leave out to make a superseded memory live again, or to go back one wording.",
    )


def restore(memory: Memory, args: MemoryRestoreInput) -> StoredMemory:
    return memory.restore(args.id, args.revision)


def render_restore(out: StoredMemory) -> str:
    notes = "".join(f"\nwarning: {w}" for w in out.warnings)
    linked = (
        f" It conflicts with {', '.join(out.conflicts_with)}: both are live, the newer first."
        if out.conflicts_with
        else ""
    )
    return f"Restored memory {out.id} at {out.path}.{linked}{notes}"
