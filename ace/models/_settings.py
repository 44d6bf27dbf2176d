"""What every request of a role carries (`RequestSettings`), and how large a model's context is.

Real models are hostile: a request without an output cap can generate until the server gives up,
one without a timeout can hang a run. Each role has defaults that fit its job (see the roles'
`DEFAULT_SETTINGS`); callers override them per role.
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, TypeVar, get_args

from ace.errors import UsageError

if TYPE_CHECKING:
    from pydantic_ai import NativeOutput
    from pydantic_ai.models import Model
    from pydantic_ai.settings import ModelSettings

__all__ = ["DEFAULT_CONTEXT_WINDOW", "RequestSettings", "StructuredOutput", "context_window"]

StructuredOutput = Literal["tool", "native"]
"""How a role asks for its structured answer: an output tool call, or the provider's JSON-schema
response format (see `RequestSettings.structured_output`)."""

_Answer = TypeVar("_Answer")

_RESERVED_BODY_KEYS = frozenset(
    {
        "model",
        "messages",
        "tools",
        "tool_choice",
        "response_format",
        "stream",
        "max_tokens",
        "max_completion_tokens",
        "temperature",
        "seed",
    }
)
"""Request fields `RequestSettings.extra_body` may not set: the roles and the other settings own them."""

DEFAULT_CONTEXT_WINDOW = 8192
"""Context window assumed for a model litellm has no information about (a local server's alias, a
test model); override it with `AgenticConfig.context_window_tokens`."""


@dataclass(frozen=True)
class RequestSettings:
    """The sampling and safety settings sent with every request of one role.

    Raises ValueError naming the field for a cap or timeout below or at 0, a temperature outside
    [0, 2], a seed that is not an int, or an `extra_body` that is not a JSON object or sets a field
    the roles own (model, messages, tools, max_tokens, temperature, seed, ...).
    """

    max_output_tokens: int | None = None
    """Most tokens one response may generate (`max_tokens` on the wire); None: the provider's default."""
    temperature: float | None = None
    """Sampling temperature; None: the provider's default."""
    timeout_seconds: float | None = None
    """Seconds one request may take before it fails; None: the client's default."""
    seed: int | None = None
    """Sampling seed sent with every request (`seed` on the wire; providers that support it sample
    reproducibly, others ignore it); None: no seed."""
    structured_output: StructuredOutput | None = None
    """How the roles with a structured answer (the Agent's, the Reflector's) ask for it. "tool" (or
    None): as a call of an output tool, which every tool-calling model supports. "native": as the
    provider's JSON-schema response format (`response_format` on the wire); llama-server and vLLM
    then hold the model to the schema with a grammar, field length caps included, so a small model
    can neither answer in prose nor run on in one field (OpenAI and Gemini support it too)."""
    extra_body: Mapping[str, Any] | None = None
    """Server-specific fields added to every request body (pydantic-ai's `extra_body`), e.g.
    `{"cache_prompt": false}`, which makes llama-server's answers at temperature 0 reproducible (its
    prompt cache changes how a prompt is batched, and so the floating-point results); None: none.
    Recorded in run reports: never put a credential here."""

    def __post_init__(self) -> None:
        if self.max_output_tokens is not None and (
            isinstance(self.max_output_tokens, bool) or self.max_output_tokens < 1
        ):
            raise UsageError(f"max_output_tokens must be None or >= 1, got {self.max_output_tokens!r}")
        if self.temperature is not None and not (0.0 <= self.temperature <= 2.0 and math.isfinite(self.temperature)):
            raise UsageError(f"temperature must be None or within [0, 2], got {self.temperature!r}")
        if self.timeout_seconds is not None and not self.timeout_seconds > 0:
            raise UsageError(f"timeout_seconds must be None or > 0, got {self.timeout_seconds!r}")
        if self.seed is not None and (isinstance(self.seed, bool) or not isinstance(self.seed, int)):
            raise UsageError(f"seed must be None or an int, got {self.seed!r}")
        if self.structured_output is not None and self.structured_output not in get_args(StructuredOutput):
            raise UsageError(f"structured_output must be None, 'tool' or 'native', got {self.structured_output!r}")
        if self.extra_body is not None:
            object.__setattr__(self, "extra_body", _checked_extra_body(self.extra_body))

    def overridden(
        self,
        *,
        max_output_tokens: int | None = None,
        temperature: float | None = None,
        timeout_seconds: float | None = None,
        seed: int | None = None,
        structured_output: StructuredOutput | None = None,
        extra_body: Mapping[str, Any] | None = None,
    ) -> RequestSettings:
        """A copy in which every argument that is not None replaces the current value."""
        return dataclasses.replace(
            self,
            max_output_tokens=self.max_output_tokens if max_output_tokens is None else max_output_tokens,
            temperature=self.temperature if temperature is None else temperature,
            timeout_seconds=self.timeout_seconds if timeout_seconds is None else timeout_seconds,
            seed=self.seed if seed is None else seed,
            structured_output=self.structured_output if structured_output is None else structured_output,
            extra_body=self.extra_body if extra_body is None else extra_body,
        )

    def output_type(self, answer: type[_Answer]) -> type[_Answer] | NativeOutput[_Answer]:
        """The pydantic-ai `output_type` that asks for `answer` the way `structured_output` says."""
        if self.structured_output != "native":
            return answer
        from pydantic_ai import NativeOutput  # here: `RequestSettings` is read by command lines

        return NativeOutput(answer)

    def model_settings(self) -> ModelSettings:
        """The pydantic-ai `ModelSettings` for these values (unset ones left out)."""
        from pydantic_ai.settings import ModelSettings  # here: `RequestSettings` is read by command lines

        settings = ModelSettings()
        if self.max_output_tokens is not None:
            settings["max_tokens"] = self.max_output_tokens
        if self.temperature is not None:
            settings["temperature"] = self.temperature
        if self.timeout_seconds is not None:
            settings["timeout"] = self.timeout_seconds
        if self.seed is not None:
            settings["seed"] = self.seed
        if self.extra_body is not None:
            settings["extra_body"] = dict(self.extra_body)
        return settings

    def to_dict(self) -> dict[str, Any]:
        """The fields by name, JSON-ready."""
        return dataclasses.asdict(self)


