"""The OpenAI embedder against a server that speaks the real wire format: retries, limits, keys,
and a ledger that agrees with what the server saw."""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path

import openai
import pytest
from pydantic import SecretStr, ValidationError

from engram import (
    ConfigError,
    EmbedderError,
    MissingKeyError,
    UsageLedger,
    load_config,
    plugin_options,
    token_bound,
)
from engram.testing.data import cosine
from engram.testing.host import build_registry, get_plugin_manager
from engram_openai import OpenAIOptions
from engram_openai.embedder import OpenAIEmbedder
from fake_apis import (
    FakeOpenAI,
    OpenAIEmbeddings,
    Reply,
    StartApi,
    count_tokens,
    embedded_inputs,
)

MakeEmbedder = Callable[..., OpenAIEmbedder]


def ledger_total(path: Path) -> tuple[int, int, int]:
    """(requests, errors, input tokens) recorded in the ledger."""
    total = UsageLedger(path).summary(())[0]
    return total.requests, total.errors, total.input_tokens


def billed(fake: FakeOpenAI) -> int:
    """Tokens the server reported for the requests it answered normally."""
    return sum(count_tokens(t) for t in embedded_inputs(fake))


# -- retries ----------------------------------------------------------------------------------


def test_429_with_retry_after_is_retried_after_the_wait_the_server_asked_for(
    fake: FakeOpenAI, make: MakeEmbedder, waits: list[float], ledger_path: Path
) -> None:
    embedder = make(dimension=64)
    fake.enqueue(Reply(429, {"Retry-After": "7"}))
    vectors = embedder.embed(["retry me"])
    assert len(vectors) == 1 and len(vectors[0]) == 64
    assert fake.statuses() == [429, 200]
    assert waits == [7.0]
    assert ledger_total(ledger_path) == (2, 1, billed(fake))


def test_retry_after_ms_is_honoured(
    fake: FakeOpenAI, make: MakeEmbedder, waits: list[float]
) -> None:
    fake.enqueue(Reply(429, {"retry-after-ms": "250"}))
    make(dimension=64).embed(["x"])
    assert waits == [0.25]


def test_server_errors_timeouts_and_malformed_answers_are_retried_with_growing_jittered_waits(
    fake: FakeOpenAI, make: MakeEmbedder, waits: list[float], ledger_path: Path
) -> None:
    embedder = make(dimension=64, timeout=1.0, retry_base_delay=0.01, retry_max_delay=0.05)
    expected = embedder.embed(["flaky"])
    fake.clear()
    fake.enqueue(
        Reply(500),
        Reply(502),
        Reply(200, body=b'{"object": "list", "data": [{"object": "embedd'),
        Reply(200, body=b"<html>bad gateway</html>", headers={"Content-Type": "text/html"}),
        Reply(delay=30.0),  # longer than the client's timeout
    )
    vectors = embedder.embed(["flaky"])
    assert cosine(vectors[0], expected[0]) > 0.9999
    assert len(fake.requests) == 6 and fake.statuses()[-1] == 200
    caps = [min(0.05, 0.01 * 2**n) for n in range(5)]
    assert len(waits) == 5
    for wait, cap in zip(waits, caps, strict=True):
        assert cap / 2 <= wait <= cap
    requests, errors, _ = ledger_total(ledger_path)
    assert (requests, errors) == (7, 5)


def test_401_fails_at_once_with_a_message_about_the_key(
    fake: FakeOpenAI, make: MakeEmbedder, ledger_path: Path
) -> None:
    embedder = make(dimension=64, api_key=SecretStr("sk-wrong-key-1234567890"))
    with pytest.raises(EmbedderError) as info:
        embedder.embed(["hello"])
    message = str(info.value)
    assert "401" in message and "OPENAI_API_KEY" in message and "key" in message
    assert fake.statuses() == [401]
    assert fake.requests[0].auth_sent and not fake.requests[0].auth_ok
    assert ledger_total(ledger_path) == (1, 1, 0)


@pytest.mark.parametrize("status", [400, 404, 422])
def test_client_errors_are_not_retried(fake: FakeOpenAI, make: MakeEmbedder, status: int) -> None:
    fake.enqueue(Reply(status))
    with pytest.raises(EmbedderError, match=f"HTTP {status}"):
        make(dimension=64).embed(["x"])
    assert fake.statuses() == [status]


