"""Fake provider APIs for the tests of every package; not part of any distribution.

Only the network edge is faked: the SDK under test sends real HTTP to 127.0.0.1, where a
``FakeApi`` (the plumbing, on pytest-httpserver) answers in a provider's wire format (a
``Wire``: ``OpenAIEmbeddings``, ``VoyageEmbeddings``, ``ChatCompletions``). Tests get servers
from the one ``fake_api`` fixture (the repository's root conftest.py), which stops them after
the test and re-raises what a handler raised::

    def test_retry(fake_api: StartApi) -> None:
        api = fake_api(OpenAIEmbeddings())
        api.enqueue(Reply(429, {"Retry-After": "7"}))
        ...  # point the client at api.url with api.api_key
        assert api.statuses() == [429, 200]

Importable as ``fake_apis`` because the root pyproject puts ``tests`` on pytest's pythonpath.
"""

from __future__ import annotations

from typing import Protocol, TypeVar

from fake_apis.embeddings import count_tokens, embedded_inputs
from fake_apis.openai_wire import ChatCompletions, OpenAIEmbeddings, prompts
from fake_apis.server import FakeApi, Reply, Seen, Wire
from fake_apis.voyage_wire import VoyageEmbeddings

__all__ = [
    "ChatCompletions",
    "FakeApi",
    "FakeChat",
    "FakeOpenAI",
    "FakeVoyage",
    "OpenAIEmbeddings",
    "Reply",
    "Seen",
    "StartApi",
    "VoyageEmbeddings",
    "Wire",
    "count_tokens",
    "embedded_inputs",
    "prompts",
]

FakeOpenAI = FakeApi[OpenAIEmbeddings]
FakeVoyage = FakeApi[VoyageEmbeddings]
FakeChat = FakeApi[ChatCompletions]

_W = TypeVar("_W", bound=Wire)


class StartApi(Protocol):
    """The ``fake_api`` fixture: start a server speaking this wire; it stops after the test."""

    def __call__(self, wire: _W) -> FakeApi[_W]: ...
