"""``HostSuite``: what every agent host must do for engram. Subclass it, set ``host_name`` (the
name its line in ``engram.ingest.sessions.registry`` gives it) and write ``payload`` and
``write_sessions``; the suite then checks the host through the registry, as the CLI, the hook
runner and session indexing reach it: install and uninstall (idempotent, in every scope, and
nothing of ours left behind), the hook payload read leniently, the recall block in the host's
output form, and its transcripts read back turn by turn and indexed from ``[sessions] dirs``.

Each test's docstring says what a failure usually means. Every folder a host may write to or
read from by default (``HOME``, ``XDG_*``, ``CLAUDE_CONFIG_DIR``) points into the test's
temporary folder."""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

import pytest

from engram.config import EngramConfig, SessionsConfig
from engram.default_plugins.hash_embedder import HashEmbedder
from engram.default_plugins.memory_store import MemoryStore, MemoryStoreOptions
from engram.hosts import entry, registry
from engram.hosts.base import EVENTS, Host
from engram.ingest.sessions.sync import index_sessions, session_sources
from engram.protocols import embedder_identity

BLOCK = "## Memory\n- The billing service is owned by Alice.\n"
SESSION_ID = "suite-session-1"
BASE = ["/opt/engram/bin/engram"]  # the command line ``hooks install`` writes hooks with

Turns = list[tuple[str, str]]  # (role, text), in order