def test_exhausted_quota_is_not_retried(fake: FakeOpenAI, make: MakeEmbedder) -> None:
    body = (
        b'{"error": {"message": "You exceeded your current quota", "type": '
        b'"insufficient_quota", "param": null, "code": "insufficient_quota"}}'
    )
    fake.enqueue(Reply(429, body=body))
    with pytest.raises(EmbedderError, match="quota"):
        make(dimension=64).embed(["x"])
    assert fake.statuses() == [429]


def test_a_retry_after_beyond_the_cap_fails_at_once_and_says_why(
    fake: FakeOpenAI, make: MakeEmbedder, waits: list[float]
) -> None:
    fake.enqueue(Reply(429, {"Retry-After": "3600"}))
    with pytest.raises(EmbedderError, match="3600 s") as info:
        make(dimension=64, max_retry_after=30).embed(["x"])
    assert "max_retry_after" in str(info.value)
    assert waits == [] and fake.statuses() == [429]


def test_a_server_that_stays_down_fails_after_the_retries_and_every_attempt_is_recorded(
    fake: FakeOpenAI, make: MakeEmbedder, waits: list[float], ledger_path: Path
) -> None:
    fake.down(503)
    with pytest.raises(EmbedderError, match="after 4 attempts") as info:
        make(dimension=64, max_retries=3).embed(["a", "b"])
    assert "try again later" in str(info.value)
    assert fake.statuses() == [503] * 4 and len(waits) == 3
    assert ledger_total(ledger_path) == (4, 4, 0)


def test_an_unreachable_server_is_a_connection_error(
    fake_api: StartApi, waits: list[float], ledger_path: Path
) -> None:
    server = fake_api(OpenAIEmbeddings())
    url = server.url
    server.stop()  # a port that nothing listens on once the server is gone
    embedder = OpenAIEmbedder(
        OpenAIOptions(
            api_key=SecretStr("sk-x"),
            base_url=url,
            dimension=64,
            max_retries=2,
            ledger_path=ledger_path,
        ),
        sleep=waits.append,
    )
    with pytest.raises(EmbedderError, match="cannot connect"):
        embedder.embed(["x"])
    embedder.close()
    assert len(waits) == 2
    assert ledger_total(ledger_path) == (3, 3, 0)


# -- limits -------------------------------------------------------------------------------------


def test_more_texts_than_one_request_may_hold_are_split_in_order(
    fake: FakeOpenAI, make: MakeEmbedder, ledger_path: Path
) -> None:
    texts = [f"note {i} on topic {i % 13}" for i in range(2048 + 300)]
    embedder = make(dimension=32)
    vectors = embedder.embed(texts)
    sizes = [len(r.body["input"]) for r in fake.requests]
    assert sizes == [2048, 300]
    for i in (0, 2047, 2048, len(texts) - 1):
        assert cosine(embedder.embed([texts[i]])[0], vectors[i]) > 0.9999
    assert ledger_total(ledger_path)[0] == len(fake.requests) == 6


def test_token_budget_holds_even_when_every_byte_is_a_token(
    fake_api: StartApi, waits: list[float], tmp_path: Path
) -> None:
    """The worst a byte-level tokenizer can do is one token per byte; engram's budget (UTF-8
    bytes) keeps every request and every text within the API's limits even then."""
    worst = fake_api(OpenAIEmbeddings(token_counter=lambda t: len(t.encode("utf-8"))))
    embedder = OpenAIEmbedder(
        OpenAIOptions(
            api_key=SecretStr(worst.api_key),
            base_url=worst.url,
            dimension=32,
            ledger_path=tmp_path / "u.sqlite",
        ),
        sleep=waits.append,
    )
    texts = ["é" * 4000 + f" {i}" for i in range(100)] + ["word " * 20_000, "🚀" * 5000]
    vectors = embedder.embed(texts)
    embedder.close()
    assert len(vectors) == len(texts)
    assert set(worst.statuses()) == {200} and len(worst.requests) >= 3
    for request in worst.requests:
        sizes = [len(t.encode()) for t in request.body["input"]]
        assert max(sizes) <= 8191 and sum(sizes) <= 300_000