def _checked_extra_body(body: object) -> dict[str, Any]:
    """A copy of `body` if it is a JSON object that sets none of `_RESERVED_BODY_KEYS`; else UsageError."""
    if not isinstance(body, Mapping) or not all(isinstance(key, str) for key in body):
        raise UsageError(f"extra_body must be a JSON object with string keys, got {body!r}")
    if reserved := sorted(_RESERVED_BODY_KEYS.intersection(body)):
        raise UsageError(
            f"extra_body may not set {', '.join(reserved)}: use the role's own settings (caps, temperature, seed, "
            "structured output) instead"
        )
    try:
        return json.loads(json.dumps(dict(body), allow_nan=False))
    except (TypeError, ValueError) as exc:
        raise UsageError(f"extra_body must be JSON-serialisable: {exc}") from None


def context_window(model: Model, *, default: int = DEFAULT_CONTEXT_WINDOW) -> int:
    """Input tokens `model` accepts: litellm's model information for a litellm-served model (see
    `resolve_model`), else `default` (unknown aliases of local servers, FunctionModel, TestModel)."""
    if model.system != "litellm":  # FunctionModel, TestModel, other providers: no litellm information
        return default
    from ace.models.configured_litellm import litellm

    try:
        info = litellm.get_model_info(model.model_name)
    except Exception:  # litellm raises a bare Exception for a model it does not know
        return default
    window = info.get("max_input_tokens") or info.get("max_tokens")
    return int(window) if isinstance(window, int) and window > 0 else default
