"""Errors raised while resolving a model name."""

from __future__ import annotations

from ace.errors import AceError, UsageError

__all__ = ["ModelConfigurationError", "ModelResolutionError"]

VALID_MODEL_EXAMPLES = (
    "test",
    "openai/gpt-4.1-mini",
    "openai:gpt-4.1-mini (pydantic-ai style, same model)",
    "anthropic/claude-sonnet-4-5",
    "bedrock/us.anthropic.claude-haiku-4-5-20251001-v1:0",
    "ollama/llama3.1",
    "openai/<served-name> with api_base=http://127.0.0.1:8080/v1 (local OpenAI-compatible server)",
)


class ModelResolutionError(UsageError):
    """A model name (or its arguments) cannot be turned into a pydantic-ai model.

    The message names the offending value and lists valid examples; fix the model string.
    """

    def __init__(self, model: object, reason: str) -> None:
        examples = "; ".join(VALID_MODEL_EXAMPLES)
        super().__init__(f"cannot resolve model {model!r}: {reason}. Valid examples: {examples}")
        self.model = model


class ModelConfigurationError(AceError, RuntimeError):
    """The model's provider cannot be used as configured: a credential is missing or refused (HTTP
    401/403). The one-line message names what to set (e.g. `OPENAI_API_KEY is not set for
    openai/gpt-4.1-mini; ...`). Nothing will work until it is fixed, so a run whose every sample
    fails with it raises it (see `Runner.run`)."""