def test_the_fake_refuses_what_the_api_refuses(fake: FakeOpenAI) -> None:
    """Without engram's batching, the SDK's requests over the limits are rejected: the limit
    tests above are not passing by accident."""
    client = openai.OpenAI(api_key=fake.api_key, base_url=fake.url, max_retries=0)
    with pytest.raises(openai.BadRequestError, match="2048"):
        client.embeddings.create(input=["x"] * 2049, model="text-embedding-3-small")
    with pytest.raises(openai.BadRequestError, match="maximum context length"):
        client.embeddings.create(input=["word " * 9000], model="text-embedding-3-small")
    with pytest.raises(openai.BadRequestError, match="dimensions"):
        client.embeddings.create(input=["x"], model="text-embedding-ada-002", dimensions=64)
    with pytest.raises(openai.BadRequestError):
        client.embeddings.create(input=[""], model="text-embedding-3-small")
    client.close()


def test_long_texts_are_truncated_by_default(fake: FakeOpenAI, make: MakeEmbedder) -> None:
    text = "alpha " * 3000  # 18,000 bytes: over the 8191-token budget
    make(dimension=32).embed([text])
    sent = fake.requests[0].body["input"]
    assert len(sent) == 1 and text.startswith(sent[0]) and token_bound(sent[0]) <= 8191


def test_split_mode_embeds_every_piece_and_averages_them(
    fake: FakeOpenAI, make: MakeEmbedder
) -> None:
    text = "alpha " * 1000 + "omega " * 1000  # 12,000 bytes: two pieces at 8191
    vector = make(dimension=32, long_texts="split").embed([text])[0]
    pieces = fake.requests[0].body["input"]
    assert len(pieces) == 2 and "".join(pieces) == text
    parts = make(dimension=32).embed(pieces)
    weights = [len(p.encode()) for p in pieces]
    mean = [sum(w * v[i] for w, v in zip(weights, parts, strict=True)) for i in range(32)]
    norm = sum(x * x for x in mean) ** 0.5
    assert cosine(vector, [x / norm for x in mean]) > 0.9999
    assert abs(sum(x * x for x in vector) - 1.0) < 1e-6


def test_empty_text_is_sent_as_a_space(fake: FakeOpenAI, make: MakeEmbedder) -> None:
    make(dimension=32).embed(["", "x"])
    assert fake.requests[0].body["input"] == [" ", "x"]


# -- wire format --------------------------------------------------------------------------------


def test_requests_follow_the_wire_format(fake: FakeOpenAI, make: MakeEmbedder) -> None:
    make(dimension=256).embed(["a", "b"], input_type="query")
    make().embed(["c"])
    first, second = fake.requests
    assert first.method == "POST" and first.path == "/v1/embeddings"
    assert first.body == {
        "model": "text-embedding-3-small",
        "input": ["a", "b"],
        "dimensions": 256,
        "encoding_format": "base64",
    }
    assert "dimensions" not in second.body  # the native size needs no field
    assert first.auth_sent and first.auth_ok
    assert "authorization" not in first.headers


def test_float_answers_and_shuffled_indexes_are_read(fake_api: StartApi, tmp_path: Path) -> None:
    """A compatible server may ignore base64 and list the data in another order."""
    plain = fake_api(OpenAIEmbeddings(base64_answers=False, reverse_data=True))
    usual = fake_api(OpenAIEmbeddings())
    texts = ["one", "two", "three"]
    got = []
    for server in (plain, usual):
        embedder = OpenAIEmbedder(
            OpenAIOptions(
                api_key=SecretStr(server.api_key),
                base_url=server.url,
                dimension=32,
                ledger_path=tmp_path / "u.sqlite",
            )
        )
        got.append(embedder.embed(texts))
        embedder.close()
    assert plain.requests[0].body["encoding_format"] == "base64"  # asked for, and ignored
    for a, b in zip(*got, strict=True):
        assert cosine(a, b) > 0.9999


def test_a_wrong_dimension_from_the_server_is_a_clear_error(
    fake: FakeOpenAI, tmp_path: Path
) -> None:
    embedder = OpenAIEmbedder(
        OpenAIOptions(
            api_key=SecretStr(fake.api_key),
            base_url=fake.url,
            model="nomic-embed-text",
            dimension=768,
            ledger_path=tmp_path / "u.sqlite",
        )
    )
    with pytest.raises(EmbedderError, match="1536 dims, expected 768"):
        embedder.embed(["x"])
    embedder.close()


