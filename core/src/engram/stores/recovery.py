"""A damaged index is derived data: move it aside (kept for inspection) and make it again.

Markdown files are the source of truth, so a store that cannot be read (garbage or a truncated
file) must not stop every command and hook until a user deletes it by hand. ``open_store`` moves
the store's files to ``<name>.corrupt-<UTC time>`` and opens a fresh one; ``Memory.open`` then
rebuilds it from the markdown and says so in one warning line on stderr (the CLI, the agent tools
and the host hooks all open memories there).

Damage deeper down than opening reads (a broken table, a file cut short) shows in the middle
of a command: the command is run once more with the error as a ``suspect`` (``engram.cli``,
``engram.keeper`` for long-lived processes), and ``open_store`` checks the store again under the
recovery lock (its ``check_integrity``, when it has one) before moving it aside and rebuilding.

A store that is not on this machine (a Chroma server, LanceDB on object storage) raises
``RemoteIndexDamaged``: nothing is moved or dropped automatically (the data is shared, and may be
someone else's to inspect), and its one-line message names where it is and says that
``engram rebuild`` recreates it. Only that explicit command (and ``engram reset --yes``) passes
``clear_remote``, which drops what is left of a remote index too damaged to be opened.
"""

from __future__ import annotations

import contextlib
import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Protocol

from engram.config import EngramConfig
from engram.errors import IndexDamaged, RemoteIndexDamaged
from engram.protocols import Store
from engram.registry import Registry
from engram.stores.origins import load_origin, open_view, shared
from engram.stores.parts import build_part


class Rebuilds(Protocol):
    """What ``rebuild`` needs of an open memory."""

    def rebuild(self) -> Any: ...
    def close(self) -> None: ...


def open_store(
    config: EngramConfig,
    registry: Registry,
    *,
    clear_remote: bool = False,
    suspect: IndexDamaged | None = None,
) -> tuple[Store, IndexDamaged | None]:
    """The configured store, and what was damaged when it had to be moved aside first.
    ``clear_remote``: the user asked to rebuild or reset, so a remote index too damaged to open
    is dropped first (a remote store damaged deeper down is emptied by ``reset`` itself).
    ``suspect``: an open store said it is damaged deeper down than opening reads (a failed
    query, a file cut short); it is moved aside too unless, checked again under the recovery
    lock, it is whole (another process healed it meanwhile)."""
    if suspect is not None and suspect.files:
        return _heal_suspect(config, registry, suspect)
    try:
        return _build(config, registry), None
    except RemoteIndexDamaged as exc:
        if not clear_remote or exc.clear is None:
            raise
        exc.clear()
        return _build(config, registry), None
    except IndexDamaged as exc:
        if not exc.files:
            raise
        damaged = exc
    with _exclusive(damaged.files[0]):
        # Another process may have recovered it while this one waited for the lock.
        try:
            return _build(config, registry), None
        except IndexDamaged as again:
            damaged = again
        moved = move_aside(damaged.files)
        damaged.files = moved
        return _build(config, registry), damaged


def _build(config: EngramConfig, registry: Registry) -> Store:
    """The configured store; a shared one as this vault's origin sees it
    (``engram.stores.origins``)."""
    store: Store = build_part(config, registry, "store")
    return view_for(config, store)


def view_for(config: EngramConfig, store: Store) -> Store:
    """``store`` as this vault sees it: a shared store through its origin, others as they are."""
    if not shared(store):
        return store
    try:
        return open_view(store, load_origin(config.root, config.origin.name))
    except BaseException:
        store.close()
        raise


def _heal_suspect(
    config: EngramConfig, registry: Registry, suspect: IndexDamaged
) -> tuple[Store, IndexDamaged | None]:
    """Under the recovery lock: the store as it is when it opens and passes its own deep check
    (someone healed it meanwhile), else moved aside and opened anew. A store without a deep
    check is taken at its word: what it called damaged is moved aside (the markdown files
    make it again; nothing is lost if another process had healed it already)."""
    with _exclusive(suspect.files[0]):
        try:
            store = build_part(config, registry, "store")
        except IndexDamaged as exc:
            if not exc.files:
                raise
            problem = exc
        else:
            if getattr(store, "check_integrity", None) is None:
                found: IndexDamaged | None = suspect
            else:
                found = _integrity(store)
            if found is None:
                return store, None
            store.close()
            problem = found
        problem.files = move_aside(problem.files)
        return build_part(config, registry, "store"), problem


def _integrity(store: Store) -> IndexDamaged | None:
    """What the store's own deep check finds (``check_integrity``, when it has one)."""
    check = getattr(store, "check_integrity", None)
    if check is None:
        return None
    try:
        check()
    except IndexDamaged as exc:
        return exc
    return None


def move_aside(files: tuple[Path, ...]) -> tuple[Path, ...]:
    """Rename every existing file to ``<name>.corrupt-<UTC time>``; the new names."""
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    moved: list[Path] = []
    for path in files:
        if path.exists():
            target = path.with_name(f"{path.name}.corrupt-{stamp}")
            os.replace(path, target)
            moved.append(target)
    return tuple(moved)


def rebuild(damaged: IndexDamaged, memory: Rebuilds) -> str:
    """Make the fresh store again from the markdown, announced in one line on stderr (which a
    hook's worker does not pass on, so the line is also returned); the memory is closed if that
    fails."""
    kept = damaged.files[0] if damaged.files else "nothing"
    notice = (
        f"the index was damaged ({damaged.detail}); it was moved aside (kept as {kept}) and "
        "rebuilt from the markdown files"
    )
    print(f"engram: warning: {notice}", file=sys.stderr, flush=True)
    try:
        memory.rebuild()
    except BaseException:
        memory.close()
        raise
    return notice


def rebuild_missing(memory: Rebuilds) -> str:
    """Fill an index made anew because the old one was deleted (``Memory.open`` tells), with
    one line on stderr, as ``rebuild`` does for a damaged one."""
    notice = "the index was missing (deleted?); it was made again from the markdown files"
    print(f"engram: warning: {notice}", file=sys.stderr, flush=True)
    try:
        memory.rebuild()
    except BaseException:
        memory.close()
        raise
    return notice


@contextlib.contextmanager
def _exclusive(path: Path) -> Iterator[None]:
    """Hold ``<path>.recover-lock`` so two processes never move each other's fresh index."""
    try:
        import fcntl
    except ImportError:  # Windows: no advisory locks here; the re-check above still helps
        yield
        return
    lock = path.with_name(path.name + ".recover-lock")
    with open(lock, "a+b") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
