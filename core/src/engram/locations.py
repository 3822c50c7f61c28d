"""Where engram's config files are, found without reading them, and where the user's memory
folder is by default: the host hook decides from these paths alone whether it has work to do,
so this module imports no pydantic."""

from __future__ import annotations

import os
from pathlib import Path

from engram.errors import ConfigError

PROJECT_FILE = "engram.toml"


def user_config_path() -> Path:
    explicit = os.environ.get("ENGRAM_USER_CONFIG")
    if explicit:
        return Path(explicit).expanduser()
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "engram" / "config.toml"


def default_user_dir() -> Path:
    """The user's memory folder when ``[memory] user_dir`` is unset:
    ``$XDG_DATA_HOME/engram/memory``, else ``~/.local/share/engram/memory``."""
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base).expanduser() / "engram" / "memory"


def find_project_file(start: Path | None = None) -> Path | None:
    """``$ENGRAM_CONFIG``, else the nearest ``engram.toml`` from ``start`` upwards."""
    explicit = os.environ.get("ENGRAM_CONFIG")
    if explicit:
        path = Path(explicit).expanduser().resolve()
        if not path.is_file():
            raise ConfigError(
                f"ENGRAM_CONFIG points to {path}, which is not a file; fix or unset it"
            )
        return path
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        candidate = folder / PROJECT_FILE
        if candidate.is_file():
            return candidate
    return None
