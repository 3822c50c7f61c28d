"""``VoyageOptions``: the ``[embedder]`` keys of ``provider = "voyage"``, and the models engram
knows (their output sizes and the API's per-request token limits)."""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import Field, field_validator, model_validator

from engram import ApiOptions, RequestLimits, check_base_url

DEFAULT_MODEL = "voyage-3.5"
KEY_ENV = "VOYAGE_API_KEY"
MAX_INPUTS = 1000  # texts per request, every model
CONTEXT = 32_000  # tokens per text for the models below (the API truncates the rest)
SIZES = (256, 512, 1024, 2048)


@dataclass(frozen=True, slots=True)
class ModelSpec:
    """What engram knows about a model: default and allowed sizes, tokens per request."""

    dimension: int
    sizes: tuple[int, ...]
    max_request_tokens: int

    def limits(self) -> RequestLimits:
        return RequestLimits(MAX_INPUTS, self.max_request_tokens, CONTEXT)


MODELS: dict[str, ModelSpec] = {
    "voyage-3.5": ModelSpec(1024, SIZES, 320_000),
    "voyage-3.5-lite": ModelSpec(1024, SIZES, 1_000_000),
    "voyage-3-large": ModelSpec(1024, SIZES, 120_000),
    "voyage-code-3": ModelSpec(1024, SIZES, 120_000),
}
# A model engram does not know gets the smallest limits of the known ones.
UNKNOWN_LIMITS = RequestLimits(MAX_INPUTS, 120_000, CONTEXT)


class VoyageOptions(ApiOptions):
    """The Voyage AI embeddings API."""

    model: str = Field(default=DEFAULT_MODEL, min_length=1, description="The embedding model.")
    dimension: int | None = Field(
        default=None,
        ge=1,
        description=(
            "Output size (sent as output_dimension): 256, 512, 1024 (default) or 2048 for the "
            "voyage-3.5 / 3-large / code-3 models. Required for a model engram does not know: "
            "its native size."
        ),
    )
    base_url: str | None = Field(
        default=None, description="API endpoint; default https://api.voyageai.com/v1."
    )
    api_key_env: str = Field(
        default=KEY_ENV, min_length=1, description="The variable that holds the API key."
    )

    _check_base_url = field_validator("base_url")(check_base_url)

    @model_validator(mode="after")
    def _check_dimension(self) -> VoyageOptions:
        spec = MODELS.get(self.model)
        if spec is None:
            if self.dimension is None:
                raise ValueError(
                    f"engram does not know the output size of {self.model!r}; set dimension to "
                    f"it (known models: {', '.join(MODELS)})"
                )
            return self
        if self.dimension is not None and self.dimension not in spec.sizes:
            sizes = ", ".join(str(s) for s in spec.sizes)
            raise ValueError(
                f"{self.model} returns {sizes} dims, got dimension = {self.dimension}; choose "
                "one of those"
            )
        return self

    def output_dimension(self) -> int:
        """The size of the vectors this configuration gets."""
        if self.dimension is not None:
            return self.dimension
        return MODELS[self.model].dimension

    def output_dimension_parameter(self) -> int | None:
        """The ``output_dimension`` request field: sent only to change a known model's size."""
        spec = MODELS.get(self.model)
        if spec is None or self.dimension in (None, spec.dimension):
            return None
        return self.dimension

    def model_limits(self) -> RequestLimits:
        spec = MODELS.get(self.model)
        return spec.limits() if spec is not None else UNKNOWN_LIMITS
