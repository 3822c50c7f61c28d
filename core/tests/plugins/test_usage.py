"""The usage ledger, the metered request (retries), token budgets and ``engram usage``."""

from __future__ import annotations

import json
import logging
import sqlite3
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import SecretStr

from engram.cli import main
from engram.errors import ConfigError, EmbedderError, MissingKeyError, StoreError
from engram.usage import (
    ApiOptions,
    Failure,
    MalformedResponse,
    Meter,
    RequestLimits,
    RetryPolicy,
    Tokens,
    UsageLedger,
    clean_text,
    embed_in_requests,
    parse_retry_after,
    plan_requests,
    price_for,
    resolve_api_key,
    split_text,
    token_bound,
)

DAY1 = datetime(2025, 3, 1, 12, tzinfo=UTC).timestamp()
DAY2 = datetime(2025, 3, 2, 9, tzinfo=UTC).timestamp()


# -- the ledger -------------------------------------------------------------------------------


@pytest.fixture
def ledger(tmp_path: Path) -> Iterator[UsageLedger]:
    book = UsageLedger(tmp_path / "usage.sqlite")
    yield book
    book.close()


def test_summary_groups_by_day_provider_and_model(ledger: UsageLedger) -> None:
    ledger.record("openai", "text-embedding-3-small", 1000, 1, 0.00002, 120.0, None, at=DAY1)
    ledger.record("openai", "text-embedding-3-small", 0, 1, None, 30.0, "HTTP 429", at=DAY1)
    ledger.record("openai", "text-embedding-3-small", 500, 1, 0.00001, 60.0, None, at=DAY2)
    ledger.record("voyage", "voyage-3.5", 2000, 1, 0.00012, 90.0, None, at=DAY2)
    ledger.record("openai", "nomic-embed-text", 300, 1, None, 10.0, None, at=DAY2)
    rows = ledger.summary()
    keys = [(r.day, r.provider, r.model) for r in rows]
    assert keys == [
        ("2025-03-01", "openai", "text-embedding-3-small"),
        ("2025-03-02", "openai", "nomic-embed-text"),
        ("2025-03-02", "openai", "text-embedding-3-small"),
        ("2025-03-02", "voyage", "voyage-3.5"),
    ]
    first = rows[0]
    assert (first.requests, first.errors, first.input_tokens) == (2, 1, 1000)
    assert first.cost_usd == pytest.approx(0.00002) and first.avg_latency_ms == pytest.approx(75)
    unpriced = rows[1]
    assert unpriced.cost_usd is None and unpriced.unpriced_requests == 1
    by_provider = ledger.summary(["provider"])
    assert [(r.provider, r.requests, r.input_tokens) for r in by_provider] == [
        ("openai", 4, 1800),
        ("voyage", 1, 2000),
    ]
    total = ledger.summary(())[0]
    assert (total.requests, total.errors, total.input_tokens) == (5, 1, 3800)
    assert total.cost_usd == pytest.approx(0.00015) and total.unpriced_requests == 2


def test_since_keeps_later_requests_only(ledger: UsageLedger) -> None:
    ledger.record("openai", "m", 10, at=DAY1)
    ledger.record("openai", "m", 20, at=DAY2)
    assert ledger.summary((), since=DAY2 - 1)[0].input_tokens == 20


def test_an_unknown_grouping_is_refused(ledger: UsageLedger) -> None:
    with pytest.raises(ConfigError, match="day, provider, model"):
        ledger.summary(["provider; DROP TABLE requests"])  # type: ignore[list-item]


def test_a_missing_ledger_reads_as_empty_and_is_not_created(tmp_path: Path) -> None:
    book = UsageLedger(tmp_path / "nowhere" / "usage.sqlite")
    assert book.summary() == []
    assert book.summary(())[0].requests == 0
    assert not (tmp_path / "nowhere").exists()


