"""The Voyage embedder against a server that speaks the real wire format: input types, sizes,
retries, limits, keys, and a ledger that agrees with what the server saw."""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path

import pytest
from pydantic import SecretStr, ValidationError
from voyageai import error as voyage_error
from voyageai.client import Client

from engram import EmbedderError, MissingKeyError, UsageLedger
from engram.testing.data import cosine
from engram.testing.host import build_registry, get_plugin_manager
from engram_voyage import VoyageOptions
from engram_voyage.embedder import VoyageEmbedder
from fake_apis import (
    FakeVoyage,
    Reply,
    StartApi,
    VoyageEmbeddings,
    count_tokens,
    embedded_inputs,
)

MakeEmbedder = Callable[..., VoyageEmbedder]


def ledger_total(path: Path) -> tuple[int, int, int]:
    """(requests, errors, input tokens) recorded in the ledger."""
    total = UsageLedger(path).summary(())[0]
    return total.requests, total.errors, total.input_tokens


def test_documents_and_queries_are_sent_with_their_input_type_and_differ(
    fake: FakeVoyage, make: MakeEmbedder
) -> None:
    embedder = make(dimension=256)
    document = embedder.embed(["rollback the deploy"], input_type="document")[0]
    query = embedder.embed(["rollback the deploy"], input_type="query")[0]
    assert [r.body["input_type"] for r in fake.requests] == ["document", "query"]
    assert 0.3 < cosine(document, query) < 0.99
    assert fake.requests[0].body == {
        "input": ["rollback the deploy"],
        "model": "voyage-3.5",
        "input_type": "document",
        "truncation": True,
        "output_dtype": None,
        "output_dimension": 256,
        "encoding_format": "base64",
    }
    assert fake.requests[0].auth_sent and fake.requests[0].auth_ok
    assert "authorization" not in fake.requests[0].headers


def test_the_default_size_sends_no_output_dimension(fake: FakeVoyage, make: MakeEmbedder) -> None:
    vectors = make(model="voyage-3.5-lite").embed(["x"])
    assert len(vectors[0]) == 1024 and fake.requests[0].body["output_dimension"] is None


def test_429_with_retry_after_is_retried_after_the_wait_the_server_asked_for(
    fake: FakeVoyage, make: MakeEmbedder, waits: list[float], ledger_path: Path
) -> None:
    fake.enqueue(Reply(429, {"Retry-After": "3"}))
    assert len(make().embed(["retry me"])) == 1
    assert fake.statuses() == [429, 200] and waits == [3.0]
    billed = sum(count_tokens(t) for t in embedded_inputs(fake))
    assert ledger_total(ledger_path) == (2, 1, billed)


def test_server_errors_timeouts_and_malformed_answers_are_retried(
    fake: FakeVoyage, make: MakeEmbedder, waits: list[float], ledger_path: Path
) -> None:
    embedder = make(timeout=1.0, retry_base_delay=0.01, retry_max_delay=0.05)
    fake.enqueue(
        Reply(500),
        Reply(503),
        Reply(200, body=b'{"object": "list", "da'),
        Reply(delay=30.0),  # longer than the client's timeout
    )
    assert len(embedder.embed(["flaky"])[0]) == 1024
    assert fake.statuses() == [500, 503, 200, 200, 200]
    assert len(waits) == 4 and all(0.005 <= w <= 0.05 for w in waits)
    assert ledger_total(ledger_path)[:2] == (5, 4)


def test_401_fails_at_once_with_a_message_about_the_key(
    fake: FakeVoyage, make: MakeEmbedder, ledger_path: Path
) -> None:
    with pytest.raises(EmbedderError) as info:
        make(api_key=SecretStr("pa-wrong-key-0987654321")).embed(["x"])
    assert "401" in str(info.value) and "VOYAGE_API_KEY" in str(info.value)
    assert fake.statuses() == [401] and ledger_total(ledger_path) == (1, 1, 0)


@pytest.mark.parametrize("status", [400, 403, 422])
def test_client_errors_are_not_retried(fake: FakeVoyage, make: MakeEmbedder, status: int) -> None:
    fake.enqueue(Reply(status))
    with pytest.raises(EmbedderError, match=f"HTTP {status}"):
        make().embed(["x"])
    assert fake.statuses() == [status]


