"""``OpenAIOptions``: the ``[embedder]`` keys of ``provider = "openai"``, and the models engram
knows (their native size, whether they take ``dimensions``, and the API's request limits)."""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import Field, field_validator, model_validator

from engram import ApiOptions, RequestLimits, check_base_url

DEFAULT_MODEL = "text-embedding-3-small"
KEY_ENV = "OPENAI_API_KEY"

# The embeddings API's documented limits: 2048 inputs and 300,000 tokens per request, 8192
# tokens per input (one less here, for safety with other OpenAI-compatible servers).
API_LIMITS = RequestLimits(max_inputs=2048, max_request_tokens=300_000, max_input_tokens=8191)


@dataclass(frozen=True, slots=True)
class ModelSpec:
    """What engram knows about a model: its output size and whether ``dimensions`` shortens it."""

    dimension: int
    shortenable: bool


MODELS: dict[str, ModelSpec] = {
    "text-embedding-3-small": ModelSpec(1536, shortenable=True),
    "text-embedding-3-large": ModelSpec(3072, shortenable=True),
    "text-embedding-ada-002": ModelSpec(1536, shortenable=False),
}


class OpenAIOptions(ApiOptions):
    """The OpenAI embeddings API, or any server that speaks it (Azure OpenAI's v1 API, Ollama,
    vLLM, LM Studio) through ``base_url``."""

    model: str = Field(default=DEFAULT_MODEL, min_length=1, description="The embedding model.")
    dimension: int | None = Field(
        default=None,
        ge=1,
        description=(
            "Output size. text-embedding-3 models: any size up to the model's own (sent as "
            "`dimensions`). Required for a model engram does not know: its native size."
        ),
    )
    base_url: str | None = Field(
        default=None,
        description=(
            "An OpenAI-compatible endpoint, e.g. http://localhost:11434/v1 (Ollama). Default: "
            "$OPENAI_BASE_URL, else https://api.openai.com/v1."
        ),
    )
    api_key_env: str = Field(
        default=KEY_ENV, min_length=1, description="The variable that holds the API key."
    )

    _check_base_url = field_validator("base_url")(check_base_url)

    @model_validator(mode="after")
    def _check_dimension(self) -> OpenAIOptions:
        spec = MODELS.get(self.model)
        if spec is None:
            if self.dimension is None:
                raise ValueError(
                    f"engram does not know the output size of {self.model!r}; set dimension to "
                    f"it (known models: {', '.join(MODELS)})"
                )
            return self
        if self.dimension is None or self.dimension == spec.dimension:
            return self
        if not spec.shortenable:
            raise ValueError(
                f"{self.model} always returns {spec.dimension} dims; remove dimension, or use a "
                "text-embedding-3 model to choose a size"
            )
        if self.dimension > spec.dimension:
            raise ValueError(
                f"{self.model} returns at most {spec.dimension} dims, got dimension = "
                f"{self.dimension}; choose {spec.dimension} or less"
            )
        return self

    def output_dimension(self) -> int:
        """The size of the vectors this configuration gets."""
        if self.dimension is not None:
            return self.dimension
        return MODELS[self.model].dimension

    def dimensions_parameter(self) -> int | None:
        """The ``dimensions`` request field: sent only to shorten a text-embedding-3 model."""
        spec = MODELS.get(self.model)
        if spec is None or not spec.shortenable or self.dimension in (None, spec.dimension):
            return None
        return self.dimension
