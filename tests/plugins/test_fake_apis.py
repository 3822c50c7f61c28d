"""The fake provider APIs every HTTP-talking package tests against (tests/fake_apis, the root
conftest's ``fake_api`` fixture): what they check of a request, what tests can script, and
that no server or handler outlives its test."""

from __future__ import annotations

import json
import threading
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import openai
import pytest

from fake_apis import ChatCompletions, OpenAIEmbeddings, Reply, StartApi, VoyageEmbeddings, prompts

ROOT_CONFTEST = Path(__file__).resolve().parents[2] / "conftest.py"


def call(
    url: str, body: Any = None, *, key: str | None = None, method: str = "POST", timeout: float = 5
) -> tuple[int, dict[str, str], Any]:
    """(status, headers, JSON body) of one plain HTTP request."""
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(url, data=data, method=method)
    request.add_header("Content-Type", "application/json")
    if key is not None:
        request.add_header("Authorization", f"Bearer {key}")
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status, dict(response.headers), json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), json.loads(error.read())


def test_requests_are_checked_against_the_wire_and_recorded_without_the_key(
    fake_api: StartApi,
) -> None:
    api = fake_api(OpenAIEmbeddings())
    body = {"input": ["a"], "model": "text-embedding-3-small"}
    status, headers, answer = call(f"{api.url}/embeddings", body, key=api.api_key)
    assert status == 200 and len(answer["data"][0]["embedding"]) == 1536
    assert headers["x-request-id"] == "req_1"
    assert call(f"{api.url}/embeddings", body)[2]["error"]["code"] == "missing_api_key"
    wrong = call(f"{api.url}/embeddings", body, key="sk-wrong-0000")
    assert wrong[0] == 401 and wrong[2]["error"]["code"] == "invalid_api_key"
    assert call(f"{api.url}/chat/completions", body, key=api.api_key)[0] == 404
    assert call(f"{api.url}/embeddings", key=api.api_key, method="GET")[0] == 404
    extra = call(f"{api.url}/embeddings", {**body, "extra": 1}, key=api.api_key)
    assert extra[0] == 400 and "extra" in extra[2]["error"]["message"]
    assert api.statuses() == [200, 401, 401, 404, 404, 400]
    assert [(r.auth_sent, r.auth_ok) for r in api.requests[:3]] == [
        (True, True),
        (False, False),
        (True, False),
    ]
    assert api.requests[0].body == body and api.requests[0].path == "/v1/embeddings"
    assert all("authorization" not in r.headers for r in api.requests)
    assert all(api.api_key not in repr(r) for r in api.requests)


def test_scripted_replies_come_in_order_then_always_then_the_wire(fake_api: StartApi) -> None:
    api = fake_api(VoyageEmbeddings())
    body = {"input": ["a"], "model": "voyage-3.5"}
    api.enqueue(
        Reply(429, {"Retry-After": "7"}),
        Reply(200, {"Content-Type": "text/plain"}, body=b'"not an answer"'),
    )
    status, headers, answer = call(f"{api.url}/embeddings", body, key=api.api_key)
    assert (status, headers["Retry-After"]) == (429, "7") and "rate limits" in answer["detail"]
    status, headers, answer = call(f"{api.url}/embeddings", body, key=api.api_key)
    assert (status, answer) == (200, "not an answer") and headers["Content-Type"] == "text/plain"
    api.down(500)
    assert call(f"{api.url}/embeddings", body, key=api.api_key)[0] == 500
    assert call(f"{api.url}/embeddings", body)[0] == 500  # scripted: whatever the request
    api.up()
    assert call(f"{api.url}/embeddings", body, key=api.api_key)[0] == 200
    assert api.statuses() == [429, 200, 500, 500, 200]
    assert [r.scripted for r in api.requests] == [True, True, True, True, False]
    api.clear()
    assert api.requests == []


