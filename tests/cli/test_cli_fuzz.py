"""Every ``engram`` command fed what a careless user or a hostile script gives it: bytes that are
not UTF-8 (in argv and on stdin), empty and huge values, NUL bytes, numbers out of range, JSON
that is not, private spans and paths that lead out. Never a traceback: exit 0, 1 (one ``error:``
line) or 2 (a usage error); and nothing written outside the memory folders and the index.

The table runs in process (``engram.cli.main``, as the other CLI tests do) over every command
the app registers, so a new command is fuzzed without a change here; a few cases go through a
real process, for real bytes in argv."""

from __future__ import annotations

import io
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from typer.main import get_command

from engram.cli import build_app
from engram.memory import Memory
from support import MemoryFactory, cli

HUGE = "x" * 100_000
BAD_VALUES = [
    "",
    " ",
    HUGE,
    "a\x00b",
    "two\nlines",
    "-",  # stdin, which holds bytes that are not UTF-8 (see the fixture)
    "-5",
    "1e309",
    "nan",
    "[]",
    '{"and": [',
    "<private>SECRETFZ</private>",
    # A path that climbs out of the project: to a file of the test's own (never a real system
    # file: the tests run as root, and a command that wrongly writes there must only fail this
    # test, not damage the machine), watched like the rest of tmp_path.
    "../outside/passwd",
    "/nonexistent/dir/x.md",
    "/proc/version",
]
# Commands that serve until stopped: only values their parser must refuse.
SERVING = {"mcp", "watch", "dashboard"}
NOT_A_NUMBER = ["abc", "", HUGE]
# Not fuzzed here: `bench` (a plugin's benchmark run), `hooks run` (a host's event hook, with its
# own tests), and whatever a value makes a command legitimately write where the user asked.
SKIPPED = {"bench", "hooks run"}
USER_CHOSEN_OUTPUT = {("export", "--out")}


def _commands() -> list[tuple[str, Any]]:
    found: list[tuple[str, Any]] = []

    def walk(command: Any, words: list[str]) -> None:
        subs = getattr(command, "commands", None)
        if subs:
            for name, sub in subs.items():
                walk(sub, [*words, name])
        elif " ".join(words) not in SKIPPED:
            found.append((" ".join(words), command))

    walk(get_command(build_app()), [])
    return found


COMMANDS = _commands()


def _cases(name: str, command: Any) -> list[tuple[list[str], str | None]]:
    """(arguments, option fuzzed or None) for one command: each bad value in each positional
    and in each option that takes a value, the other required ones given something sane."""
    words = name.split()
    sane: list[str] = []
    for param in command.params:
        if _is_argument(param) and param.required:
            sane.append("claude-code" if words[0] == "hooks" else "x")
    required = ["--to", "memory"] if words == ["migrate"] else []
    cases: list[tuple[list[str], str | None]] = []
    for param in command.params:
        values = BAD_VALUES
        if words[0] in SERVING:
            if _is_argument(param) or _is_flag(param) or param.name == "host":
                continue
            values = NOT_A_NUMBER
        if _is_argument(param):
            for value in values:
                args = [value, *sane[1:]] if sane else [value]
                cases.append(([*words, *args, *required], None))
        elif not _is_flag(param):
            option = param.opts[0]
            extra = ["--dry-run"] if words[0] == "hooks" else []
            for value in values:
                cases.append(([*words, *sane, *required, *extra, option, value], option))
    return cases


def _is_argument(param: Any) -> bool:
    """Typer vendors its own click: ask the parameter what it is, not its class."""
    return bool(param.param_type_name == "argument")


def _is_flag(param: Any) -> bool:
    return bool(getattr(param, "is_flag", False) or getattr(param, "count", False))


def _tree(root: Path) -> dict[str, tuple[int, int]]:
    """Every file under ``root`` but the memory folders and the index: (size, mtime)."""
    out = {}
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d not in {"memory", ".engram", "xdg"}]
        for name in files:
            stat = (Path(folder) / name).stat()
            out[str(Path(folder) / name)] = (stat.st_size, stat.st_mtime_ns)
    return out


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "project"
    (root / "notes").mkdir(parents=True)
    (root / "notes" / "deploy.md").write_text("# Deploy\n\nRoll back with make rollback.\n")
    (root / "engram.toml").write_text(
        '[store]\nbackend = "sqlite"\n[embedder]\nprovider = "hash"\n[vault]\npaths = ["notes"]\n',
        encoding="utf-8",
    )
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "passwd").write_text("root:x:0:0:root:/root:/bin/bash\n")
    monkeypatch.chdir(root)
    monkeypatch.setenv("XDG_DATA_HOME", str(root / "xdg"))
    monkeypatch.setenv("HOME", str(root / "home"))  # a host config written there is caught
    return root


