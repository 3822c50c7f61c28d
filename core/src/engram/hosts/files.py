"""One planned change to one host config file: shown as a unified diff (``--dry-run``), applied
atomically, so a host never reads a half-written settings file."""

from __future__ import annotations

import difflib
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

from engram.errors import ConfigError


@dataclass(frozen=True)
class Change:
    """``path`` goes from ``old`` to ``new``; None means the file does not exist (before) or is
    removed (after)."""

    path: Path
    old: str | None
    new: str | None

    @property
    def changed(self) -> bool:
        return self.old != self.new

    def action(self) -> str:
        if not self.changed:
            return "unchanged"
        if self.old is None:
            return "create"
        return "remove" if self.new is None else "update"

    def diff(self) -> str:
        """The change as a unified diff (empty when nothing changes)."""
        if not self.changed:
            return ""
        before = "/dev/null" if self.old is None else str(self.path)
        after = "/dev/null" if self.new is None else str(self.path)
        lines = difflib.unified_diff(
            (self.old or "").splitlines(keepends=True),
            (self.new or "").splitlines(keepends=True),
            fromfile=before,
            tofile=after,
        )
        return "".join(line if line.endswith("\n") else line + "\n" for line in lines)

    def apply(self) -> None:
        """Write (atomically) or remove the file; nothing happens when nothing changes."""
        if not self.changed:
            return
        if self.new is None:
            self.path.unlink(missing_ok=True)
        else:
            atomic_write(self.path, self.new)


def read_text(path: Path) -> str | None:
    """The file's text, None when it does not exist; an unreadable file is a clear error."""
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(
            f"cannot read {path} ({exc}); fix the file, nothing was written"
        ) from None


def atomic_write(path: Path, text: str) -> None:
    """Write ``text`` to a temporary file beside ``path``, fsync it, then rename it over
    ``path`` (keeping the old file's permissions), so readers see the old or the new file."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        mode = path.stat().st_mode & 0o777 if path.exists() else None
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
                handle.write(text)
                handle.flush()
                os.fsync(handle.fileno())
            if mode is not None:
                os.chmod(tmp, mode)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    except OSError as exc:
        raise ConfigError(f"cannot write {path} ({exc}); check the folder's permissions") from None
