"""The host suite (``engram.testing.host_suite``) over every host engram ships, and over a sample
host written into the test's temporary folder: a new host is its folder plus one ``register``
line, and with nothing else changed it installs, answers hooks and has its sessions indexed."""

from __future__ import annotations

import json
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from engram.hosts import registry
from engram.hosts.claude_code.sessions import project_folder_name
from engram.ingest.sessions import registry as table
from engram.testing.host_suite import SESSION_ID, HostSuite, Turns


class TestClaudeCode(HostSuite):
    host_name = "claude-code"

    def payload(self, cwd: Path) -> dict[str, Any]:
        transcript = cwd / ".claude-projects" / "p" / f"{SESSION_ID}.jsonl"
        return {
            "session_id": SESSION_ID,
            "transcript_path": str(transcript),
            "cwd": str(cwd),
            "hook_event_name": "SessionStart",
        }

    def write_sessions(self, root: Path, project: Path) -> dict[str, Turns]:
        folder = root / project_folder_name(project)
        folder.mkdir(parents=True)
        events = [
            {"type": "user", "cwd": str(project), "message": {"role": "user", "content": "Hi?"}},
            {
                "type": "assistant",
                "cwd": str(project),
                "message": {
                    "id": "msg_1",
                    "role": "assistant",
                    "content": [{"type": "text", "text": "Deploys go out on Tuesdays."}],
                },
            },
        ]
        lines = "".join(json.dumps(e) + "\n" for e in events)
        (folder / "cc-one.jsonl").write_text(lines, encoding="utf-8")
        return {"cc-one": [("user", "Hi?"), ("assistant", "Deploys go out on Tuesdays.")]}


class TestOpenCode(HostSuite):
    host_name = "opencode"

    def payload(self, cwd: Path) -> dict[str, Any]:
        return {"cwd": str(cwd), "session_id": SESSION_ID}  # what our plugin sends

    def write_sessions(self, root: Path, project: Path) -> dict[str, Turns]:
        storage = root / "storage"
        files: dict[str, dict[str, Any]] = {
            "session/proj_1/ses_one.json": {"id": "ses_one", "directory": str(project)},
            "message/ses_one/msg_1.json": {"id": "msg_1", "role": "user", "time": {"created": 1}},
            "message/ses_one/msg_2.json": {
                "id": "msg_2",
                "role": "assistant",
                "time": {"created": 2},
            },
            "part/msg_1/prt_1.json": {"type": "text", "text": "Who owns billing?"},
            "part/msg_2/prt_1.json": {"type": "text", "text": "Alice owns billing."},
        }
        for name, body in files.items():
            path = storage / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(body), encoding="utf-8")
        return {"ses_one": [("user", "Who owns billing?"), ("assistant", "Alice owns billing.")]}


# A host engram does not ship: "Sample" writes ``.sample/hooks.json`` (one command per event)
# and keeps one text file per session, ``<id>.txt``: a ``folder:`` line, then ``role: text``.
SAMPLE_HOST = '''
    """Sample, a host engram does not ship: its whole folder."""

    from __future__ import annotations

    from pathlib import Path
    from typing import Any

    from engram.hosts.base import HookPayload, generic_payload, plain_output
    from engram.hosts.files import Change

    NAME = "sample"


    class SampleHost:
        name = NAME
        scopes = ("project",)

        def plan_install(
            self, scope: str, project_dir: Path, base: list[str], config: Path | None
        ) -> Change:
            from sample_host.install import plan

            return plan(project_dir, base)

        def plan_uninstall(self, scope: str, project_dir: Path) -> Change:
            from sample_host.install import plan

            return plan(project_dir, None)

        def installed_in(self, folder: Path) -> bool:
            from sample_host.install import hooks_file

            return hooks_file(folder).is_file()

        def parse_payload(self, raw: dict[str, Any] | None) -> HookPayload:
            return generic_payload(raw)

        def output(self, event: str, text: str) -> str:
            return plain_output(event, text)

        def transcript_root(self, payload: HookPayload) -> Path | None:
            return None

        def sessions_dir(self) -> Path:
            return Path.home() / ".sample" / "sessions"

        def session_source(self, root: Path, project: Path | None) -> Any:
            from sample_host.sessions import SampleSource

            return SampleSource(root, project)
'''

SAMPLE_INSTALL = """
    from __future__ import annotations

    import json
    from pathlib import Path

    from engram.hosts.base import EVENTS
    from engram.hosts.command import run_argv
    from engram.hosts.files import Change, read_text


    def hooks_file(project: Path) -> Path:
        return project / ".sample" / "hooks.json"


    def plan(project: Path, base: list[str] | None) -> Change:
        path = hooks_file(project)
        if base is None:
            return Change(path, read_text(path), None)
        hooks = {event: run_argv(event, "sample", base=base) for event in EVENTS}
        return Change(path, read_text(path), json.dumps(hooks, indent=2) + "\\n")
"""