def _bytes_on_stdin(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"\xff\xfe not utf-8 \xc3")))


def _check(args: list[str], code: int, out: str, err: str) -> None:
    shown = [a[:40] for a in args]
    assert "Traceback" not in out + err, (shown, err[-2000:])
    assert code in (0, 1, 2), (shown, code, err[-500:])
    lines = [line for line in err.splitlines() if line.strip()]
    if code == 1:
        assert lines and lines[-1].startswith("error: "), (shown, err[-500:])
        assert sum(line.startswith("error:") for line in lines) == 1, (shown, err[-500:])
    if code == 2:
        assert "Error: " in err or lines[-1].startswith("error: "), (shown, err[-500:])


@pytest.mark.parametrize(("name", "command"), COMMANDS, ids=[n for n, _ in COMMANDS])
def test_every_command_takes_bad_values_without_a_traceback(
    project: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    name: str,
    command: Any,
) -> None:
    assert cli(capsys, "index")[0] == 0
    cases = _cases(name, command)
    assert cases or not [p for p in command.params if not getattr(p, "is_flag", False)]
    before = _tree(tmp_path)
    for args, option in cases:
        _bytes_on_stdin(monkeypatch)
        code, out, err = cli(capsys, *args)
        _check(args, code, out, err)
        if (name, option) in USER_CHOSEN_OUTPUT:
            before = _tree(tmp_path)  # what the user asked for, written where they asked
        else:
            assert _tree(tmp_path) == before or name == "index", (args[:4], _tree(tmp_path))
    assert not Path("/nonexistent").exists()


def test_the_table_covers_every_command() -> None:
    names = {name.split()[0] for name, _ in COMMANDS}
    assert {"remember", "search", "get", "import", "export", "list", "forget", "history"} <= names
    assert len(COMMANDS) >= 25


# -- real processes: real bytes in argv and on stdin ---------------------------------------------


def engram(
    project: Path, *args: str | bytes, stdin: bytes = b"", **env: str
) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "engram", *args],
        input=stdin,
        capture_output=True,
        env={**os.environ, **env},
        cwd=project,
        check=False,
        timeout=120,
    )


def _one_error(proc: subprocess.CompletedProcess[bytes], code: int, *words: str) -> str:
    err = proc.stderr.decode("utf-8", "replace")
    assert proc.returncode == code, err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    for word in words:
        assert word in err, err
    return err


@pytest.mark.parametrize(
    "args",
    [
        [b"remember", b"\xff\xfe x"],
        [b"search", b"q\xffz"],
        [b"get", b"notes/\xff.md"],
        [b"list", b"--tag", b"\xfe"],
        [b"import", b"\xff.jsonl"],
    ],
)
def test_bytes_that_are_not_utf8_in_argv_are_one_usage_error(
    project: Path, args: list[bytes]
) -> None:
    _one_error(engram(project, *args), 2, "not valid UTF-8")
    assert not (project / "memory").exists()


@pytest.mark.parametrize("command", [["remember", "-"], ["import", "-"], ["capture", "-"]])
def test_bytes_that_are_not_utf8_on_stdin_are_one_error(project: Path, command: list[str]) -> None:
    _one_error(engram(project, *command, stdin=b"\xff\xfe x"), 1, "stdin is not valid UTF-8")
    assert not (project / "memory").exists()


def test_a_query_that_is_not_unicode_is_named_not_the_index(
    open_memory: MemoryFactory, project: Path
) -> None:
    memory = open_memory()
    with pytest.raises(Exception, match="the query is not valid UTF-8") as caught:
        memory.search("q\udcffz")
    assert "index" not in str(caught.value)


