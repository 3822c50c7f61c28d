"""Capture: conversations, transcripts and project files become memories through the configured
extractor (the offline ``rules`` one by default), with dedup and contradiction on every write;
sessions are captured once per growth; the extractor's failures never lose anything."""

from __future__ import annotations

import itertools
import json
import shutil
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agent_support import copy_fixtures, frontmatter, nested_private, sessions_config
from engram.config import load_config
from engram.default_plugins.rules_extractor import RulesExtractor
from engram.extraction import OVERLAP, Window, split_windows
from engram.hookspecs import hookimpl
from engram.hosts.claude_code.sessions import ClaudeCodeSource
from engram.ingest.sessions.base import SessionRef
from engram.memories.capture import read_messages
from engram.memories.files import memory_files
from engram.memory import Memory
from engram.models import ExtractedMemory, ExtractionMode, Message
from engram.plugins import get_plugin_manager
from engram.registry import Register
from support import cli, cli_json

CLAUDE_ID = "0b6f7c3e-1111-4a5b-9c1d-aaaaaaaaaaaa"


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    (root / "engram.toml").write_text(
        '[embedder]\nprovider = "local"\n[vault]\npaths = ["memory"]\n', encoding="utf-8"
    )
    monkeypatch.chdir(root)
    return root


def chat(*turns: str) -> str:
    roles = ("user", "assistant")
    return json.dumps([{"role": roles[i % 2], "content": t} for i, t in enumerate(turns)])


def write(path: Path, text: str) -> str:
    path.write_text(text, encoding="utf-8")
    return str(path)


# --------------------------------------------------------------------------- the CLI