SAMPLE_SESSIONS = """
    from __future__ import annotations

    from pathlib import Path

    from engram.ingest.sessions.base import (
        SessionRef, Transcript, Turn, fingerprint, in_project,
    )


    class SampleSource:
        agent = "sample"

        def __init__(self, root: Path, project: Path | None) -> None:
            self.root = root
            self.project = project

        def discover(self) -> tuple[list[SessionRef], list[str]]:
            refs = []
            for path in sorted(self.root.glob("*.txt")):
                folder = path.read_text(encoding="utf-8").splitlines()[0].removeprefix("folder: ")
                if in_project(folder, self.project):
                    st = path.stat()
                    mark = fingerprint([(path.name, st.st_size, st.st_mtime_ns)])
                    refs.append(SessionRef(self.agent, path.stem, path, mark, folder))
            return refs, []

        def load(self, ref: SessionRef) -> Transcript:
            transcript = Transcript(agent=self.agent, session_id=ref.session_id)
            for line in ref.path.read_text(encoding="utf-8").splitlines()[1:]:
                role, _, text = line.partition(": ")
                if role in ("user", "assistant"):
                    transcript.turns.append(Turn(role=role, text=text))
            return transcript
"""


@pytest.fixture(scope="module")
def sample_folder(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The sample host's folder, importable, and its one registry line; undone afterwards."""
    top = tmp_path_factory.mktemp("sample-host")
    package = top / "sample_host"
    package.mkdir()
    for name, text in {
        "__init__.py": SAMPLE_HOST,
        "install.py": SAMPLE_INSTALL,
        "sessions.py": SAMPLE_SESSIONS,
    }.items():
        (package / name).write_text(textwrap.dedent(text), encoding="utf-8")
    sys.path.insert(0, str(top))
    table.register("sample", "sample_host:SampleHost")
    try:
        yield package
    finally:
        table.unregister("sample")
        sys.path.remove(str(top))
        for module in [m for m in sys.modules if m.split(".")[0] == "sample_host"]:
            del sys.modules[module]


@pytest.mark.usefixtures("sample_folder")
class TestSampleHost(HostSuite):
    host_name = "sample"

    def payload(self, cwd: Path) -> dict[str, Any]:
        return {"cwd": str(cwd), "session_id": SESSION_ID}

    def write_sessions(self, root: Path, project: Path) -> dict[str, Turns]:
        root.mkdir(parents=True)
        text = f"folder: {project}\nuser: Where are the runbooks?\nassistant: In ops/runbooks.\n"
        (root / "s-one.txt").write_text(text, encoding="utf-8")
        return {"s-one": [("user", "Where are the runbooks?"), ("assistant", "In ops/runbooks.")]}


def test_the_sample_host_is_one_folder_and_one_line(sample_folder: Path) -> None:
    """The sample host's whole footprint: its folder and its line; the CLI's host list and
    the session hosts both see it, and it leaves with its line."""
    assert sorted(p.name for p in sample_folder.iterdir() if p.suffix == ".py") == [
        "__init__.py",
        "install.py",
        "sessions.py",
    ]
    assert registry.names() == ["claude-code", "opencode", "sample"]
    assert registry.get("sample").name == "sample"


def test_an_unknown_host_in_sessions_is_an_error_naming_the_known_ones(tmp_path: Path) -> None:
    from engram.config import EngramConfig, SessionsConfig
    from engram.errors import ConfigError
    from engram.ingest.sessions.sync import session_sources

    sessions = SessionsConfig(dirs={"cursor": tmp_path})
    with pytest.raises(ConfigError, match=r"'cursor'.*claude-code, opencode"):
        session_sources(EngramConfig(root=tmp_path, sessions=sessions))


def test_old_per_host_fields_are_read_with_a_deprecation(tmp_path: Path) -> None:
    from engram.config import SessionsConfig

    with pytest.warns(FutureWarning) as caught:
        old = SessionsConfig.model_validate({"claude_dir": str(tmp_path), "opencode_dir": "x"})
    said = sorted(str(w.message) for w in caught)
    assert said[0].startswith("[sessions] claude_dir is deprecated: write dirs = {claude-code = ")
    assert said[1] == "[sessions] opencode_dir is deprecated: write dirs = {opencode = 'x'} instead"
    assert old.dirs == {"claude-code": tmp_path, "opencode": Path("x")}
    with pytest.raises(ValueError, match=r"keep dirs\.opencode only"):
        SessionsConfig.model_validate({"opencode_dir": "x", "dirs": {"opencode": "y"}})