def test_a_delayed_answer_is_recorded_at_once_and_woken_when_the_server_stops(
    fake_api: StartApi,
) -> None:
    api = fake_api(OpenAIEmbeddings())
    api.enqueue(Reply(delay=600.0))
    body = {"input": ["a"], "model": "text-embedding-3-small"}
    # Handler threads of servers other tests left running are not this server's to wake.
    others = set(threading.enumerate())
    with pytest.raises(TimeoutError):
        call(f"{api.url}/embeddings", body, key=api.api_key, timeout=0.2)
    assert api.statuses() == [200]  # the answer it was holding back
    handlers = [t for t in threading.enumerate() if "process_request" in t.name and t not in others]
    assert handlers  # the one still holding its answer back
    api.stop()
    # Woken, not timed out: the answer was held for 600 s, and the cap is far below that.
    for thread in handlers:
        thread.join(timeout=120)
    assert not any(t.is_alive() for t in handlers)
    with pytest.raises(urllib.error.URLError, match="refused"):
        call(f"{api.url}/embeddings", body, key=api.api_key)
    api.stop()  # stopping twice is harmless (the fixture stops it again)


def test_the_chat_wire_answers_with_its_model_through_the_real_sdk(fake_api: StartApi) -> None:
    api = fake_api(ChatCompletions(lambda body: {"echo": body["messages"][-1]["content"]}))
    client = openai.OpenAI(api_key=api.api_key, base_url=api.url, max_retries=0)
    answer = client.chat.completions.create(
        model="gpt-4o-mini", messages=[{"role": "user", "content": "hello there"}]
    )
    assert json.loads(answer.choices[0].message.content or "") == {"echo": "hello there"}
    assert answer.usage is not None and answer.usage.prompt_tokens == 2
    api.enqueue(Reply(content="scripted"))
    again = client.chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}])
    assert again.choices[0].message.content == "scripted"
    with pytest.raises(openai.BadRequestError, match="messages"):
        client.chat.completions.create(model="m", messages=[])
    client.close()
    assert prompts(api.requests) == ["hello there", "x"]
    wrong = openai.OpenAI(api_key="sk-wrong", base_url=api.url, max_retries=0)
    with pytest.raises(openai.AuthenticationError, match="Incorrect API key"):
        wrong.chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}])
    wrong.close()


def test_the_fixture_stops_every_server_and_fails_a_test_whose_handler_raised(
    pytester: pytest.Pytester,
) -> None:
    pytester.makeconftest(ROOT_CONFTEST.read_text(encoding="utf-8"))
    # The inner run reads no pyproject: give pytest-asyncio the loop scope the project sets, so
    # it does not warn in the outer run's summary.
    pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\n")
    pytester.makepyfile(
        """
        import urllib.error, urllib.request
        import pytest
        from fake_apis import OpenAIEmbeddings

        URLS = []

        class Broken(OpenAIEmbeddings):
            def answer(self, body, reply):
                raise RuntimeError("a bug in the fake")

        def test_broken(fake_api):
            api = fake_api(Broken())
            URLS.append(api.url)
            request = urllib.request.Request(
                api.url + "/embeddings", data=b"{}", method="POST",
                headers={"Authorization": "Bearer " + api.api_key},
            )
            with pytest.raises(urllib.error.HTTPError):
                urllib.request.urlopen(request, timeout=5)

        def test_stopped():
            with pytest.raises(urllib.error.URLError, match="refused"):
                urllib.request.urlopen(URLS[0] + "/embeddings", timeout=5)
        """
    )
    result = pytester.runpytest_inprocess("-p", "no:randomly")
    result.assert_outcomes(passed=2, errors=1)
    result.stdout.fnmatch_lines(["*ERROR at teardown of test_broken*", "*a bug in the fake*"])


def test_no_distribution_ships_a_fake_server() -> None:
    """The fakes are test code: no module in any package's src builds on the test server."""
    repo = ROOT_CONFTEST.parent
    roots = ["core/src", "backends/*/src", "embedders/*/src", "extractors/*/src"]
    shipped = [p for root in roots for src in repo.glob(root) for p in src.rglob("*.py")]
    assert len(shipped) > 50  # every package's src, not an empty glob
    serving = [
        str(p.relative_to(repo))
        for p in shipped
        if any(s in p.read_text(encoding="utf-8") for s in ("pytest_httpserver", "FakeApi"))
    ]
    assert serving == []
