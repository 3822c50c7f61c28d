"""Anthropic's Messages API through the official ``anthropic`` SDK (``pip install
'engram-llm[anthropic]'``).

The JSON object comes as the input of a tool the model is made to call (``tool_choice`` names
it): Anthropic's documented way to get JSON that follows a schema, on every Claude model. With
``json_mode = false`` (a proxy that refuses tools) the prompt alone asks for JSON, and the text
is parsed as the OpenAI path parses it. The ``temperature`` option is not sent: this SDK's
Messages API no longer takes one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from engram import Failure, MalformedResponse, Tokens, token_bound
from engram_llm.chat import ChatProvider, parse_json
from engram_llm.schemas import answer_schema

if TYPE_CHECKING:
    import anthropic

TOOL = "record_answer"


class AnthropicProvider(ChatProvider):
    """``provider = "anthropic"``: key from ANTHROPIC_API_KEY."""

    _client: anthropic.Anthropic | None = None

    def client(self) -> anthropic.Anthropic:
        if self._client is None:
            import anthropic

            self._client = anthropic.Anthropic(
                api_key=self._key,
                base_url=self.options.base_url or None,
                timeout=self.shared.timeout,
                max_retries=0,
            )
        return self._client

    def request(self, system: str, user: str, operation: str) -> tuple[Any, Tokens]:
        extra: dict[str, Any] = {}
        if self.options.json_mode:
            extra["tools"] = [
                {
                    "name": TOOL,
                    "description": "Record the answer, as the instructions describe it.",
                    "input_schema": answer_schema(operation),
                }
            ]
            extra["tool_choice"] = {"type": "tool", "name": TOOL}
        response = self.client().messages.create(
            model=self.options.model,
            system=system,
            messages=[{"role": "user", "content": user}],
            max_tokens=self.shared.max_output_tokens,
            **extra,
        )
        blocks = getattr(response, "content", None)
        if not isinstance(blocks, list):
            raise MalformedResponse("no content in the answer")
        called = [b for b in blocks if getattr(b, "type", None) == "tool_use"]
        texts = [b for b in blocks if getattr(b, "type", None) == "text"]
        text = "".join(str(getattr(b, "text", "")) for b in texts)
        usage = getattr(response, "usage", None)
        tokens_in = getattr(usage, "input_tokens", None)
        tokens_out = getattr(usage, "output_tokens", None)
        tokens = Tokens(
            tokens_in if isinstance(tokens_in, int) else token_bound(system + user),
            tokens_out if isinstance(tokens_out, int) else token_bound(text),
        )
        if called and isinstance(called[0].input, dict):
            return called[0].input, tokens
        return parse_json(text), tokens

    def classify_sdk(self, exc: Exception) -> Failure | None:
        import anthropic

        if isinstance(exc, anthropic.APITimeoutError):
            return self.timeout_failure()
        if isinstance(exc, anthropic.APIConnectionError):
            return self.connection_failure("the Anthropic API")
        if isinstance(exc, anthropic.APIStatusError):
            return self.status_failure(exc.status_code, exc.response.headers)
        if isinstance(exc, anthropic.APIResponseValidationError):
            return Failure("malformed response", "unreadable answer (validation)", True)
        return None

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
