"""Serving the dashboard: one per project and port, on loopback unless asked otherwise.

A running dashboard records its address in ``.engram/dashboard.json`` of the project; a second
``engram dashboard`` asks that address (and the one it was told to use) for ``/api/health``
and, when the same project answers, says where it runs instead of starting another.
"""

from __future__ import annotations

import contextlib
import ipaddress
import json
import os
import signal
import socket
import threading
import urllib.request
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from engram.errors import ConfigError

STATE_FILE = Path(".engram/dashboard.json")


def check_host(host: str, *, allow_remote: bool) -> str | None:
    """Loopback only, unless the user says otherwise (the pages show every memory): a
    ``ConfigError`` for another address, or with ``allow_remote`` the warning to print."""
    if is_loopback(host):
        return None
    if not allow_remote:
        raise ConfigError(
            f"{host} is not a loopback address and the dashboard shows every memory; "
            "use 127.0.0.1, or pass --allow-remote if others on the network may read it"
        )
    return (
        f"listening on {host}, not loopback: anyone who reaches this address reads every memory "
        "(there is no login)"
    )


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def url_for(host: str, port: int) -> str:
    """The page's address (an IPv6 address goes in brackets)."""
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


def health_at(url: str) -> dict[str, Any] | None:
    """The ``/api/health`` answer of a dashboard at ``url``, or None when nothing answers."""
    try:
        with urllib.request.urlopen(f"{url}/api/health", timeout=2) as answer:
            data = json.load(answer)
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def already_running(project: Path, url: str) -> str | None:
    """The address of this project's dashboard if one answers (the recorded one first)."""
    candidates = [url]
    recorded = read_state(project)
    if recorded:
        candidates.insert(0, recorded)
    for candidate in candidates:
        health = health_at(candidate)
        if health and health.get("project") == str(project):
            return candidate
    return None


def bind(host: str, port: int) -> socket.socket:
    """A listening socket, or a ``ConfigError`` that says what holds the port."""
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        other = health_at(url_for(host, port))
        who = f"the dashboard of {other.get('project')}" if other else "another program"
        raise ConfigError(
            f"cannot listen on {host}:{port} ({exc.strerror or exc}): it is used by {who}; "
            "choose another port with --port"
        ) from None
    sock.listen(128)
    return sock


def read_state(project: Path) -> str | None:
    try:
        data = json.loads((project / STATE_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    url = data.get("url") if isinstance(data, dict) else None
    return url if isinstance(url, str) else None


def write_state(project: Path, url: str) -> Path:
    path = project / STATE_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"url": url, "pid": os.getpid()}), encoding="utf-8")
    return path


def clear_state(path: Path) -> None:
    """Remove the record if it is still ours (another dashboard may have replaced it)."""
    with contextlib.suppress(OSError, ValueError):
        if json.loads(path.read_text(encoding="utf-8")).get("pid") == os.getpid():
            path.unlink()


def allowed_hosts(host: str, extra: Sequence[str]) -> list[str]:
    """The ``Host`` names the pages answer to: loopback always, the address listened on when it
    is a real one (not 0.0.0.0 or ::), and what the user named with ``--allowed-host``."""
    from engram.dashboard.app import LOOPBACK_HOSTS

    names = [*LOOPBACK_HOSTS]
    if host not in ("0.0.0.0", "::") and not is_loopback(host):
        names.append(f"[{host}]" if ":" in host else host)
    names += [name.strip().lower() for name in extra if name.strip()]
    return list(dict.fromkeys(names))


def serve(app: Any, sock: socket.socket, project: Path, url: str) -> None:
    """Run uvicorn on ``sock`` until Ctrl+C or SIGTERM; then, once it has shut down cleanly,
    stop as an interrupted command does (exit 130, the state file removed) for both signals.

    uvicorn catches both while serving and raises them again once it has stopped, to whatever
    handler was there before: SIGTERM's default would end the process at once (exit 143) with
    the state file left behind, so SIGTERM is given Ctrl+C's handler first."""
    import uvicorn

    state = write_state(project, url)
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, signal.default_int_handler)
    try:
        config = uvicorn.Config(app, log_level="warning", access_log=False)
        server = uvicorn.Server(config)
        server.run(sockets=[sock])
        if server.should_exit:
            raise KeyboardInterrupt
    finally:
        clear_state(state)
        sock.close()