class HostSuite:
    """Subclass with ``host_name``, ``payload`` and ``write_sessions``."""

    host_name: ClassVar[str]

    def payload(self, cwd: Path) -> dict[str, Any]:
        """The JSON the host sends a session-start hook run in ``cwd`` for ``SESSION_ID``."""
        raise NotImplementedError

    def write_sessions(self, root: Path, project: Path) -> dict[str, Turns]:
        """Write a sample of the host's transcripts under ``root``, every session run in
        ``project``; return each session's id and the turns a reader must find in it."""
        raise NotImplementedError

    @pytest.fixture
    def home(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
        home = tmp_path / "home"
        home.mkdir()
        monkeypatch.setenv("HOME", str(home))
        monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
        monkeypatch.setenv("XDG_DATA_HOME", str(home / ".local" / "share"))
        monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(home / ".claude"))
        return home

    @pytest.fixture
    def host(self, home: Path) -> Host:
        return registry.get(self.host_name)

    @pytest.fixture
    def project(self, tmp_path: Path) -> Path:
        folder = tmp_path / "project"
        folder.mkdir()
        return folder.resolve()

    def test_the_registry_knows_it_by_its_name(self, host: Host) -> None:
        """The registry's line and the host's ``name`` disagree, or the line's dotted path
        names no class: fix the ``register`` line."""
        assert self.host_name in registry.names()
        assert host.name == self.host_name
        assert host.scopes and set(host.scopes) <= {"user", "project", "local"}

    def test_the_hook_command_line_accepts_it(self, host: Host) -> None:
        """``engram hooks run EVENT --host NAME`` must parse for every event."""
        for event in EVENTS:
            parsed = entry.parse(["hooks", "run", event, "--host", host.name])
            assert parsed is not None and (parsed.event, parsed.host) == (event, host.name)

    def test_install_writes_every_hook_and_is_idempotent(self, host: Host, project: Path) -> None:
        """A second install must change nothing; the files name our events and the host (the
        hook runner reads the host's payload by that name)."""
        for scope in host.scopes:
            change = host.plan_install(scope, project, BASE, None)
            assert change.changed and change.new is not None
            for event in EVENTS:
                assert event in change.new, f"{scope}: no hook for {event}"
            assert host.name in change.new and BASE[0] in change.new
            change.apply()
            again = host.plan_install(scope, project, BASE, None)
            assert not again.changed, f"{scope}: a second install changes {again.path}"

    def test_uninstall_leaves_what_was_there_and_is_idempotent(
        self, host: Host, project: Path
    ) -> None:
        """Uninstall must take out ours and nothing else (a file we created goes, one we edited
        goes back to what it was, one we created holds nothing of ours), and a second one must
        change nothing."""
        for scope in host.scopes:
            before = host.plan_uninstall(scope, project).old
            host.plan_install(scope, project, BASE, None).apply()
            removal = host.plan_uninstall(scope, project)
            assert removal.changed
            removal.apply()
            after = removal.path.read_text(encoding="utf-8") if removal.path.exists() else None
            assert after == before or (before is None and BASE[0] not in (after or ""))
            assert not host.plan_uninstall(scope, project).changed

    def test_installed_in_tells_its_own_project(self, host: Host, project: Path) -> None:
        """``installed_in`` is how a hook run in a folder without ``engram.toml`` knows the
        folder is ours: true after a project install, false after the uninstall."""
        assert not host.installed_in(project)
        host.plan_install("project", project, BASE, None).apply()
        assert host.installed_in(project)
        host.plan_uninstall("project", project).apply()
        assert not host.installed_in(project)

    def test_the_payload_gives_the_folder_and_session(self, host: Host, project: Path) -> None:
        """The host's own JSON must give the folder the session runs in and its id."""
        payload = host.parse_payload(self.payload(project))
        assert payload.cwd == project
        assert payload.session_id == SESSION_ID

    @pytest.mark.parametrize(
        "raw", [None, {}, {"cwd": 5, "session_id": [], "prompt": {}}, {"cwd": "/no/such/dir"}]
    )
    def test_a_bad_payload_is_an_empty_one(self, host: Host, raw: dict[str, Any] | None) -> None:
        """Garbage on stdin must never fail a hook: no folder, no session, no exception."""
        payload = host.parse_payload(raw)
        assert (payload.cwd, payload.session_id, payload.prompt) == (None, None, None)

    def test_the_output_carries_the_block(self, host: Host) -> None:
        """Session start and each prompt hand the block back in the host's form, one line
        ending the output; other events and an empty block print nothing."""
        for event in ("session-start", "prompt"):
            out = host.output(event, BLOCK)
            assert "The billing service is owned by Alice." in out and out.endswith("\n")
            assert host.output(event, "  \n") == ""
        assert host.output("session-end", BLOCK) == ""

    def test_the_session_source_reads_the_sample(
        self, host: Host, project: Path, tmp_path: Path
    ) -> None:
        """Every sample session is found once, under the host's name, with its turns in
        order; the sessions of another folder are not this project's."""
        root = tmp_path / "transcripts"
        expected = self.write_sessions(root, project)
        assert expected, "write_sessions wrote no session"
        source = host.session_source(root, None)
        assert source.agent == host.name
        refs, warnings = source.discover()
        assert warnings == []
        assert sorted(r.session_id for r in refs) == sorted(expected)
        for ref in refs:
            transcript = source.load(ref)
            assert [(t.role, t.text) for t in transcript.turns] == expected[ref.session_id]
        again, _ = source.discover()
        assert {r.session_id: r.fingerprint for r in again} == {
            r.session_id: r.fingerprint for r in refs
        }
        mine, _ = host.session_source(root, project).discover()
        assert sorted(r.session_id for r in mine) == sorted(expected)
        elsewhere = tmp_path / "elsewhere"
        elsewhere.mkdir()
        theirs, _ = host.session_source(root, elsewhere.resolve()).discover()
        assert theirs == []
        assert isinstance(host.sessions_dir(), Path)

    def test_sessions_dirs_in_the_config_index_it(
        self, host: Host, project: Path, tmp_path: Path
    ) -> None:
        """``[sessions] dirs = {NAME = "..."}`` alone must reach the host's transcripts: one
        document per session, ``sessions/NAME/ID``."""
        root = tmp_path / "transcripts"
        expected = self.write_sessions(root, project)
        sessions = {"agents": [host.name], "dirs": {host.name: str(root)}, "scope": "all"}
        config = EngramConfig(root=project, sessions=SessionsConfig.model_validate(sessions))
        sources = session_sources(config)
        assert [(s.agent, s.root) for s in sources] == [(host.name, root)]
        store, embedder = MemoryStore(MemoryStoreOptions()), HashEmbedder()
        store.set_identity(embedder_identity(embedder, config.chunking.describe()))
        report = index_sessions(config, store, embedder)
        assert report.new == len(expected) and not report.skipped
        assert set(store.list_documents()) == {f"sessions/{host.name}/{s}" for s in expected}
