"""The native Anthropic and Google providers, through the real ``anthropic`` and
``google-genai`` SDKs against local servers speaking each protocol (native_wires.py): the same
tasks, structured output, retries, ledger, key handling and fallback as the OpenAI path."""

from __future__ import annotations

import json
import logging
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from fake_model import KEY, Build
from native_wires import ANTHROPIC_KEY, GOOGLE_KEY, NativeApi, reported_tokens

from engram import (
    ExtractedMemory,
    JudgeCandidate,
    KnownMemory,
    LifecycleConfig,
    Message,
    UsageLedger,
)
from engram_llm import LLMOptions
from engram_llm.options import ProviderOptions
from fake_apis import FakeChat, Reply

CHAT = [
    Message(role="user", content="I prefer tabs over spaces in Go code."),
    Message(role="assistant", content="We decided to use PostgreSQL 15 for billing."),
]
NEW = ExtractedMemory(type="preference", content="The user prefers spaces over tabs.")
TABS = KnownMemory(id="tabs", type="preference", content="The user prefers tabs over spaces.")
DB = KnownMemory(id="db", type="preference", content="Billing uses PostgreSQL.")


def anthropic(api: NativeApi, **more: Any) -> dict[str, Any]:
    return {"provider": "anthropic", "base_url": api.url, "api_key": ANTHROPIC_KEY, **more}


def google(api: NativeApi, **more: Any) -> dict[str, Any]:
    return {"provider": "google", "base_url": api.url, "api_key": GOOGLE_KEY, **more}


NATIVE = {"anthropic": anthropic, "google": google}


@pytest.fixture(params=["anthropic", "google"])
def kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def api(kind: str, claude: NativeApi, gemini: NativeApi) -> NativeApi:
    return claude if kind == "anthropic" else gemini


def test_extraction_and_the_judge_through_each_sdk(build: Build, kind: str, api: NativeApi) -> None:
    extractor = build(NATIVE[kind](api))
    assert {m.type for m in extractor.extract(CHAT)} == {"preference", "decision"}
    verdicts = extractor.judge_memories(
        NEW, [JudgeCandidate(TABS, 0.1), JudgeCandidate(DB, 0.4)], LifecycleConfig()
    )
    assert [v.relation for v in verdicts] == ["supersedes", "distinct"]
    assert all(v.reason.startswith("llm:") for v in verdicts)
    assert extractor.find_contradictions(NEW, [TABS, DB]) == ["tabs"]
    assert extractor.last_error is None and api.statuses() == [200, 200, 200]


def test_anthropic_is_asked_for_json_through_a_forced_tool(build: Build, claude: NativeApi) -> None:
    build(anthropic(claude)).extract(CHAT)
    seen = claude.requests[0]
    body = seen.body
    assert seen.headers["anthropic-version"] and "x-api-key" not in seen.headers
    assert body["model"] == "claude-haiku-4-5" and body["max_tokens"] == 2000
    assert "temperature" not in body and body["system"].startswith("You ")
    assert [m["role"] for m in body["messages"]] == ["user"]
    (tool,) = body["tools"]
    assert body["tool_choice"] == {"type": "tool", "name": tool["name"]}
    assert tool["input_schema"]["required"] == ["memories"]


def test_gemini_is_asked_for_json_with_a_response_schema(build: Build, gemini: NativeApi) -> None:
    build(google(gemini)).judge_memories(NEW, [JudgeCandidate(TABS, 0.1)], LifecycleConfig())
    seen = gemini.requests[0]
    assert seen.path == "/v1/models/gemini-2.5-flash:generateContent"
    config = seen.body["generationConfig"]
    assert config["responseMimeType"] == "application/json"
    assert config["responseJsonSchema"]["required"] == ["verdicts"]
    assert config["temperature"] == 0 and config["maxOutputTokens"] == 2000
    assert seen.body["systemInstruction"]["parts"][0]["text"].startswith("You judge how")


@pytest.mark.parametrize("status", [429, 500, 503, 529])
def test_busy_and_failing_servers_are_retried_with_backoff_and_retry_after(
    build: Build, kind: str, api: NativeApi, waits: list[float], status: int
) -> None:
    api.enqueue(Reply(status, {"Retry-After": "2"}), Reply(status))
    found = build(NATIVE[kind](api)).extract(CHAT)
    assert found and api.statuses() == [status, status, 200]
    assert waits == [2.0, 0.75]  # the server's Retry-After, then equal jitter of 0.5 * 2


