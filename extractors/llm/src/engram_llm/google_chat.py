"""Google's Gemini API (``generateContent``) through the official ``google-genai`` SDK (``pip
install 'engram-llm[google]'``).

The JSON object is asked for with ``response_mime_type = application/json`` and the task's
schema as ``response_json_schema`` (plain JSON Schema, which the SDK recommends over its older
``response_schema`` dialect). Thinking tokens are billed as output, so they count as output in
the ledger.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

from engram import Failure, MalformedResponse, Tokens, token_bound
from engram_llm.chat import ChatProvider, parse_json
from engram_llm.schemas import answer_schema

if TYPE_CHECKING:
    from google import genai


class GoogleProvider(ChatProvider):
    """``provider = "google"``: key from GOOGLE_API_KEY or GEMINI_API_KEY."""

    _client: genai.Client | None = None

    def client(self) -> genai.Client:
        if self._client is None:
            from google import genai
            from google.genai import types

            http = types.HttpOptions(
                base_url=self.options.base_url or None,
                timeout=max(1, round(self.shared.timeout * 1000)),  # milliseconds
                retry_options=None,  # one attempt: the Meter retries
            )
            self._client = genai.Client(vertexai=False, api_key=self._key, http_options=http)
        return self._client

    def request(self, system: str, user: str, operation: str) -> tuple[Any, Tokens]:
        from google.genai import types

        config = types.GenerateContentConfig(
            system_instruction=system,
            temperature=self.shared.temperature,
            max_output_tokens=self.shared.max_output_tokens,
        )
        if self.options.json_mode:
            config.response_mime_type = "application/json"
            config.response_json_schema = answer_schema(operation)
        response = self.client().models.generate_content(
            model=self.options.model, contents=user, config=config
        )
        try:
            text = response.text or ""
        except (AttributeError, IndexError, TypeError, ValueError) as exc:
            raise MalformedResponse(f"no text in the answer ({type(exc).__name__})") from None
        usage = response.usage_metadata
        tokens_in = getattr(usage, "prompt_token_count", None)
        answered = getattr(usage, "candidates_token_count", None)
        thought = getattr(usage, "thoughts_token_count", None)
        tokens_out = (answered or 0) + (thought or 0) if answered is not None else None
        tokens = Tokens(
            tokens_in if isinstance(tokens_in, int) else token_bound(system + user),
            tokens_out if isinstance(tokens_out, int) else token_bound(text),
        )
        return parse_json(text), tokens

    def classify_sdk(self, exc: Exception) -> Failure | None:
        from google.genai import errors

        if _is_transport(exc, "TimeoutException"):
            return self.timeout_failure()
        if _is_transport(exc, "TransportError"):
            return self.connection_failure("the Gemini API")
        if isinstance(exc, errors.APIError):
            response = getattr(exc, "response", None)
            headers = getattr(response, "headers", None)
            status = exc.code if isinstance(exc.code, int) else 500
            if status in (400, 403) and _key_refused(exc):
                variable = self.key_env or "the api_key option"
                message = f"the key was rejected (HTTP {status}); check {variable}"
                return Failure(f"HTTP {status}", message, False)
            return self.status_failure(status, headers if headers is not None else {})
        return None

    def close(self) -> None:
        if self._client is not None:
            self._client.close()


def _key_refused(exc: Exception) -> bool:
    """Whether a Gemini error is about the key: a wrong key is HTTP 400 with reason
    ``API_KEY_INVALID``, none at all 403 for "unregistered callers"."""
    said = f"{getattr(exc, 'details', '')} {getattr(exc, 'message', '')}"
    return "API_KEY_INVALID" in said or "unregistered callers" in said


def _is_transport(exc: Exception, name: str) -> bool:
    """Whether ``exc`` is ``httpx.<name>`` or ``httpx2.<name>``: the SDK sends with whichever
    of the two is installed (a module not loaded raised nothing)."""
    for module in ("httpx", "httpx2"):
        kind = getattr(sys.modules.get(module), name, None)
        if isinstance(kind, type) and isinstance(exc, kind):
            return True
    return False
