"""Typed errors. The library raises these; the CLI turns each into one line and exit code 1.

Every message names the problem and the fix, so a user never has to read a traceback.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path


class EngramError(Exception):
    """Base of every error engram raises on purpose."""


class ConfigError(EngramError):
    """The configuration is malformed or selects something that cannot work."""


class PluginError(EngramError):
    """A plugin is broken: it fails to import, or implements a hook that does not exist."""


class PluginNotFound(PluginError):
    """A store, embedder, extractor or searcher was asked for by a name nobody registered."""


class DuplicatePlugin(PluginError):
    """Two plugins registered the same name for the same kind."""


class MissingKeyError(EngramError):
    """An API key is needed and not set; the message names the variable."""


class CapabilityError(EngramError):
    """The selected part cannot do what was asked (e.g. keyword search on a vector-only store)."""


class IdentityMismatch(EngramError):
    """The store was built with another embedder, model, dimension or chunker."""


class DimensionMismatch(IdentityMismatch):
    """A vector's length differs from the dimension the store was created with."""


class InvalidVector(EngramError):
    """A vector holds NaN or infinite values, or is empty."""


class FilterError(EngramError):
    """A metadata filter is malformed (unknown operator, bad field name, incomparable bound)."""


class UnsafePath(EngramError):
    """A path points outside the configured vault or memory folders."""


class EmptyQuery(EngramError):
    """A search query holds no words to search for."""


class EmbedderError(EngramError):
    """The embedder failed (network down, server error after retries, bad response)."""


class StoreError(EngramError):
    """The store cannot be opened, read or written."""


class ExtractorError(EngramError):
    """An extractor's model could not be reached or answered something unusable."""


class MemoryNotFound(EngramError):
    """No memory has the id or path that was asked for."""


class InvalidMemory(EngramError):
    """A memory cannot be written as asked (nothing left after redaction, bad tag, bad name)."""


class IndexDamaged(StoreError):
    """The derived index cannot be read (not a database, truncated, malformed). ``files`` are
    what to move aside so it can be made again from the markdown; empty when the store is not on
    this machine (a server, object storage), and then the message says how to rebuild it."""

    def __init__(self, message: str, *, detail: str, files: tuple[Path, ...] = ()) -> None:
        super().__init__(message)
        self.detail = detail
        self.files = files


class IndexMoved(StoreError):
    """The index file this process opened was replaced or removed under it (another process
    moved a damaged one aside and rebuilt it, or a user deleted it): the open handle must not be
    read or written any more. A long-lived process reopens the index (``engram.keeper``); the
    markdown files are the truth, so nothing is lost."""


REBUILD_COST = (
    "every note is embedded again: minutes for a large vault with a local embedder, API calls "
    "with a paid one"
)


class RemoteIndexDamaged(IndexDamaged):
    """A damaged index that lives on a server or object storage. Nothing of it is on this
    machine to move aside, and engram never deletes remote data on its own, so the message says
    where it is and that ``engram rebuild`` recreates it there. ``clear`` drops what is left of
    it; only an explicit rebuild or reset calls it (when the store cannot even be opened)."""

    def __init__(
        self,
        *,
        where: str,
        lives_on: str,
        detail: str,
        clear: Callable[[], None] | None = None,
    ) -> None:
        super().__init__(
            f"the index at {where} is damaged ({detail}); it cannot be rebuilt locally because "
            f"it lives on {lives_on}, and engram deletes nothing there on its own: run "
            f"`engram rebuild` to drop it and recreate it there from the markdown files "
            f"({REBUILD_COST})",
            detail=detail,
        )
        self.where = where
        self.lives_on = lives_on
        self.clear = clear
