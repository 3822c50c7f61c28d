"""The hosts engram knows, in one list: the CLI's choices, ``hooks install`` and the hook
runner all read it, so adding a host is its module plus one entry here."""

from __future__ import annotations

from engram.errors import ConfigError
from engram.hosts.base import Host

__all__ = ["HOSTS", "Host", "get", "names"]
from engram.hosts.claude_code import ClaudeCode
from engram.hosts.opencode import OpenCode

HOSTS: tuple[Host, ...] = (ClaudeCode(), OpenCode())


def names() -> list[str]:
    return [h.name for h in HOSTS]


def get(name: str) -> Host:
    """The host called ``name``; an unknown name is an error listing the known ones."""
    for host in HOSTS:
        if host.name == name:
            return host
    raise ConfigError(f"unknown host {name!r}; engram knows {', '.join(names())}")