# -- options and keys ---------------------------------------------------------------------------


def test_a_missing_key_names_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    # Built without a key (its identity needs none), it says which variable to set on use.
    embedder = OpenAIEmbedder(OpenAIOptions())
    assert (embedder.model, embedder.dimension) == ("text-embedding-3-small", 1536)
    with pytest.raises(MissingKeyError, match="OPENAI_API_KEY"):
        embedder.embed(["x"])
    with pytest.raises(MissingKeyError, match="AZURE_OPENAI_API_KEY"):
        OpenAIEmbedder(OpenAIOptions(api_key_env="AZURE_OPENAI_API_KEY")).embed(["x"])


def test_the_key_comes_from_the_environment(
    fake: FakeOpenAI, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", fake.api_key)
    embedder = OpenAIEmbedder(
        OpenAIOptions(base_url=fake.url, dimension=32, ledger_path=tmp_path / "u.sqlite")
    )
    embedder.embed(["x"])
    embedder.close()
    assert fake.requests[0].auth_ok


def test_the_endpoint_comes_from_openai_base_url_when_not_configured(
    fake: FakeOpenAI, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", fake.url)
    embedder = OpenAIEmbedder(
        OpenAIOptions(
            api_key=SecretStr(fake.api_key), dimension=32, ledger_path=tmp_path / "u.sqlite"
        )
    )
    embedder.embed(["x"])
    embedder.close()
    assert fake.statuses() == [200]


@pytest.mark.parametrize(
    ("options", "problem"),
    [
        ({"model": "text-embedding-ada-002", "dimension": 256}, "always returns 1536"),
        ({"model": "text-embedding-3-small", "dimension": 4096}, "at most 1536"),
        ({"model": "my-local-model"}, "set dimension"),
        ({"max_input_tokens": 5000, "max_request_tokens": 1000}, "lower max_input_tokens"),
        ({"long_texts": "drop"}, "long_texts"),
        ({"base_url": "localhost:11434", "dimension": 64}, "http:// or https://"),
    ],
)
def test_bad_options_say_what_to_change(
    options: dict[str, object], problem: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-x")
    with pytest.raises((ValidationError, ConfigError), match=problem):
        OpenAIEmbedder(OpenAIOptions(**options))


def test_the_key_never_reaches_logs_errors_or_the_ledger(
    fake: FakeOpenAI,
    make: MakeEmbedder,
    ledger_path: Path,
    caplog: pytest.LogCaptureFixture,
    capfd: pytest.CaptureFixture[str],
) -> None:
    caplog.set_level(logging.DEBUG)
    wrong = "sk-wrong-secret-abcdefghijklmnop"
    embedder = make(dimension=32)
    fake.enqueue(Reply(429, {"Retry-After": "1"}), Reply(500))
    embedder.embed(["first"])
    errors = [repr(embedder.options), str(embedder.options)]
    with pytest.raises(EmbedderError) as info:
        make(dimension=32, api_key=SecretStr(wrong)).embed(["second"])
    errors.append(str(info.value))
    fake.down(503)
    with pytest.raises(EmbedderError) as down:
        make(dimension=32, max_retries=1).embed(["third"])
    errors.append(str(down.value))
    out, err = capfd.readouterr()
    stored = b"".join(p.read_bytes() for p in ledger_path.parent.glob(ledger_path.name + "*"))
    assert ledger_total(ledger_path)[0] == len(fake.requests) == 6
    for secret in (fake.api_key, wrong):
        assert secret not in caplog.text
        assert all(secret not in e for e in errors)
        assert secret not in out + err
        assert secret.encode() not in stored


# -- registry and config ------------------------------------------------------------------------


def test_the_plugin_is_registered_and_its_ledger_path_is_relative_to_the_project(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ENGRAM_LOAD_PLUGINS", "engram-openai")
    registry = build_registry(get_plugin_manager())
    entry = registry.get("embedder", "openai")
    assert entry.distribution == "engram-openai"
    config = load_config({"embedder": {"provider": "openai", "dimension": 64}}, start=tmp_path)
    options = plugin_options(
        config, registry, "embedder", "openai", config.embedder.options(), "embedder"
    )
    assert isinstance(options, OpenAIOptions)
    assert options.ledger_path == tmp_path / ".engram" / "usage.sqlite"