def test_a_server_that_stays_down_fails_after_the_retries(
    fake: FakeVoyage, make: MakeEmbedder, waits: list[float], ledger_path: Path
) -> None:
    fake.down(502)
    with pytest.raises(EmbedderError, match="after 3 attempts"):
        make(max_retries=2).embed(["a"])
    assert fake.statuses() == [502] * 3 and len(waits) == 2
    assert ledger_total(ledger_path) == (3, 3, 0)


def test_more_texts_than_one_request_may_hold_are_split_in_order(
    fake: FakeVoyage, make: MakeEmbedder
) -> None:
    texts = [f"note {i} on topic {i % 11}" for i in range(1000 + 150)]
    embedder = make(dimension=256)
    vectors = embedder.embed(texts)
    assert [len(r.body["input"]) for r in fake.requests] == [1000, 150]
    for i in (0, 999, 1000, len(texts) - 1):
        assert cosine(embedder.embed([texts[i]])[0], vectors[i]) > 0.9999


def test_token_budget_per_request_holds_even_when_every_byte_is_a_token(
    fake_api: StartApi, waits: list[float], tmp_path: Path
) -> None:
    worst = fake_api(VoyageEmbeddings(token_counter=lambda t: len(t.encode("utf-8"))))
    embedder = VoyageEmbedder(
        VoyageOptions(
            api_key=SecretStr(worst.api_key),
            base_url=worst.url,
            model="voyage-3-large",
            dimension=256,
            ledger_path=tmp_path / "u.sqlite",
        ),
        sleep=waits.append,
    )
    texts = ["é" * 4000 + f" {i}" for i in range(40)] + ["word " * 20_000]
    assert len(embedder.embed(texts)) == len(texts)
    embedder.close()
    assert set(worst.statuses()) == {200} and len(worst.requests) >= 3
    for request in worst.requests:
        assert sum(len(t.encode()) for t in request.body["input"]) <= 120_000


def test_the_fake_refuses_what_the_api_refuses(fake: FakeVoyage) -> None:
    client = Client(api_key=fake.api_key, base_url=fake.url)
    with pytest.raises(voyage_error.InvalidRequestError, match="batch size"):
        client.embed(["x"] * 1001, model="voyage-3.5")
    with pytest.raises(voyage_error.InvalidRequestError, match="max allowed tokens"):
        client.embed(["word " * 30_000] * 5, model="voyage-3-large")
    with pytest.raises(voyage_error.InvalidRequestError, match="output_dimension"):
        client.embed(["x"], model="voyage-3.5", output_dimension=300)
    with pytest.raises(voyage_error.AuthenticationError):
        Client(api_key="pa-nope", base_url=fake.url).embed(["x"], model="voyage-3.5")


def test_a_missing_key_names_the_variable() -> None:
    # Built without a key (its identity needs none), it says which variable to set on use.
    embedder = VoyageEmbedder(VoyageOptions())
    with pytest.raises(MissingKeyError, match="VOYAGE_API_KEY"):
        embedder.embed(["x"])


@pytest.mark.parametrize(
    ("options", "problem"),
    [
        ({"dimension": 300}, "256, 512, 1024, 2048"),
        ({"model": "voyage-9"}, "set dimension"),
    ],
)
def test_bad_options_say_what_to_change(options: dict[str, object], problem: str) -> None:
    with pytest.raises(ValidationError, match=problem):
        VoyageOptions(**options)


def test_the_key_never_reaches_logs_errors_or_the_ledger(
    fake: FakeVoyage,
    make: MakeEmbedder,
    ledger_path: Path,
    caplog: pytest.LogCaptureFixture,
    capfd: pytest.CaptureFixture[str],
) -> None:
    caplog.set_level(logging.DEBUG)
    wrong = "pa-wrong-secret-abcdefghijklmnop"
    fake.enqueue(Reply(429), Reply(500))
    make().embed(["first"])
    errors = []
    with pytest.raises(EmbedderError) as info:
        make(api_key=SecretStr(wrong)).embed(["second"])
    errors.append(str(info.value))
    out, err = capfd.readouterr()
    stored = b"".join(p.read_bytes() for p in ledger_path.parent.glob(ledger_path.name + "*"))
    assert ledger_total(ledger_path)[0] == len(fake.requests) == 4
    for secret in (fake.api_key, wrong):
        assert secret not in caplog.text and secret not in out + err
        assert all(secret not in e for e in errors)
        assert secret.encode() not in stored


def test_the_plugin_is_registered(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ENGRAM_LOAD_PLUGINS", "engram-voyage")
    entry = build_registry(get_plugin_manager()).get("embedder", "voyage")
    assert entry.distribution == "engram-voyage" and entry.options is VoyageOptions
