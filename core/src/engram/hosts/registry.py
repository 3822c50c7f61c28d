"""The hosts engram knows, as ``Host``s: the CLI's choices, ``hooks install`` and the hook
runner read them here. The table itself, one ``register`` line per host, is
``engram.ingest.sessions.registry`` (the floor every reader of it stands on)."""

from __future__ import annotations

from typing import cast

from engram.hosts.base import Host
from engram.ingest.sessions import registry as table

__all__ = ["Host", "get", "hosts", "names"]


def names() -> list[str]:
    return table.names()


def get(name: str) -> Host:
    """The host called ``name``; an unknown name is an error listing the known ones."""
    return cast(Host, table.load(name))


def hosts() -> list[Host]:
    """Every host, in the table's order."""
    return [get(name) for name in names()]
