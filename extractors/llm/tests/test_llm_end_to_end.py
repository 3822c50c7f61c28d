"""engram with the llm extractor, through the real CLI: capture, a contradiction judged by the
model, old session summaries condensed by it, every call in `engram usage`, and a model that
answers malformed JSON giving one clear error while nothing stored changes."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import yaml
from fake_model import KEY
from native_wires import ANTHROPIC_KEY, GOOGLE_KEY, NativeApi

from fake_apis import FakeChat, Reply
from support import cli, cli_json


def memory_files(folder: Path) -> list[Path]:
    """The memory files of ``folder``, its hidden folders left out."""
    return sorted(p for p in folder.rglob("*.md") if p.relative_to(folder).parts[0][0] != ".")


@pytest.fixture
def project(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fake: FakeChat, down: FakeChat
) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    (root / "engram.toml").write_text(
        f"""
[embedder]
provider = "hash"

[vault]
paths = ["memory"]

[extractor]
provider = "llm"
retry_base_delay = 0.0
retry_max_delay = 0.0

[[extractor.providers]]
name = "local"
base_url = "{down.url}"
api_key_env = ""

[[extractor.providers]]
name = "cloud"
base_url = "{fake.url}"
model = "gpt-4o-mini"
api_key_env = "FAKE_CHAT_KEY"
""",
        encoding="utf-8",
    )
    monkeypatch.setenv("FAKE_CHAT_KEY", KEY)
    monkeypatch.chdir(root)
    down.api_key = "not-needed"  # what the SDK sends to a provider configured without a key
    return root


def conversation(path: Path, *turns: str) -> str:
    roles = ("user", "assistant")
    data = [{"role": roles[i % 2], "content": t} for i, t in enumerate(turns)]
    path.write_text(json.dumps(data), encoding="utf-8")
    return str(path)


def test_capture_and_a_contradiction_judged_by_the_model(
    project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], fake: FakeChat
) -> None:
    first = conversation(
        tmp_path / "a.json",
        "For this repository I prefer tabs over spaces in Go code, gofmt expects them anyway.",
        "Noted, Go files keep tab indentation.",
    )
    later = conversation(
        tmp_path / "b.json",
        "Change of plan: I prefer spaces over tabs in Go code now, to match the other repos.",
        "Understood, spaces from now on.",
    )
    old = cli_json(capsys, "capture", first)["stored"][0]
    new = cli_json(capsys, "capture", later)["stored"][0]
    assert new["superseded"] == [old["id"]]
    systems = [s.body["messages"][0]["content"] for s in fake.requests]
    assert any(s.startswith("You judge how") for s in systems)  # the model was asked
    hits = cli_json(capsys, "search", "Go indentation tabs spaces", "--mode", "keyword")["hits"]
    assert [h["path"] for h in hits] == [new["path"]]
    usage = cli_json(capsys, "usage", "--by", "provider,operation")
    rows = {(r["provider"], r["operation"]): r for r in usage["rows"]}
    assert rows[("cloud", "extract")]["requests"] == 2
    assert rows[("cloud", "judge")]["requests"] >= 1
    assert rows[("local", "extract")]["errors"] == 8  # 2 captures x (1 + 3 retries)
    assert usage["total"]["output_tokens"] > 0


def test_a_model_answering_malformed_json_gives_a_clear_error_and_loses_nothing(
    project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], fake: FakeChat
) -> None:
    kept = cli_json(capsys, "remember", "Releases are cut from the main branch.")
    before = {p: p.read_bytes() for p in memory_files(project / "memory")}
    fake.always = Reply(content='{"memories": [{"type": "decision", "content": "unterminated')
    chat = conversation(
        tmp_path / "c.json",
        "We decided to cut releases from release branches instead of main from now on.",
        "OK, I'll create release/1.4 today and document the flow.",
    )
    code, _, err = cli(capsys, "capture", chat)
    assert code == 1
    assert err.count("error:") == 1 and "Traceback" not in err
    assert "not JSON" in err and "nothing stored changed" in err
    assert "cloud" in err and "local" in err  # each provider's failure is named
    assert {p: p.read_bytes() for p in memory_files(project / "memory")} == before
    assert [m["id"] for m in cli_json(capsys, "list")] == [kept["id"]]


def test_old_session_summaries_are_condensed_into_a_learned_pattern(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = project / "memory" / "session-summary"
    folder.mkdir(parents=True)
    start = datetime(2025, 3, 1, tzinfo=UTC)
    for day in range(5):
        meta = {
            "id": f"2025030{day + 1}-090000-00000{day}",
            "title": f"Session {day}",
            "type": "session-summary",
            "scope": "project",
            "project": "project",
            "created_at": (start + timedelta(days=day)).isoformat(),
        }
        body = f"Session {day}: fixed flaky tests by seeding the random generator. Then lunch."
        front = yaml.safe_dump(meta, sort_keys=False)
        (folder / f"session-{day}.md").write_text(f"---\n{front}---\n# Session {day}\n\n{body}\n")
    cli_json(capsys, "index")
    report = cli_json(capsys, "age")
    assert sorted(Path(p).stem for p in report["condensed"]) == ["session-0", "session-1"]
    assert report["archived"] == [] and len(report["learned"]) == 1
    learned = project / report["learned"][0]
    assert "learned-pattern" in learned.parts
    assert "fixed flaky tests by seeding" in learned.read_text(encoding="utf-8")
    chain = cli_json(capsys, "history", "2025030" + "1-090000-000000")["chain"]
    assert [m["type"] for m in chain] == ["session-summary", "session-summary", "learned-pattern"]
    assert [m["status"] for m in chain] == ["superseded", "superseded", "live"]
    usage = cli_json(capsys, "usage", "--by", "operation")
    assert {r["operation"] for r in usage["rows"]} >= {"condense"}


def test_capture_through_claude_then_gemini_from_engram_toml(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    claude: NativeApi,
    gemini: NativeApi,
) -> None:
    """The configuration the docs show: `provider = "anthropic"` first, Google next, keys from
    their SDKs' variables; Claude overloaded for the second capture, so Gemini extracts and
    judges that one."""
    root = tmp_path / "native"
    root.mkdir()
    (root / "engram.toml").write_text(
        f"""