def test_a_server_that_stays_down_is_given_up_after_the_retries(
    build: Build, kind: str, api: NativeApi, waits: list[float]
) -> None:
    api.down(503)
    extractor = build(NATIVE[kind](api), max_retries=2)
    assert extractor.extract(CHAT) == [] and len(api.requests) == 3
    assert "HTTP 503" in (extractor.last_error or "") and "after 3 attempts" in (
        extractor.last_error or ""
    )


def test_an_answer_that_is_not_json_moves_to_the_next_provider_at_once(
    build: Build, kind: str, api: NativeApi, fake: FakeChat
) -> None:
    api.enqueue(Reply(content="Sure! Here are your memories: tabs."))
    extractor = build(NATIVE[kind](api), {"name": "openai", "base_url": fake.url, "api_key": KEY})
    assert extractor.extract(CHAT) and len(api.requests) == 1 and len(fake.requests) == 1
    fenced = '```json\n{"memories": [{"type": "decision", "content": "Use Go 1.22."}]}\n```'
    api.enqueue(Reply(content=fenced))  # prose around JSON is read as the OpenAI path reads it
    assert [m.content for m in build(NATIVE[kind](api)).extract(CHAT)] == ["Use Go 1.22."]


def test_a_broken_body_is_retried_as_a_malformed_response(
    build: Build, kind: str, api: NativeApi
) -> None:
    api.enqueue(Reply(200, body=b"<html>gateway</html>"))
    extractor = build(NATIVE[kind](api))
    assert extractor.extract(CHAT) and api.statuses() == [200, 200]


def test_each_attempt_is_a_ledger_row_with_the_sdks_token_counts_and_cost(
    build: Build, kind: str, api: NativeApi, tmp_path: Path
) -> None:
    api.enqueue(Reply(429))
    extractor = build(NATIVE[kind](api, name="native"), max_retries=1)
    extractor.extract(CHAT)
    extractor.close()
    with UsageLedger(tmp_path / "usage.sqlite") as ledger:
        (row,) = ledger.summary(("provider", "model", "operation"))
    model = "claude-haiku-4-5" if kind == "anthropic" else "gemini-2.5-flash"
    assert (row.provider, row.model, row.operation) == ("native", model, "extract")
    assert row.requests == 2 and row.errors == 1
    answered = api.requests[1]
    assert answered.status == 200 and row.input_tokens > 0 and row.output_tokens > 0
    price_in, price_out = ProviderOptions.model_validate({"provider": kind}).prices()
    assert price_in is not None and price_out is not None
    expected = (row.input_tokens * price_in + row.output_tokens * price_out) / 1e6
    assert row.cost_usd == pytest.approx(expected)


def test_the_ledger_counts_the_tokens_the_server_reports(
    build: Build, claude: NativeApi, gemini: NativeApi, tmp_path: Path
) -> None:
    build(anthropic(claude, name="a")).extract(CHAT)
    build(google(gemini, name="g")).extract(CHAT)
    with UsageLedger(tmp_path / "usage.sqlite") as ledger:
        rows = {r.provider: r for r in ledger.summary(("provider",))}
    # The SDKs' usage fields carry the fakes' counts to the ledger, not engram's estimate.
    for name, api in (("a", claude), ("g", gemini)):
        body = api.requests[0].body
        text = (
            body["system"] + body["messages"][0]["content"]
            if name == "a"
            else body["systemInstruction"]["parts"][0]["text"]
            + body["contents"][0]["parts"][0]["text"]
        )
        assert rows[name].input_tokens == reported_tokens(text)


def test_a_missing_key_names_the_variable_and_the_next_provider_answers(
    build: Build, kind: str, api: NativeApi, fake: FakeChat, monkeypatch: pytest.MonkeyPatch
) -> None:
    for variable in ("ANTHROPIC_API_KEY", "GOOGLE_API_KEY", "GEMINI_API_KEY"):
        monkeypatch.delenv(variable, raising=False)
    nokey = {"provider": kind, "base_url": api.url}
    alone = build(nokey)
    assert alone.extract(CHAT) == [] and api.requests == []
    variable = "ANTHROPIC_API_KEY" if kind == "anthropic" else "GEMINI_API_KEY"
    assert variable in (alone.last_error or "")
    both = build(nokey, {"name": "openai", "base_url": fake.url, "api_key": KEY})
    assert both.extract(CHAT) and len(fake.requests) == 1


