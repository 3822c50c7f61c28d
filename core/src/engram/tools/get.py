"""The ``memory_get`` agent tool: read a vault file, a memory or a session shown in search
results, whole or some lines (kept apart from ``engram.tools`` so that module stays small;
``tools.TOOLS`` lists it). Only markdown that could be indexed is ever read."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, model_validator

from engram.errors import ConfigError, UnsafePath
from engram.ingest.sessions.sync import session_document, session_excerpt
from engram.memories.files import check_path_syntax, resolve_inside
from engram.memory import Memory
from engram.models import Excerpt


class MemoryGetInput(BaseModel):
    """Read a file (or a session) shown in search results, whole or some lines (turns)."""

    model_config = ConfigDict(extra="forbid")

    path: str = Field(
        min_length=1, max_length=1000, description="A path exactly as search results show it."
    )
    start_line: int | None = Field(default=None, ge=1, description="First line (1-based).")
    end_line: int | None = Field(default=None, ge=1, description="Last line (inclusive).")

    @model_validator(mode="after")
    def _ordered(self) -> MemoryGetInput:
        if self.start_line and self.end_line and self.end_line < self.start_line:
            raise ValueError("end_line must not be before start_line")
        return self


def get(memory: Memory, args: MemoryGetInput) -> Excerpt:
    check_path_syntax(args.path)
    lines = None
    if args.start_line or args.end_line:
        lines = (args.start_line or 1, args.end_line or 1_000_000_000)
    session = session_document(memory.store, args.path)
    if session is not None:
        return session_excerpt(session, memory.config, lines)
    elsewhere = memory.foreign_excerpt(args.path, lines)  # another machine's, on a shared store
    if elsewhere is not None:
        return elsewhere
    roots = memory.vault_roots()
    target = resolve_inside(args.path, memory.config.root, roots, what="memory folders")
    check_readable(args.path, target, roots)
    excerpt = memory.get(target, lines)
    if lines and lines[0] > max(excerpt.total_lines, 1):
        raise ConfigError(
            f"{args.path} has {excerpt.total_lines} lines; start_line {lines[0]} is past the end"
        )
    return excerpt.model_copy(update={"path": args.path})


def check_readable(raw: str, target: Path, roots: list[Path]) -> None:
    """Only markdown that could be indexed: never ``.env``, the index, or hidden folders."""
    if target.suffix.lower() not in (".md", ".markdown"):
        raise UnsafePath(f"{raw} is not a markdown file; refused (only notes and memories)")
    for root in roots:
        if target.is_relative_to(root) and any(
            part.startswith(".") for part in target.relative_to(root).parts
        ):
            raise UnsafePath(f"{raw} is in a hidden file or folder; refused")
    if not target.is_file():
        raise UnsafePath(f"{raw} is not a file in the vault; use a path from search results")


def render_get(out: Excerpt) -> str:
    return f"{out.path} (lines {out.start_line}-{out.end_line} of {out.total_lines}):\n{out.text}"