[embedder]
provider = "hash"

[vault]
paths = ["memory"]

[extractor]
provider = "llm"
max_retries = 1
retry_base_delay = 0.0
retry_max_delay = 0.0

[[extractor.providers]]
provider = "anthropic"
name = "claude"                   # both fakes are on 127.0.0.1, the label otherwise
base_url = "{claude.url}"

[[extractor.providers]]
provider = "google"
name = "gemini"
base_url = "{gemini.url}"
""",
        encoding="utf-8",
    )
    monkeypatch.setenv("ANTHROPIC_API_KEY", ANTHROPIC_KEY)
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
    monkeypatch.setenv("GEMINI_API_KEY", GOOGLE_KEY)
    monkeypatch.chdir(root)
    first = conversation(
        tmp_path / "a.json",
        "For this repository I prefer tabs over spaces in Go code, gofmt expects them anyway.",
        "Noted, Go files keep tab indentation.",
    )
    stored = cli_json(capsys, "capture", first)["stored"]
    assert [m["type"] for m in stored] == ["preference"] and gemini.requests == []
    claude.down(529)
    second = conversation(
        tmp_path / "b.json",
        "Change of plan: I prefer spaces over tabs in Go code now, to match the other repos.",
        "Understood, spaces from now on.",
    )
    new = cli_json(capsys, "capture", second)["stored"]
    assert [m["type"] for m in new] == ["preference"] and new[0]["superseded"] == [stored[0]["id"]]
    # extraction and the judge: each Claude attempt overloaded, each answered by Gemini
    assert set(claude.statuses()[1:]) == {529} and set(gemini.statuses()) == {200}
    assert claude.requests[0].body["model"] == "claude-haiku-4-5"  # each provider's default
    assert gemini.requests[0].path.endswith("/gemini-2.5-flash:generateContent")
    usage = cli_json(capsys, "usage", "--by", "provider")
    rows = {r["provider"]: r for r in usage["rows"]}
    assert rows["claude"]["errors"] == len(claude.statuses()) - 1
    assert rows["gemini"]["requests"] == len(gemini.statuses()) >= 1