def test_a_changed_preference_supersedes_the_old_one_and_rebuild_keeps_it(
    project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    first = write(
        tmp_path / "monday.json",
        chat(
            "For this repo, I prefer tabs over spaces in Go code. The linter config in the "
            "repository already expects them.",
            "Noted: Go files get tab indentation, and gofmt keeps it that way.",
        ),
    )
    later = write(
        tmp_path / "friday.json",
        chat(
            "Actually, I now prefer spaces over tabs in Go code, like the rest of the team.",
            "Understood, spaces from now on.",
        ),
    )
    old = cli_json(capsys, "capture", first)["stored"]
    new = cli_json(capsys, "capture", later)["stored"]
    old_pref = next(m for m in old if m["type"] == "preference")
    new_pref = next(m for m in new if m["type"] == "preference")
    assert new_pref["action"] == "created" and new_pref["superseded"] == [old_pref["id"]]

    def found() -> list[str]:
        hits = cli_json(capsys, "search", "Go indentation preference tabs spaces")["hits"]
        return [h["path"] for h in hits if h["metadata"].get("type") == "preference"]

    assert found() == [new_pref["path"]]
    chain = cli_json(capsys, "history", old_pref["id"])["chain"]
    assert [(m["id"], m["status"]) for m in chain] == [
        (old_pref["id"], "superseded"),
        (new_pref["id"], "live"),
    ]
    assert (project / old_pref["path"]).is_file()  # history stays on disk
    code, _, _ = cli(capsys, "rebuild")
    assert code == 0
    assert found() == [new_pref["path"]]
    assert [m["id"] for m in cli_json(capsys, "history", new_pref["id"])["chain"]] == [
        old_pref["id"],
        new_pref["id"],
    ]


def test_bad_input_gives_one_clear_line_and_changes_nothing(
    project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    good = write(tmp_path / "good.json", chat("We decided to use Redis for the session cache."))
    cli_json(capsys, "capture", good, "--mode", "summary")  # too short: nothing stored
    stored = cli_json(capsys, "remember", "The cache TTL is ten minutes.", "--type", "decision")
    before = {p: p.read_bytes() for p in memory_files(project / "memory")}
    cases = [
        (("capture", good, "--mode", "nonsense"), "unknown extraction mode 'nonsense'"),
        (("capture", write(tmp_path / "bad.json", '[{"role": "user"}]')), "message 1"),
        (("capture", write(tmp_path / "odd.json", '{"hello": 1}')), "not messages"),
        (("capture", write(tmp_path / "txt.jsonl", "just some text\n")), "neither JSON"),
        (("capture", str(tmp_path / "missing.json")), "is not a file"),
        (("capture", good, "--scope", "team"), "unknown scope 'team'"),
        (("capture", good, "--mode", "init"), "give no input file"),
    ]
    for args, message in cases:
        code, _, err = cli(capsys, *args)
        assert code == 1, args
        assert message in err and "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert {p: p.read_bytes() for p in memory_files(project / "memory")} == before
    assert cli_json(capsys, "list")[0]["id"] == stored["id"]


def test_a_claude_code_transcript_and_stdin_messages_are_captured(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    transcript = next(
        (Path(__file__).parent.parent / "fixtures/sessions/claude/projects").glob(
            f"*/{CLAUDE_ID}.jsonl"
        )
    )
    report = cli_json(capsys, "capture", str(transcript))
    assert report["messages"] >= 3 and report["used"] >= 2
    import io

    messages = chat(
        "The deploy failed with OOMKilled on the worker pods again this morning.",
        "Raising the memory limit of the worker deployment to 2Gi fixed it.",
    )
    monkeypatch.setattr("sys.stdin", io.StringIO(messages))
    report = cli_json(capsys, "capture", "-")
    kinds = {m["type"] for m in report["stored"]}
    assert "error-solution" in kinds
    fix = next(m for m in report["stored"] if m["type"] == "error-solution")
    text = (project / fix["path"]).read_text(encoding="utf-8")
    assert "OOMKilled" in text and frontmatter(project / fix["path"])["source"] == "capture"


def test_a_long_conversation_is_read_whole_in_overlapping_windows(
    project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    turns = ["I prefer tabs over spaces in Go code, for every file in this repository."]
    turns += ["Still reading the logs, nothing new yet."] * 6
    turns += ["The nightly export job times out after 30 minutes."]  # index 7: window 1 ends here
    turns += ["Still reading the logs, nothing new yet."]
    turns += ["Adding an index on orders.created_at solved the timeout."]  # index 9: window 2
    turns += ["Still reading the logs, nothing new yet."] * 9
    turns += ["We decided to keep the export job nightly after all."]
    report = cli_json(capsys, "capture", write(tmp_path / "long.json", chat(*turns)))
    assert report["windows"] == [[0, 8], [5, 13], [10, 18], [15, 20]]
    assert report["used"] == report["messages"] == 20 and report["unseen"] == 0
    assert (
        "from 20 of 20 messages in 4 windows"
        in cli(capsys, "capture", str(tmp_path / "long.json"))[1]
    )
    stored = {
        m["type"]: (project / m["path"]).read_text(encoding="utf-8") for m in report["stored"]
    }
    assert "tabs over spaces" in stored["preference"]  # the first message, long out of the last 8
    # the error ends one window and its fix starts the next: the overlap pairs them
    assert (
        "times out" in stored["error-solution"] and "orders.created_at" in stored["error-solution"]
    )
    assert "nightly after all" in stored["decision"]
    assert len(report["stored"]) == 3  # what two windows share is stored once


@settings(max_examples=200, deadline=None)
@given(
    lengths=st.lists(st.integers(min_value=1, max_value=3_000), max_size=60),
    size=st.integers(min_value=1, max_value=20),
    chars=st.integers(min_value=200, max_value=10_000),
)
def test_windows_cover_every_message_and_respect_their_limits(
    lengths: list[int], size: int, chars: int
) -> None:
    spans = split_windows(lengths, Window(size, chars))
    assert sorted({i for a, b in spans for i in range(a, b)}) == list(range(len(lengths)))
    for (a, b), (c, d) in itertools.pairwise(spans):
        assert a < c and c <= b  # moving forward, never leaving a gap
        if d - c > OVERLAP and b - a > OVERLAP:
            assert b - c == OVERLAP or c == a + 1  # adjacent windows share OVERLAP messages
    for a, b in spans:
        assert 0 < b - a <= size
        assert b - a == 1 or sum(lengths[a:b]) <= chars


def test_init_mode_reads_the_project_files(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (project / "README.md").write_text(
        "# Ledger\n\nLedger keeps the double-entry accounts of the shop. It is a Flask app.\n\n"
        "Run the tests with `pytest -q`.\n",
        encoding="utf-8",
    )
    (project / "pyproject.toml").write_text(
        '[project]\nname = "ledger"\ndependencies = ["flask>=3", "sqlalchemy>=2"]\n',
        encoding="utf-8",
    )
    report = cli_json(capsys, "capture", "--mode", "init")
    briefs = [m for m in report["stored"] if m["type"] == "project-brief"]
    assert briefs and "double-entry" in (project / briefs[0]["path"]).read_text(encoding="utf-8")
    again = cli_json(capsys, "capture", "--mode", "init")  # the same files: merged, not doubled
    assert {m["action"] for m in again["stored"]} == {"updated"}
    assert len(cli_json(capsys, "list", "--type", "project-brief")) == 1


# --------------------------------------------------------------------------- failing extractors


class Scripted:
    """A third-party extractor for tests: answers from a script, records what it was shown,
    and fails like a model behind a network can (nothing found, ``last_error`` set)."""

    name = "scripted"

    def __init__(self, options: object = None) -> None:
        self.seen: list[list[Message]] = []
        self.answers: list[list[ExtractedMemory] | str] = []
        self.last_error: str | None = None

    def extract(
        self, messages: Sequence[Message], mode: ExtractionMode = "normal"
    ) -> list[ExtractedMemory]:
        self.seen.append(list(messages))
        answer = self.answers.pop(0) if self.answers else []
        if isinstance(answer, str):
            self.last_error = answer
            return []
        self.last_error = None
        return answer


class ScriptedPlugin:
    def __init__(self) -> None:
        self.extractor = Scripted()

    @hookimpl
    def register_extractors(self, register: Register) -> None:
        register("scripted", lambda options: self.extractor)


@pytest.fixture
def scripted(tmp_path: Path) -> Iterator[tuple[Memory, Scripted]]:
    pm = get_plugin_manager()
    plugin = ScriptedPlugin()
    pm.register(plugin)
    config = load_config({"extractor": {"provider": "scripted"}}, start=tmp_path)
    memory = Memory.open(config, plugin_manager=pm)
    yield memory, plugin.extractor
    memory.close()


def test_a_failing_extractor_is_a_warning_and_loses_nothing(
    tmp_path: Path, scripted: tuple[Memory, Scripted]
) -> None:
    memory, extractor = scripted
    kept = memory.remember("The staging database is reset every night.", type="decision")
    before = (tmp_path / kept.path).read_bytes()
    extractor.answers = ["provider local-ollama: the answer was not JSON (malformed response)"]
    report = memory.capture(
        [Message(role="user", content="We decided to reset staging weekly instead of nightly.")] * 2
    )
    assert report.failed and report.stored == []
    assert any("not JSON" in w for w in report.warnings)
    assert any("nothing was captured" in w for w in report.warnings)
    assert (tmp_path / kept.path).read_bytes() == before
    assert [m.id for m in memory.list_memories()] == [kept.id]


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    secret=st.text(alphabet="ABCDEFGHJKMNPQRSTUVWXYZ23456789", min_size=12, max_size=20),
    depth=st.integers(0, 2),
    after_inner=st.booleans(),
    shout=st.booleans(),
)
def test_private_spans_never_reach_the_extractor_nor_a_file(
    tmp_path: Path,
    scripted: tuple[Memory, Scripted],
    secret: str,
    depth: int,
    after_inner: bool,
    shout: bool,
) -> None:
    memory, extractor = scripted
    span = nested_private(secret, depth, after_inner, shout)
    extractor.answers = [
        [ExtractedMemory(type="decision", content=f"We decided to rotate keys {span} monthly.")]
    ]
    extractor.seen.clear()
    memory.capture(
        [
            Message(
                role="user",
                content=f"Rotate the API keys monthly, the auditors asked for it. {span} Thanks.",
            ),
            Message(
                role="assistant",
                content=f"Done: the rotation job now runs on the first of every month. {span}",
            ),
        ]
    )
    assert extractor.seen, "the extractor was not called"
    assert all(secret not in m.content for seen in extractor.seen for m in seen)
    for path in memory_files(tmp_path / "memory"):
        assert secret not in path.read_text(encoding="utf-8")


# --------------------------------------------------------------------------- summary mode


def test_summary_mode_writes_one_session_summary(tmp_path: Path) -> None:
    with Memory.open(load_config({}, start=tmp_path)) as memory:
        messages = [
            Message(role="user", content="The nightly export job times out after 30 minutes."),
            Message(role="assistant", content="It scans the whole orders table; add an index."),
            Message(role="user", content="Adding the index on created_at fixed the timeout."),
            Message(role="assistant", content="Great. We decided to keep the job nightly."),
        ]
        report = memory.capture(messages, "summary")
        assert [m.type for m in report.stored] == ["session-summary"]
        assert isinstance(memory.extractor, RulesExtractor)


def test_a_personal_event_is_a_fact_that_progress_aging_leaves_alone(tmp_path: Path) -> None:
    with Memory.open(load_config({}, start=tmp_path)) as memory:
        said = "I finished my book last week, after two years of writing every morning."
        first = memory.capture(
            [
                Message(role="user", content=said),
                Message(
                    role="assistant", content="Congratulations, that is a big milestone for you!"
                ),
            ]
        )
        assert [(m.type, m.action) for m in first.stored] == [("fact", "created")]
        shipped = "We shipped the CSV export of the billing dashboard to production today."
        later = memory.capture(
            [
                Message(role="user", content=shipped),
                Message(
                    role="assistant", content="Great, I will close the ticket for the export now."
                ),
            ]
        )
        assert [m.type for m in later.stored] == ["progress"]
        live = {m.type: m for m in memory.list_memories()}
        assert set(live) == {"fact", "progress"} and all(m.live for m in live.values())
        text = (tmp_path / live["fact"].path).read_text(encoding="utf-8")
        assert "The user finished their book last week" in text


# --------------------------------------------------------------------------- sessions


def test_sessions_are_captured_once_per_growth(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    opencode, claude = copy_fixtures(tmp_path / "agents")
    root = tmp_path / "project"
    root.mkdir()
    cfg = sessions_config(opencode, claude)["sessions"]
    (root / "engram.toml").write_text(
        '[embedder]\nprovider = "hash"\n[capture]\ncooldown_seconds = 0\n[sessions]\n'
        f'enabled = true\nscope = "all"\ndirs = {{opencode = "{cfg["dirs"]["opencode"]}", '
        f'claude-code = "{cfg["dirs"]["claude-code"]}"}}\n',
        encoding="utf-8",
    )
    monkeypatch.chdir(root)
    first = cli_json(capsys, "sessions", "--capture")["capture"]
    assert first["sessions"] == 5 and len(first["captured"]) >= 1
    assert cli_json(capsys, "sessions", "--capture")["capture"]["captured"] == []
    transcript = next(claude.glob(f"*/{CLAUDE_ID}.jsonl"))
    grown = {
        "type": "user",
        "message": {
            "role": "user",
            "content": "The consumer lag is gone. From now on we decided to keep "
            "max.poll.records at 100 for every consumer.",
        },
        "timestamp": "2025-01-03T10:00:00Z",
        "uuid": "u-grown",
    }
    with transcript.open("a", encoding="utf-8") as handle:  # its last line was cut off
        handle.write("\n" + json.dumps(grown) + "\n")
    again = cli_json(capsys, "sessions", "--capture")["capture"]
    assert again["captured"] == [f"sessions/claude-code/{CLAUDE_ID}"]
    summaries = cli_json(
        capsys, "list", "--type", "session-summary", "--tag", f"session:claude-code/{CLAUDE_ID}"
    )
    assert len(summaries) == 1  # the fresh summary superseded the session's earlier one
    code, out, _ = cli(capsys, "sessions", "--capture")
    assert code == 0 and "captured 0 of 5 sessions" in out
    shutil.rmtree(claude)  # sessions vanish: their capture is simply not attempted
    assert cli(capsys, "sessions", "--capture")[0] == 0


def test_a_transcript_given_as_text_reads_as_the_session_indexer_reads_its_file() -> None:
    path = next(
        (Path(__file__).parent.parent / "fixtures/sessions/claude/projects").glob(
            f"*/{CLAUDE_ID}.jsonl"
        )
    )
    loaded = ClaudeCodeSource(path.parent.parent).load(SessionRef("claude-code", "x", path, ""))
    # A half-written line in the middle is skipped, as the indexer skips it in a file.
    lines = path.read_text(encoding="utf-8").splitlines()
    text = "\n".join([*lines[:2], '{"type": "user", "mess', *lines[2:]])
    messages = read_messages(text, "stdin")
    assert loaded.turns and [(m.role, m.content, m.timestamp) for m in messages] == [
        (t.role, t.text, t.timestamp) for t in loaded.turns
    ]
