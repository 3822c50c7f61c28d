"""OpenAI's chat completions through the official ``openai`` SDK: OpenAI itself and every
compatible server (Ollama, vLLM, OpenRouter), a JSON object asked for with ``response_format``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from engram import Failure, MalformedResponse, Tokens, token_bound
from engram_llm.chat import ChatProvider, parse_json

if TYPE_CHECKING:
    import openai


class OpenAIProvider(ChatProvider):
    """``provider = "openai"`` (the default)."""

    _client: openai.OpenAI | None = None

    def client(self) -> openai.OpenAI:
        if self._client is None:
            import openai

            self._client = openai.OpenAI(
                api_key=self._key,
                base_url=self.options.base_url or None,
                timeout=self.shared.timeout,
                max_retries=0,
            )
        return self._client

    def request(self, system: str, user: str, operation: str) -> tuple[Any, Tokens]:
        extra: dict[str, Any] = {}
        if self.options.json_mode:
            extra["response_format"] = {"type": "json_object"}
        response = self.client().chat.completions.create(
            model=self.options.model,
            messages=[
                {"role": "system", "content": system},
                {"role": "user", "content": user},
            ],
            temperature=self.shared.temperature,
            max_tokens=self.shared.max_output_tokens,
            **extra,
        )
        try:
            content = response.choices[0].message.content or ""
        except (AttributeError, IndexError, TypeError) as exc:
            raise MalformedResponse(f"no message in the answer ({type(exc).__name__})") from None
        usage = getattr(response, "usage", None)
        tokens_in = getattr(usage, "prompt_tokens", None)
        tokens_out = getattr(usage, "completion_tokens", None)
        tokens = Tokens(
            tokens_in if isinstance(tokens_in, int) else token_bound(system + user),
            tokens_out if isinstance(tokens_out, int) else token_bound(content),
        )
        return parse_json(content), tokens

    def classify_sdk(self, exc: Exception) -> Failure | None:
        import openai

        if isinstance(exc, openai.APITimeoutError):
            return self.timeout_failure()
        if isinstance(exc, openai.APIConnectionError):
            return self.connection_failure("the OpenAI API")
        if isinstance(exc, openai.APIStatusError):
            return self.status_failure(exc.status_code, exc.response.headers)
        if isinstance(exc, openai.APIResponseValidationError):
            return Failure("malformed response", "unreadable answer (validation)", True)
        return None

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
