"""The llm extractor's own behaviour: fallback, retries and their waits, what each request
carries, malformed and failed answers, keys, privacy, the usage ledger, the plugin entry."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest
from fake_model import KEY, Build

from engram import (
    MEMORY_TYPES,
    EngramError,
    ExtractedMemory,
    JudgesMemories,
    KnownMemory,
    LifecycleConfig,
    Message,
    UsageLedger,
)
from engram import JudgeCandidate as Candidate
from engram.testing.host import build_registry, get_plugin_manager
from engram_llm import LLMOptions
from engram_llm.chat import parse_json
from engram_llm.extractor import LLMExtractor
from engram_llm.prompts import TYPES
from fake_apis import FakeChat, Reply, prompts

CHAT = [
    Message(role="user", content="I prefer tabs over spaces in Go code."),
    Message(role="assistant", content="We decided to use PostgreSQL 15 for billing."),
]


def test_a_failing_provider_is_retried_three_times_then_the_next_one_answers(
    build: Build, down: FakeChat, fake: FakeChat, waits: list[float]
) -> None:
    extractor = build(down, fake)
    found = extractor.extract(CHAT)
    assert {m.type for m in found} == {"preference", "decision"}
    assert [s.status for s in down.requests] == [503, 503, 503, 503]
    assert len(fake.requests) == 1 and extractor.last_error is None
    # equal jitter (random = 0.5): 3/4 of min(10, 0.5 * 2**n)
    assert waits == [0.375, 0.75, 1.5]


def test_backoff_is_capped_at_ten_seconds(build: Build, down: FakeChat, waits: list[float]) -> None:
    build(down, max_retries=6).extract(CHAT)
    assert waits[-1] == pytest.approx(7.5) and max(waits) <= 10  # min(10, 0.5 * 2**5) * 3/4


def test_each_request_asks_for_json_at_temperature_0_within_the_token_cap(
    build: Build, fake: FakeChat
) -> None:
    build(fake).extract(CHAT)
    body = fake.requests[0].body
    assert body["temperature"] == 0 and body["max_tokens"] == 2000
    assert body["response_format"] == {"type": "json_object"} and body["model"] == "gpt-4o-mini"
    system, user = body["messages"]
    assert system["role"] == "system" and all(t in system["content"] for t in TYPES)
    # Every type the extractors look for, described as core's table of memory types says.
    assert {t.name: t.description for t in MEMORY_TYPES if t.extracted} == TYPES
    assert all(f"- {t}: {meaning}" in system["content"] for t, meaning in TYPES.items())
    assert json.loads(user["content"].split("\n", 1)[1])[0]["content"] == CHAT[0].content


def test_a_slow_server_times_out_and_the_next_provider_answers(
    build: Build, down: FakeChat, fake: FakeChat
) -> None:
    slow = down
    slow.always = Reply(delay=2.0)
    extractor = build(slow, fake, timeout=0.3, max_retries=0)
    assert extractor.extract(CHAT)
    assert len(fake.requests) == 1


def test_an_answer_that_is_not_json_moves_on_at_once(
    build: Build, down: FakeChat, fake: FakeChat
) -> None:
    down.always = Reply(content="Sure! Here are your memories: preference, tabs.")
    extractor = build(down, fake)
    assert extractor.extract(CHAT) and len(down.requests) == 1  # not retried: same answer again
    fenced = '```json\n{"memories": [{"type": "decision", "content": "Use Go 1.22."}]}\n```'
    fake.enqueue(Reply(content=fenced))
    assert [m.content for m in build(fake).extract(CHAT)] == ["Use Go 1.22."]


def test_when_every_provider_fails_it_returns_nothing_and_says_why(
    build: Build, down: FakeChat, fake: FakeChat, caplog: pytest.LogCaptureFixture
) -> None:
    fake.always = Reply(content="not json at all")
    extractor = build(down, fake)
    with caplog.at_level(logging.WARNING):
        assert extractor.extract(CHAT) == []
    assert extractor.last_error is not None
    assert "p1:" in extractor.last_error and "HTTP 503" in extractor.last_error
    assert "p2:" in extractor.last_error and "not JSON" in extractor.last_error
    assert "every provider failed" in caplog.text
    new = ExtractedMemory(type="preference", content="The user prefers spaces.")
    assert extractor.find_contradictions(new, [KnownMemory(id="a", content="tabs")]) == []
    assert extractor.condense([KnownMemory(id="s", content="x")]) is None
    fake.always = None
    assert extractor.extract(CHAT) and extractor.last_error is None  # back once one answers


def test_a_missing_key_skips_that_provider_and_names_the_variable(
    build: Build, fake: FakeChat, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ACME_API_KEY", raising=False)
    nokey = {"name": "acme", "base_url": fake.url, "api_key_env": "ACME_API_KEY"}
    extractor = build(nokey, fake)
    assert extractor.extract(CHAT) and len(fake.requests) == 1  # only the second provider
    alone = build(nokey)
    assert alone.extract(CHAT) == [] and "ACME_API_KEY" in (alone.last_error or "")
    local = {"name": "ollama", "base_url": fake.url, "api_key_env": ""}
    fake.api_key = "not-needed"
    assert build(local).extract(CHAT)  # a local server: no key needed


def test_a_rejected_key_is_not_retried_and_never_shown(
    build: Build, fake: FakeChat, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    wrong = "sk-wrong-key-that-must-not-leak"
    extractor = build({"name": "p1", "base_url": fake.url, "api_key": wrong})
    with caplog.at_level(logging.DEBUG):
        assert extractor.extract(CHAT) == []
    assert len(fake.requests) == 1 and "OPENAI_API_KEY" in (extractor.last_error or "")
    assert wrong not in caplog.text and wrong not in (extractor.last_error or "")
    assert wrong.encode() not in (tmp_path / "usage.sqlite").read_bytes()


def test_private_spans_never_reach_a_request(build: Build, fake: FakeChat) -> None:
    secret = "hunter2-PRIVATE-9f8e"
    extractor = build(fake)
    extractor.extract(
        [
            Message(role="user", content=f"I prefer tabs <private>{secret}</private> in Go."),
            Message(
                role="assistant", content=f"<private>a <private>b</private> {secret}</private>"
            ),
        ],
        "summary",
    )
    assert fake.requests and all(secret not in p for p in prompts(fake.requests))


def test_summary_mode_keeps_exactly_one_session_summary(build: Build, fake: FakeChat) -> None:
    many = {
        "memories": [
            {"type": "decision", "content": "We chose Redis."},
            {"type": "session-summary", "content": "A second summary."},
        ]
    }
    fake.enqueue(Reply(content=json.dumps(many)))
    found = build(fake).extract(CHAT, "summary")
    assert [(m.type, m.content) for m in found] == [("session-summary", "We chose Redis.")]


def test_unknown_types_and_broken_items_are_dropped_not_the_answer(
    build: Build, fake: FakeChat
) -> None:
    answer = {
        "memories": [
            {"type": "gossip", "content": "x"},
            {"type": "decision"},
            "not an object",
            {"type": "preference", "content": "The user prefers tabs.", "tags": ["go", 3]},
        ]
    }
    fake.enqueue(Reply(content=json.dumps(answer)))
    found = build(fake).extract(CHAT)
    assert [(m.type, m.content, m.tags) for m in found] == [
        ("preference", "The user prefers tabs.", ["go"])
    ]


def test_contradictions_name_only_candidates(build: Build, fake: FakeChat) -> None:
    extractor = build(fake)
    new = ExtractedMemory(type="preference", content="The user prefers spaces over tabs.")
    old = [
        KnownMemory(id="tabs", type="preference", content="The user prefers tabs."),
        KnownMemory(id="db", type="decision", content="Billing uses PostgreSQL."),
    ]
    assert extractor.find_contradictions(new, old) == ["tabs"]
    fake.enqueue(Reply(content='{"stale": ["db", "somebody-else"]}'))
    assert extractor.find_contradictions(new, old) == ["db"]


def test_the_models_verdicts_go_through_the_judge_interface(build: Build, fake: FakeChat) -> None:
    """One verdict per candidate, in order; one the model leaves out, or names with a relation
    that does not exist, is the offline judge's; with every provider down it raises, so core
    falls back to the offline judge."""
    extractor = build(fake)
    assert isinstance(extractor, JudgesMemories)
    new = ExtractedMemory(type="preference", content="The user prefers spaces over tabs.")
    tabs = KnownMemory(id="tabs", type="preference", content="The user prefers tabs over spaces.")
    db = KnownMemory(id="db", type="preference", content="Billing uses PostgreSQL.")
    rules = LifecycleConfig()
    candidates = [Candidate(tabs, 0.1), Candidate(db, 0.4)]
    verdicts = extractor.judge_memories(new, candidates, rules)
    assert [v.relation for v in verdicts] == ["supersedes", "distinct"]
    fake.enqueue(
        Reply(
            content='{"verdicts": [{"id": "db", "relation": "conflicts"}, '
            '{"id": "tabs", "relation": "nonsense"}]}'
        )
    )
    verdicts = extractor.judge_memories(new, candidates, rules)
    assert [v.relation for v in verdicts] == ["supersedes", "conflicts"]
    assert verdicts[1].reason.startswith("llm:")
    fake.down(503)
    with pytest.raises(EngramError):
        build(fake, max_retries=0).judge_memories(new, candidates, rules)


def test_every_call_is_a_ledger_row_with_tokens_and_cost(
    build: Build, down: FakeChat, fake: FakeChat, tmp_path: Path
) -> None:
    priced = {"price_per_million_input": 1.0, "price_per_million_output": 4.0, "api_key": KEY}
    extractor = build(
        {"name": "down", "base_url": down.url, **priced},
        {"name": "fake", "base_url": fake.url, **priced},
        max_retries=1,
    )
    extractor.extract(CHAT)
    new = ExtractedMemory(type="preference", content="The user prefers spaces over tabs.")
    extractor.find_contradictions(new, [KnownMemory(id="a", type="preference", content="tabs")])
    extractor.condense([KnownMemory(id="s", content="Fixed flaky tests by seeding random.")])
    extractor.close()
    with UsageLedger(tmp_path / "usage.sqlite") as ledger:
        rows = {(r.provider, r.operation): r for r in ledger.summary(("provider", "operation"))}
    assert set(rows) == {
        ("down", "extract"),
        ("down", "contradict"),
        ("down", "condense"),
        ("fake", "extract"),
        ("fake", "contradict"),
        ("fake", "condense"),
    }
    assert all(rows[("down", op)].errors == 2 for op in ("extract", "contradict", "condense"))
    answered = rows[("fake", "extract")]
    assert answered.requests == 1 and answered.errors == 0
    assert answered.input_tokens > 0 and answered.output_tokens > 0
    expected = (answered.input_tokens * 1.0 + answered.output_tokens * 4.0) / 1e6
    assert answered.cost_usd == pytest.approx(expected)


def test_the_plugin_is_found_by_name_with_options_from_config(fake: FakeChat) -> None:
    entry = build_registry(get_plugin_manager()).get("extractor", "llm")
    options = entry.options.model_validate(
        {"providers": [{"base_url": fake.url, "model": "llama3.1", "api_key_env": ""}]}
    )
    assert isinstance(options, LLMOptions) and options.timeout == 30 and options.max_retries == 3
    extractor = entry.build(options)
    assert isinstance(extractor, LLMExtractor) and extractor.providers[0].label == "127.0.0.1"
    extractor.close()
    with pytest.raises(ValueError, match="base_url"):
        entry.options.model_validate({"providers": [{"base_url": "localhost:11434"}]})


def test_parse_json_accepts_fences_and_prose_around_an_object() -> None:
    assert parse_json('{"a": 1}') == {"a": 1}
    assert parse_json('```json\n{"a": 1}\n```') == {"a": 1}
    assert parse_json('Here you go: {"a": [1, 2]} hope it helps') == {"a": [1, 2]}
    assert parse_json("[1]") == [1]
