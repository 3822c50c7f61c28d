"""What a user sees when something goes wrong, or takes long, in the real ``engram`` command:
usage errors without tracebacks, text printed as written, Ctrl+C that says what it kept, progress
when nobody watches a terminal, and a doctor that masks secrets and nothing else."""

from __future__ import annotations

import json
import os
import pty
import re
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from support import cli, note, write_vault


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project with the hash embedder (fast, offline) and a small vault under notes/."""
    (tmp_path / "engram.toml").write_text(
        '[embedder]\nprovider = "hash"\n\n[vault]\npaths = ["notes"]\n', encoding="utf-8"
    )
    write_vault(tmp_path / "notes", {"deploy.md": "# Deploy\n\nRoll back with make rollback.\n"})
    monkeypatch.chdir(tmp_path)
    return tmp_path


def engram(project: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    """``engram ARGS`` in a fresh process, the way a shell runs it."""
    return subprocess.run(
        [sys.executable, "-m", "engram", *args],
        capture_output=True,
        text=True,
        env={**os.environ, "ENGRAM_USER_CONFIG": str(project / "none.toml"), **env},
        cwd=project,
        check=False,
        timeout=120,
    )


# -- 1. usage errors: click's usage message and exit code 2, never a traceback ------------------


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--bogus"], "No such option: --bogus"),
        (["nocmd"], "No such command 'nocmd'"),
        (["search", "deploy", "--limit", "abc"], "Invalid value for '--limit' / '-n'"),
        (["search", "deploy", "--mode", "nonsense"], "Invalid value for '--mode'"),
        (["doctor", "--json"], "No such option: --json"),
    ],
)
def test_usage_errors_print_usage_and_exit_2_without_a_traceback(
    project: Path, args: list[str], message: str
) -> None:
    proc = engram(project, *args)
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    assert proc.stderr.startswith("Usage: engram")
    assert f"Error: {message}" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) <= 5
    assert proc.stdout == ""


def test_help_exits_0_and_no_arguments_shows_help(project: Path) -> None:
    proc = engram(project, "search", "--help")
    assert proc.returncode == 0 and "Usage: engram search" in proc.stdout
    proc = engram(project)
    assert "Usage: engram" in proc.stdout + proc.stderr and "Traceback" not in proc.stderr


# -- 3. text is printed as written: [brackets] survive in errors and in help ----------------------


def test_error_text_keeps_its_brackets(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # None in sys.modules makes `import mcp` fail as if the package were not installed.
    monkeypatch.setitem(sys.modules, "mcp", None)
    code, _, err = cli(capsys, "mcp")
    assert code == 1
    assert "pip install -e './core[agent]'" in err
    code, _, err = cli(capsys, "--store", "[nope]", "stats")
    assert code == 1 and "no store named '[nope]'" in err


def test_help_shows_defaults_and_brackets(project: Path) -> None:
    proc = engram(project, "search", "--help")
    assert proc.returncode == 0
    text = " ".join(proc.stdout.split())  # help is wrapped to the terminal's width
    assert "(default: [search] recency_weight)" in text
    assert "(default: [search] per_document, off)" in text
    proc = engram(project, "capture", "--help")
    assert "[default: normal]" in " ".join(proc.stdout.split())


# -- 6. doctor masks what is declared secret (SecretStr), and shows everything else -------------


def test_doctor_masks_secret_fields_by_type_not_by_name(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    (project / "engram.toml").write_text(
        '[embedder]\nprovider = "openai"\napi_key = "sk-from-file-SECRET"\n'
        'api_key_env = "MY_OPENAI_KEY"\nmax_input_tokens = 512\n\n'
        "[chunking]\nmax_tokens = 300\n\n"
        '[search]\nkeyword_weight = 0.25\nkeyword_scale = "saturating"\n',
        encoding="utf-8",
    )
    monkeypatch.setenv("MY_OPENAI_KEY", "sk-from-env-SECRET")
    code, out, err = cli(capsys, "doctor")
    assert code == 0, err
    assert "SECRET" not in out + err
    config = json.loads(out)["config"]
    assert config["embedder"]["api_key"] == "***"
    assert config["embedder"]["api_key_env"] == "MY_OPENAI_KEY"
    assert config["embedder"]["max_input_tokens"] == 512
    assert config["chunking"]["max_tokens"] == 300
    assert config["search"]["keyword_weight"] == 0.25
    assert config["search"]["keyword_scale"] == "saturating"


def test_doctor_hides_options_it_cannot_type(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Options the plugin does not declare have no type to go by: every value is hidden."""
    code, out, _ = cli(capsys, "--set", "embedder.apikey='sk-typo-SECRET'", "doctor")
    assert code == 0 and "SECRET" not in out
    assert json.loads(out)["config"]["embedder"]["apikey"] == "***"