def test_an_unwritable_ledger_warns_once_and_never_stops_the_caller(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    (tmp_path / "dir.sqlite").mkdir()
    book = UsageLedger(tmp_path / "dir.sqlite")
    for _ in range(3):
        book.record("openai", "m", 1)
    assert book.write_errors == 3
    assert len([r for r in caplog.records if "usage ledger" in r.getMessage()]) == 1


def test_a_ledger_from_a_newer_engram_is_refused_with_the_fix(tmp_path: Path) -> None:
    import sqlite3

    path = tmp_path / "usage.sqlite"
    with sqlite3.connect(path) as db:
        db.execute("PRAGMA user_version = 99")
    with pytest.raises(StoreError, match="newer engram"):
        UsageLedger(path).summary()


def test_threads_and_two_handles_record_every_request(tmp_path: Path) -> None:
    path = tmp_path / "usage.sqlite"
    books = [UsageLedger(path), UsageLedger(path)]

    def work(book: UsageLedger) -> None:
        for _ in range(50):
            book.record("openai", "m", 1)

    threads = [threading.Thread(target=work, args=(books[i % 2],)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert books[0].summary(())[0].requests == 400
    for book in books:
        book.close()


def test_prices_come_from_the_table_unless_overridden() -> None:
    assert price_for("openai", "text-embedding-3-small") == 0.02
    assert price_for("voyage", "voyage-3.5", 0.5) == 0.5
    assert price_for("openai", "llama-embed") is None


# -- retries --------------------------------------------------------------------------------------


@given(
    retry=st.integers(0, 30),
    unit=st.floats(0, 1, exclude_max=True),
    base=st.floats(0.001, 5),
    cap=st.floats(0.001, 60),
)
def test_backoff_grows_is_capped_and_jittered(
    retry: int, unit: float, base: float, cap: float
) -> None:
    policy = RetryPolicy(base_delay=base, max_delay=cap)
    ceiling = min(cap, base * 2.0**retry)
    wait = policy.delay(retry, None, unit)
    assert wait is not None and ceiling / 2 <= wait <= ceiling


def test_retry_after_is_waited_unless_longer_than_the_cap() -> None:
    policy = RetryPolicy(max_retry_after=30)
    assert policy.delay(3, 12.5, 0.9) == 12.5
    assert policy.delay(0, 31, 0.0) is None


def test_retry_after_headers_are_read_in_every_form() -> None:
    def lookup(headers: dict[str, str]):  # type: ignore[no-untyped-def]
        return lambda name: headers.get(name)

    assert parse_retry_after(lookup({"retry-after-ms": "1500"})) == 1.5
    assert parse_retry_after(lookup({"retry-after": "4"})) == 4.0
    later = datetime.now(UTC) + timedelta(seconds=120)
    from_date = parse_retry_after(lookup({"retry-after": format_datetime(later, usegmt=True)}))
    assert from_date is not None and 100 < from_date <= 120
    assert parse_retry_after(lookup({"retry-after": "soon"})) is None
    assert parse_retry_after(lookup({})) is None


class Flaky:
    """A request that fails with the given exceptions first, then answers."""

    def __init__(self, *failures: Exception) -> None:
        self.failures = list(failures)
        self.calls = 0

    def __call__(self) -> tuple[str, int]:
        self.calls += 1
        if self.failures:
            raise self.failures.pop(0)
        return "answer", 42


def classify(exc: Exception) -> Failure:
    if isinstance(exc, TimeoutError):
        return Failure("timeout", "timed out", retryable=True)
    if isinstance(exc, PermissionError):
        return Failure("HTTP 401", f"rejected: {exc}", retryable=False)
    return Failure("HTTP 429", "slow down", retryable=True, retry_after=float(str(exc) or 0))


def make_meter(ledger: UsageLedger | None, waits: list[float], **policy: float) -> Meter:
    return Meter(
        provider="acme",
        model="embed-1",
        classify=classify,
        ledger=ledger,
        price_per_million=2.0,
        policy=RetryPolicy(**policy),  # type: ignore[arg-type]
        secrets=("sk-SECRET",),
        sleep=waits.append,
        random=lambda: 0.5,
    )


def test_the_meter_retries_and_records_every_attempt(ledger: UsageLedger) -> None:
    waits: list[float] = []
    meter = make_meter(ledger, waits, base_delay=1.0)
    request = Flaky(TimeoutError(), MalformedResponse("half a body"), ValueError("2"))
    assert meter.call(request, texts=3) == "answer"
    assert request.calls == 4
    assert waits == [0.75, 1.5, 2.0]  # jittered backoff, backoff, then the server's Retry-After
    total = ledger.summary(())[0]
    assert (total.requests, total.errors, total.input_tokens) == (4, 3, 42)
    assert total.cost_usd == pytest.approx(42 * 2.0 / 1e6)


def test_a_final_failure_is_an_engram_error_with_the_secret_scrubbed(ledger: UsageLedger) -> None:
    waits: list[float] = []
    meter = make_meter(ledger, waits)
    with pytest.raises(
        EmbedderError, match=r"acme/embed-1 failed on 1 text: rejected: key \*\*\* is wrong"
    ):
        meter.call(Flaky(PermissionError("key sk-SECRET is wrong")), texts=1)
    assert waits == []
    with pytest.raises(EmbedderError, match="after 3 attempts") as info:
        make_meter(ledger, waits, max_retries=2).call(Flaky(*[TimeoutError()] * 5), texts=2)
    assert "try again later" in str(info.value)
    with pytest.raises(EmbedderError, match="asked to wait 120 s"):
        make_meter(ledger, waits).call(Flaky(ValueError("120")), texts=2)
    assert b"sk-SECRET" not in ledger.path.read_bytes()


def test_chat_requests_record_output_tokens_operation_and_both_prices(
    ledger: UsageLedger,
) -> None:
    meter = make_meter(ledger, [])
    meter.output_price_per_million = 8.0
    answer = meter.call(lambda: ("ok", Tokens(1000, 250)), operation="extract")
    assert answer == "ok"
    meter.call(lambda: ("ok", Tokens(10, 5)), operation="contradict")
    rows = {r.operation: r for r in ledger.summary(("operation",))}
    assert set(rows) == {"extract", "contradict"}
    assert (rows["extract"].input_tokens, rows["extract"].output_tokens) == (1000, 250)
    assert rows["extract"].cost_usd == pytest.approx((1000 * 2.0 + 250 * 8.0) / 1e6)
    meter.output_price_per_million = None  # output billed at an unknown price: cost unknown
    meter.call(lambda: ("ok", Tokens(10, 5)), operation="condense")
    assert ledger.summary(("operation",))[0].operation == "condense"
    assert ledger.summary(("operation",))[0].cost_usd is None


def test_a_version_1_ledger_is_migrated_and_keeps_its_rows(tmp_path: Path) -> None:
    path = tmp_path / "usage.sqlite"
    old = sqlite3.connect(path)
    old.executescript(
        "CREATE TABLE requests (id INTEGER PRIMARY KEY, at REAL NOT NULL, provider TEXT NOT "
        "NULL, model TEXT NOT NULL, input_tokens INTEGER NOT NULL, requests INTEGER NOT NULL, "
        "cost_usd REAL, latency_ms REAL NOT NULL, error TEXT);"
        "INSERT INTO requests (at, provider, model, input_tokens, requests, cost_usd, "
        "latency_ms) VALUES (1.0, 'openai', 'm', 70, 1, 0.1, 5.0);"
        "PRAGMA user_version = 1;"
    )
    old.close()
    with UsageLedger(path) as book:
        book.record("llm", "chat", 5, output_tokens=3, operation="extract")
        rows = {r.operation: r for r in book.summary(("operation",))}
    assert (rows["embed"].input_tokens, rows["embed"].output_tokens) == (70, 0)
    assert (rows["extract"].input_tokens, rows["extract"].output_tokens) == (5, 3)


def test_the_meter_works_without_a_ledger() -> None:
    assert make_meter(None, []).call(Flaky(TimeoutError()), texts=1) == "answer"


# -- token budgets ---------------------------------------------------------------------------------

texts = st.text(st.characters(codec="utf-8"), max_size=400)


@settings(max_examples=200)
@given(text=texts, budget=st.integers(16, 120))
def test_split_text_covers_the_text_in_pieces_within_the_budget(text: str, budget: int) -> None:
    pieces = split_text(text, budget)
    assert "".join(pieces) == text
    assert all(token_bound(p) <= budget for p in pieces)
    assert all(pieces) or pieces == [""]
    first = split_text(text, budget, max_pieces=1)
    assert first == pieces[:1]


def test_split_text_prefers_whitespace() -> None:
    pieces = split_text("alpha beta gamma delta epsilon", 16)
    assert pieces == ["alpha beta ", "gamma delta ", "epsilon"]
    with pytest.raises(ConfigError, match="too small"):
        split_text("x", 4)


@given(
    sizes=st.lists(st.integers(1, 50), max_size=60),
    max_inputs=st.integers(1, 10),
    max_tokens=st.integers(50, 200),
)
def test_plan_requests_fills_each_request_within_the_limits(
    sizes: list[int], max_inputs: int, max_tokens: int
) -> None:
    groups = plan_requests(sizes, max_inputs, max_tokens)
    assert [i for g in groups for i in g] == list(range(len(sizes)))
    for n, g in enumerate(groups):
        following = groups[n + 1] if n + 1 < len(groups) else None
        assert len(g) <= max_inputs and sum(sizes[i] for i in g) <= max_tokens
        if following is not None:  # greedy: the next text would not have fitted
            full = len(g) == max_inputs
            assert full or sum(sizes[i] for i in g) + sizes[following.start] > max_tokens


def test_a_text_larger_than_a_request_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="max_input_tokens"):
        plan_requests([10, 500], 10, 100)


def test_clean_text_makes_texts_an_api_accepts() -> None:
    assert clean_text("") == " "
    assert clean_text("a\ud800b") == "a\ufffdb"
    assert clean_text("ok") == "ok"


def test_embed_in_requests_batches_truncates_splits_and_keeps_order() -> None:
    sent: list[list[str]] = []

    def send(batch: list[str]) -> tuple[list[list[float]], int]:
        sent.append(batch)
        return [[1.0, float(len(t))] for t in batch], len(batch)

    limits = RequestLimits(max_inputs=2, max_request_tokens=64, max_input_tokens=16)
    meter = Meter("acme", "embed-1", classify=classify)
    long = "word " * 8  # 40 bytes: three pieces at 16
    vectors = embed_in_requests(
        ["a", long, "b"], send, meter=meter, limits=limits, long_texts="split", dimension=2
    )
    assert [len(b) for b in sent] == [2, 2, 1]  # five pieces, two per request
    assert vectors[0] == [1.0, 1.0] and vectors[2] == [1.0, 1.0]
    assert abs(sum(x * x for x in vectors[1]) - 1.0) < 1e-9  # the average, scaled to length 1
    sent.clear()
    embed_in_requests([long], send, meter=meter, limits=limits, long_texts="truncate", dimension=2)
    assert sent == [["word word word "]]
    with pytest.raises(EmbedderError, match="set the embedder's dimension"):
        embed_in_requests(["a"], send, meter=meter, limits=limits, long_texts="split", dimension=3)


def test_a_short_answer_is_retried_as_malformed() -> None:
    answers = [[[1.0]], [[1.0], [2.0]]]

    def send(batch: list[str]) -> tuple[list[list[float]], int]:
        return answers.pop(0), 1

    waits: list[float] = []
    meter = Meter("acme", "embed-1", classify=classify, sleep=waits.append)
    limits = RequestLimits(10, 100, 50)
    got = embed_in_requests(
        ["a", "b"], send, meter=meter, limits=limits, long_texts="truncate", dimension=1
    )
    assert got == [[1.0], [2.0]] and len(waits) == 1


# -- options and keys ------------------------------------------------------------------------------


def test_the_key_comes_from_the_option_then_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ACME_KEY", " from-env ")
    assert resolve_api_key(SecretStr("from-option"), "ACME_KEY", "Acme") == "from-option"
    assert resolve_api_key(None, "ACME_KEY", "Acme") == "from-env"
    monkeypatch.delenv("ACME_KEY")
    with pytest.raises(MissingKeyError, match="export ACME_KEY="):
        resolve_api_key(SecretStr("  "), "ACME_KEY", "Acme")


def test_options_override_the_model_limits() -> None:
    model = RequestLimits(max_inputs=100, max_request_tokens=1000, max_input_tokens=500)
    assert ApiOptions(max_inputs_per_request=7).limits(model) == RequestLimits(7, 1000, 500)
    with pytest.raises(ConfigError, match="lower max_input_tokens"):
        ApiOptions(max_input_tokens=2000).limits(model)
    assert "secret" not in repr(ApiOptions(api_key=SecretStr("secret")))
    assert ApiOptions(record_usage=False).open_ledger() is None


# -- engram usage ----------------------------------------------------------------------------------


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("ENGRAM_USER_CONFIG", str(tmp_path / "user.toml"))
    monkeypatch.delenv("ENGRAM_CONFIG", raising=False)
    (tmp_path / "engram.toml").write_text('[embedder]\nprovider = "hash"\n', encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_usage_prints_a_table_by_day_provider_and_model(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with UsageLedger(project / ".engram" / "usage.sqlite") as book:
        book.record("openai", "text-embedding-3-small", 1200, 1, 0.000024, 80, None, at=DAY1)
        book.record("openai", "text-embedding-3-small", 0, 1, None, 5, "HTTP 503", at=DAY1)
        book.record("voyage", "voyage-3.5", 800, 1, 0.000048, 90, None, at=DAY2)
    code, out, _ = run(capsys, "usage")
    assert code == 0
    lines = out.splitlines()
    row = next(line for line in lines if "text-embedding-3-small" in line)
    assert "2025-03-01" in row and "openai" in row and "1,200" in row and "0.000024" in row
    assert row.split()[3:6] == ["embed", "2", "1"]  # operation, requests, errors
    total = next(line for line in lines if line.strip().startswith("total"))
    assert "3" in total.split() and "2,000" in total and "0.000072" in total

    code, out, _ = run(capsys, "usage", "--json", "--by", "provider")
    data = json.loads(out)
    assert [(r["provider"], r["requests"]) for r in data["rows"]] == [("openai", 2), ("voyage", 1)]
    assert data["total"]["input_tokens"] == 2000 and data["total"]["errors"] == 1

    code, out, _ = run(capsys, "usage", "--json", "--since", "2025-03-02")
    assert json.loads(out)["total"]["requests"] == 1
    code, out, _ = run(capsys, "usage", "--json", "--since", "1d")
    assert json.loads(out)["total"]["requests"] == 0


def test_usage_finds_the_embedders_ledger_path_option(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (project / "engram.toml").write_text(
        '[embedder]\nprovider = "openai"\nledger_path = "logs/api.sqlite"\n', encoding="utf-8"
    )
    with UsageLedger(project / "logs" / "api.sqlite") as book:
        book.record("openai", "text-embedding-3-small", 10, at=time.time())
    code, out, _ = run(capsys, "usage", "--json")
    assert code == 0 and json.loads(out)["total"]["requests"] == 1
    assert json.loads(out)["ledger"] == str(project / "logs" / "api.sqlite")


def test_usage_without_a_ledger_says_so_and_bad_flags_are_one_line_errors(
    project: Path, capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING)
    code, out, _ = run(capsys, "usage")
    assert code == 0 and "no API usage recorded" in out
    assert not (project / ".engram").exists()
    code, _, err = run(capsys, "usage", "--since", "last tuesday")
    assert code == 1 and "7d" in err and len(err.strip().splitlines()) == 1
    code, _, err = run(capsys, "usage", "--by", "week")
    assert code == 1 and "day, provider, model" in err