def test_export_to_a_place_it_cannot_write_is_one_error_and_leaves_nothing(
    project: Path, tmp_path: Path
) -> None:
    assert engram(project, "remember", "Keep this.").returncode == 0
    folder = tmp_path / "out"
    folder.mkdir()
    for target, words in (
        ("/nonexistent/dir/x.jsonl", ["cannot write", "/nonexistent/dir/x.jsonl"]),
        (str(folder), ["is a folder"]),
        ("/proc/version", ["cannot write /proc/version"]),
    ):
        _one_error(engram(project, "export", "-o", target), 1, *words)
    assert not list(tmp_path.glob("*.part")) and list(folder.iterdir()) == []
    assert engram(project, "export", "-o", str(folder / "x.jsonl")).returncode == 0
    assert "Keep this." in (folder / "x.jsonl").read_text(encoding="utf-8")


def test_an_unknown_env_section_is_refused_like_an_unknown_key(project: Path) -> None:
    _one_error(engram(project, "list", ENGRAM_BOGUS__X="1"), 1, "ENGRAM_BOGUS__X", "sections")
    _one_error(engram(project, "list", ENGRAM_SEARCH__BOGUS="1"), 1, "search.bogus")
    assert engram(project, "list", ENGRAM_SEARCH__LIMIT="3").returncode == 0


@pytest.mark.parametrize(
    ("args", "valid"),
    [
        (["list", "--scope", "nope"], "'project', 'user', 'external'"),
        (["search", "deploy", "--type", "nope"], "'decision'"),
        (["list", "--type", "nope"], "'decision'"),
    ],
)
def test_a_value_that_is_not_one_of_the_choices_is_a_usage_error_naming_them(
    project: Path, capsys: pytest.CaptureFixture[str], args: list[str], valid: str
) -> None:
    code, out, err = cli(capsys, *args)
    assert code == 2 and out == "" and "Traceback" not in err
    assert "nope" in err and valid in err


def test_a_created_at_that_is_not_a_date_is_warned_about_and_never_shown_as_one(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = cli(capsys, "remember", "The build uses make.", "--json")
    assert code == 0
    path = project / "memory" / "note" / "the-build-uses-make.md"
    text = path.read_text(encoding="utf-8")
    start = text.index("created_at: ")
    end = text.index("\n", start)
    path.write_text(text[:start] + "created_at: yesterday-ish" + text[end:], encoding="utf-8")
    code, out, err = cli(capsys, "index")
    assert code == 0 and "created_at" in err and "yesterday-ish" in err
    code, out, _ = cli(capsys, "list")
    assert code == 0 and "yesterday-ish" not in out and out.startswith("?")
    code, out, _ = cli(capsys, "list", "--json")
    assert '"created_at": null' in out


def test_two_forgets_of_one_memory_at_once_leave_one_line_each(project: Path) -> None:
    for round_ in range(3):
        made = engram(project, "remember", f"Round {round_} fact to forget.", "--json")
        memory_id = made.stdout.decode().split('"id": "')[1].split('"')[0]
        procs = [
            subprocess.Popen(
                [sys.executable, "-m", "engram", "forget", memory_id],
                cwd=project,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
            )
            for _ in range(2)
        ]
        results = [(p.wait(timeout=120), p.communicate()) for p in procs]
        assert sorted(code for code, _ in results) in ([0, 0], [0, 1]), results
        for code, (_, err) in results:
            assert b"Traceback" not in err and len(err.strip().splitlines()) <= 1, err
            if code == 1:
                assert b"error:" in err and memory_id.encode() in err


class ResetOnce:
    """A real embedder that, the first time it embeds a document while armed, lets another
    engram reset the index: ``reset`` run beside ``remember``, at the worst moment."""

    def __init__(self, inner: Any, other: Memory) -> None:
        self.inner = inner
        self.name, self.model, self.dimension = inner.name, inner.model, inner.dimension
        self.other: Memory | None = other
        self.lock = threading.Lock()

    def embed(self, texts: Any, input_type: Any = "document") -> list[list[float]]:
        with self.lock:
            other, self.other = self.other, None
        if other is not None and input_type == "document":
            other.store.reset()
        return list(self.inner.embed(texts, input_type))


def test_remember_beside_a_reset_keeps_and_indexes_the_memory(
    open_memory: MemoryFactory, project: Path
) -> None:
    memory = open_memory()
    memory.remember("The API listens on port 8080.")
    other = open_memory()
    racer = ResetOnce(memory.embedder.inner, other)
    memory.embedder.inner = racer
    stored = memory.remember("Deploys go out on Tuesdays.")
    assert racer.other is None  # the reset ran, between the identity check and the index
    assert (memory.config.root / stored.path).is_file() and stored.chunks >= 1
    assert any(h.chunk.document_id == stored.path for h in memory.search("Tuesdays").hits)
