"""A store that has just been called damaged is written to by nobody until it is rebuilt.

A damaged index on this machine is moved aside at once (``recovery``), so nothing writes it
again. A remote one (a Chroma server, LanceDB on object storage) is left as it is for the user
to inspect, and ``engram rebuild`` recreates it. Between the two, other processes of the project
(a detached capture a hook started, ``watch``, the MCP server, the next command) would otherwise
go on writing whatever part of it still takes writes (a document record restamped, a chunk
added), changing the very thing the user was told to look at. So when a command, hook or tool
reports such a store damaged, it leaves a mark in the project's ``.engram`` folder, keyed by the
store's configuration; every write (``Writer.check_identity(writing=True)``, which index,
remember, capture and import all pass) refuses with the same words while the mark is there, and
``engram rebuild`` / ``engram reset`` remove it. Reads go on: the user still gets answers where
the store can give them.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from pathlib import Path

from engram.config import EngramConfig
from engram.dbfiles.folder import ENGRAM_DIR
from engram.errors import IndexDamaged

NAME = "index-damaged.json"


def _path(config: EngramConfig) -> Path:
    return config.root / ENGRAM_DIR / NAME


def _store_key(config: EngramConfig) -> str:
    """The configured store, as a digest: a mark never outlives a switch to another store."""
    options = json.dumps(config.store.model_dump(mode="json"), sort_keys=True, default=str)
    return hashlib.sha256(options.encode("utf-8")).hexdigest()


def record(config: EngramConfig | None, damaged: IndexDamaged) -> None:
    """Mark the store damaged (one not on this machine: a local one is moved aside instead)."""
    if config is None or damaged.files:
        return
    path = _path(config)
    body = {"store": _store_key(config), "message": str(damaged), "detail": damaged.detail}
    tmp = path.with_name(f"{NAME}.tmp-{os.getpid()}")
    with contextlib.suppress(OSError):  # a read-only project: nothing to mark, nothing lost
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_text(json.dumps(body), encoding="utf-8")
        os.replace(tmp, path)


def refuse_writes(config: EngramConfig) -> None:
    """Raise the damage the store was called with, while its mark is there."""
    try:
        body = json.loads(_path(config).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return
    if not isinstance(body, dict) or body.get("store") != _store_key(config):
        return
    raise IndexDamaged(str(body.get("message")), detail=str(body.get("detail")))


def clear(config: EngramConfig) -> None:
    """The store is being rebuilt or emptied: writes are welcome again."""
    with contextlib.suppress(FileNotFoundError):
        _path(config).unlink()
