"""Reading lines of a vault file for ``engram get`` and ``memory_get``: only inside the vault,
private spans blanked so that no line range can reveal them."""

from __future__ import annotations

from pathlib import Path

from engram.errors import ConfigError, UnsafePath
from engram.models import Excerpt
from engram.text.redact import strip_private


def inside_vault(path: str | Path, root: Path, roots: list[Path]) -> Path:
    """``path`` (relative to ``root``, or absolute) resolved through symlinks; ``UnsafePath``
    unless it lies inside one of the vault ``roots``."""
    raw = str(path)
    if "\x00" in raw:
        raise UnsafePath("path contains a NUL byte; refused")
    candidate = Path(raw).expanduser()
    if not candidate.is_absolute():
        candidate = root / candidate
    resolved = candidate.resolve()
    if not any(resolved == r or resolved.is_relative_to(r) for r in roots):
        allowed = ", ".join(str(r) for r in roots)
        raise UnsafePath(f"{path} is outside the vault ({allowed}); only vault files can be read")
    return resolved


def excerpt_of(label: str, target: Path, lines: tuple[int, int] | None) -> Excerpt:
    """Lines ``lines`` (1-based, inclusive; all when None) of the file ``target``."""
    if not target.is_file():
        raise UnsafePath(f"{label} is not a file in the vault; use a path from search results")
    return text_excerpt(label, target.read_text(encoding="utf-8", errors="replace"), lines)


def text_excerpt(label: str, text: str, lines: tuple[int, int] | None) -> Excerpt:
    """Lines ``lines`` of ``text`` (a file's, or another machine's document as a shared store
    keeps it)."""
    # Private spans are blanked (line breaks kept) so no line range can reveal them.
    all_lines = strip_private(text).splitlines()
    start, end = lines or (1, max(len(all_lines), 1))
    if start < 1 or end < start:
        raise ConfigError(
            f"line range {start}:{end} is invalid; use START:END with 1 <= START <= END"
        )
    return Excerpt(
        path=label,
        start_line=start,
        end_line=min(end, len(all_lines)),
        total_lines=len(all_lines),
        text="\n".join(all_lines[start - 1 : end]),
    )