@pytest.mark.parametrize("variable", ["GOOGLE_API_KEY", "GEMINI_API_KEY"])
def test_google_reads_its_key_where_the_sdk_does(
    build: Build, gemini: NativeApi, monkeypatch: pytest.MonkeyPatch, variable: str
) -> None:
    for name in ("GOOGLE_API_KEY", "GEMINI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv(variable, GOOGLE_KEY)
    assert build({"provider": "google", "base_url": gemini.url}).extract(CHAT)
    assert gemini.requests[0].auth_ok


def test_a_rejected_key_is_not_retried_and_never_shown(
    build: Build, kind: str, api: NativeApi, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    wrong = "sk-wrong-native-key-that-must-not-leak"
    extractor = build(NATIVE[kind](api, api_key=wrong))
    with caplog.at_level(logging.DEBUG):
        assert extractor.extract(CHAT) == []
    error = extractor.last_error or ""
    assert len(api.requests) == 1 and "the key was rejected" in error
    assert ("ANTHROPIC_API_KEY" if kind == "anthropic" else "_API_KEY") in error
    assert wrong not in caplog.text and wrong not in error
    assert wrong.encode() not in (tmp_path / "usage.sqlite").read_bytes()


def test_anthropic_down_falls_back_to_openai_in_order(
    build: Build, claude: NativeApi, gemini: NativeApi, fake: FakeChat, waits: list[float]
) -> None:
    claude.down(529)
    extractor = build(
        anthropic(claude),
        {"name": "openai", "base_url": fake.url, "api_key": KEY},
        google(gemini),
        max_retries=1,
    )
    assert {m.type for m in extractor.extract(CHAT)} == {"preference", "decision"}
    assert claude.statuses() == [529, 529] and len(fake.requests) == 1 and gemini.requests == []
    claude.stop()  # now refusing connections: still the next provider
    assert extractor.extract(CHAT) and len(fake.requests) == 2


def test_a_slow_native_server_times_out(
    build: Build, kind: str, api: NativeApi, fake: FakeChat
) -> None:
    api.always = Reply(delay=2.0)
    extractor = build(
        NATIVE[kind](api),
        {"name": "openai", "base_url": fake.url, "api_key": KEY},
        timeout=1.0,
        max_retries=0,
    )
    assert extractor.extract(CHAT) and len(fake.requests) == 1


def test_options_give_each_provider_its_model_and_key_variable() -> None:
    options = LLMOptions.model_validate(
        {"providers": [{"provider": "anthropic"}, {"provider": "google"}, {}]}
    )
    models = [p.model for p in options.providers]
    assert models == ["claude-haiku-4-5", "gemini-2.5-flash", "gpt-4o-mini"]
    assert [p.label() for p in options.providers] == ["anthropic", "google", "openai"]
    chosen = ProviderOptions.model_validate({"provider": "anthropic", "model": "claude-opus-4-5"})
    assert chosen.model == "claude-opus-4-5" and chosen.prices() == (5.0, 25.0)
    with pytest.raises(ValueError, match="provider"):
        ProviderOptions.model_validate({"provider": "cohere"})


def test_an_unused_sdk_is_never_imported() -> None:
    code = (
        "import sys\n"
        "from engram_llm.extractor import LLMExtractor\n"
        "from engram_llm import LLMOptions\n"
        "x = LLMExtractor(LLMOptions(record_usage=False))\n"
        "x.close()\n"
        "print(json.dumps(['anthropic' in sys.modules, 'google.genai' in sys.modules]))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", "import json\n" + code],
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    )
    assert json.loads(out.stdout) == [False, False]


def test_the_docs_examples_are_valid_options() -> None:
    """Every ``[extractor]`` example in the extractor's page and the configuration page is a
    valid ``llm`` configuration, so what the docs tell users to write is accepted."""
    import re
    import tomllib

    root = Path(__file__).resolve().parents[3] / "docs"
    checked = 0
    for page in (root / "extractors" / "llm.md", root / "configuration.md"):
        for block in re.findall(r"```toml\n(.*?)```", page.read_text(), re.DOTALL):
            section = tomllib.loads(block).get("extractor")
            if not section or section.get("provider") != "llm":
                continue
            options = LLMOptions.model_validate(
                {k: v for k, v in section.items() if k != "provider"}
            )
            assert options.providers
            checked += 1
    assert checked >= 2
