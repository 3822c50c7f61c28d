"""OpenCode as a host, all of it in this folder: our plugin sends ``{cwd, session_id}`` (and
``prompt``) and reads the block as plain text, here; the plugin file ``install`` writes, in
``install``; its sessions (``opencode.db`` and the older JSON tree), in ``sessions``. Those
load when asked: the per-prompt hook imports this module and needs only ``output``."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from engram.hosts.base import HookPayload, generic_payload, plain_output

if TYPE_CHECKING:
    from engram.hosts.files import Change
    from engram.ingest.sessions.base import SessionSource

HOST = "opencode"


class OpenCode:
    """OpenCode as a ``Host``."""

    name = HOST
    scopes = ("user", "project")

    def plan_install(
        self, scope: str, project_dir: Path, base: list[str], config: Path | None
    ) -> Change:
        from engram.hosts.opencode import install

        return install.plan_install(install.plugin_dir(scope, project_dir), base, config)

    def plan_uninstall(self, scope: str, project_dir: Path) -> Change:
        from engram.hosts.opencode import install

        return install.plan_uninstall(install.plugin_dir(scope, project_dir))

    def installed_in(self, folder: Path) -> bool:
        from engram.hosts.opencode import install

        return install.installed_in(folder)

    def parse_payload(self, raw: dict[str, Any] | None) -> HookPayload:
        return generic_payload(raw)  # our plugin sends {cwd, session_id}

    def output(self, event: str, text: str) -> str:
        return plain_output(event, text)

    def transcript_root(self, payload: HookPayload) -> Path | None:
        root = self.sessions_dir()
        return root if root.is_dir() else None

    def sessions_dir(self) -> Path:
        from engram.hosts.opencode.sessions import default_root  # not at start-up: heavy

        return default_root()

    def session_source(self, root: Path, project: Path | None) -> SessionSource:
        from engram.hosts.opencode.sessions import OpenCodeSource

        return OpenCodeSource(root, project)