# -- long runs: a vault big enough to watch, progress lines every 0.1 s -----------------------

FAST_PROGRESS = {"ENGRAM_PROGRESS_SECONDS": "0.1"}
PROGRESS_LINE = re.compile(
    r"^indexing: (\d+)/(\d+) files \(\d+%\), (\d+) chunks in the store, [\d.]+ files/s, ETA \S+$"
)


def big_vault(project: Path, files: int) -> None:
    """``files`` notes of two chunks each: long enough to index that a run can be watched."""
    write_vault(project / "notes", {f"n{i:05d}.md": note(i) for i in range(files)})


# -- 4. long runs are not silent without a terminal: plain progress lines on stderr -------------


def test_index_without_a_terminal_prints_plain_progress_lines_on_stderr(project: Path) -> None:
    big_vault(project, 600)
    proc = engram(project, "index", **FAST_PROGRESS)
    assert proc.returncode == 0, proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.startswith("indexing")]
    assert lines, proc.stderr
    for line in lines:
        match = PROGRESS_LINE.match(line)
        assert match, line
        assert int(match[1]) <= int(match[2]) == 601
    assert "indexing:" not in proc.stdout and "601 new" in proc.stdout


def test_index_in_a_terminal_draws_a_bar_instead(project: Path) -> None:
    big_vault(project, 600)
    leader, follower = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "engram", "index"],
        stdout=subprocess.PIPE,
        stderr=follower,
        text=True,
        env={
            **os.environ,
            "ENGRAM_USER_CONFIG": str(project / "none.toml"),
            "TERM": "xterm",
            **FAST_PROGRESS,
        },
        cwd=project,
    )
    os.close(follower)
    # Read the terminal while the index runs: an unread pty fills its buffer (a few KB of bar
    # redraws on a slow machine) and blocks the writer for ever.
    terminal: list[str] = []
    reader = threading.Thread(target=lambda: terminal.append(_drain(leader)), daemon=True)
    reader.start()
    stdout, _ = proc.communicate(timeout=600)
    reader.join(timeout=60)
    assert not reader.is_alive(), "the terminal never closed"
    seen = terminal[0]
    assert proc.returncode == 0 and "601 new" in stdout
    assert "/601" in seen  # the bar's done/total column
    assert "files/s" not in seen  # no plain lines on a terminal


def _drain(fd: int) -> str:
    chunks = []
    while True:
        try:
            data = os.read(fd, 65536)
        except OSError:  # the terminal closed
            break
        if not data:
            break
        chunks.append(data)
    os.close(fd)
    return b"".join(chunks).decode("utf-8", "replace")


# -- 2. Ctrl+C during index: exit 130, what was done so far, and nothing lost --------------------


def test_ctrl_c_during_index_exits_130_with_the_partial_report_and_loses_nothing(
    project: Path,
) -> None:
    big_vault(project, 2000)
    proc = subprocess.Popen(
        [sys.executable, "-m", "engram", "index"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "ENGRAM_USER_CONFIG": str(project / "none.toml"), **FAST_PROGRESS},
        cwd=project,
        # A shell starts background jobs with SIGINT ignored; Ctrl+C must reach this one.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    assert proc.stderr is not None
    # Interrupt once a document is committed: a record is written after its chunks, and the
    # next document's chunks after that record, so 3 chunks in the store (deploy.md has one,
    # every note two) mean at least one record. Waiting on this, not on the first line, keeps
    # a slow machine from interrupting before anything was written.
    while True:
        line = proc.stderr.readline()
        progress = PROGRESS_LINE.match(line.strip())
        assert progress, line
        if int(progress[3]) >= 3:
            break
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert "Traceback" not in err
    assert err.splitlines()[-1:] == ["interrupted; nothing lost, re-run to continue"], err
    partial = re.search(r"^interrupted at file (\d+) of 2001: (\d+) chunks written", out)
    assert partial, out
    stats = json.loads(engram(project, "stats", "--json").stdout)
    kept, at_file, written = stats["documents"], int(partial[1]), int(partial[2])
    assert 0 < kept <= at_file < 2001
    # The report is honest: a record is written after its chunks are counted, and every chunk
    # counted is in the store (deploy.md, first, has one chunk; every note two).
    assert 2 * kept - 1 <= written <= stats["chunks"]

    rerun = engram(project, "index", "--json")
    assert rerun.returncode == 0, rerun.stderr
    assert json.loads(rerun.stdout)["new"] == 2001 - kept
    stats = json.loads(engram(project, "stats", "--json").stdout)
    assert stats["documents"] == 2001 and stats["chunks"] == 2 * 2000 + 1
    again = json.loads(engram(project, "index", "--json").stdout)
    assert again["unchanged"] == 2001 and again["new"] == again["changed"] == 0
