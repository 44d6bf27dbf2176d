"""Model resolution: turn a model name into a pydantic-ai `Model`.

`resolve_model("test")` gives pydantic-ai's `TestModel`; a `Model` instance passes through; a
litellm-style `"provider/name"` string (`openai/gpt-4.1-mini`, `anthropic/...`, `bedrock/...`,
`ollama/...`, any litellm provider) gives an `OpenAIChatModel` whose HTTP transport calls
`litellm.acompletion` in-process (see `LiteLLMTransport`); pydantic-ai's `"provider:name"` names the
same model (`litellm_model_name` maps one to the other). A local OpenAI-compatible server is
`openai/<served-name>` plus `api_base`.

`metered(model, meter)` wraps any model so that its requests, tokens and cost add up in a
`UsageMeter`. `RequestSettings` is what every request of a role carries (output cap, temperature,
timeout, seed); `context_window(model)` how many input tokens a model takes. `recovering(model)` repairs
a small model's broken tool calls (prose instead of a call, a call cut at the output cap) and makes
its responses valid Unicode; `valid_unicode_messages` does the same for a whole history.

`missing_credentials(model)` names the environment variables a provider needs that are not set
(fast for the common providers: no litellm import); a refused or missing credential at request time
is a `ModelConfigurationError`. The names below are imported on first use, so the credential
preflight of a command line loads neither pydantic-ai nor litellm.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ace.lazy_exports import lazy_getattr

if TYPE_CHECKING:
    from ace.models._credentials import KNOWN_PROVIDER_KEYS, check_credentials, credential_message, missing_credentials
    from ace.models._errors import ModelConfigurationError, ModelResolutionError
    from ace.models._litellm_transport import LiteLLMTransport
    from ace.models._names import PYDANTIC_AI_PROVIDERS, litellm_model_name
    from ace.models._recovery import RecoveringModel, RecoveryEvent, recovering
    from ace.models._resolve import OFFLINE_MODEL_NAME, resolve_model
    from ace.models._settings import DEFAULT_CONTEXT_WINDOW, RequestSettings, StructuredOutput, context_window
    from ace.models._usage import UsageMeter, UsageTotals, metered
    from ace.models._valid_unicode import valid_unicode_messages

__all__ = [
    "KNOWN_PROVIDER_KEYS",
    "DEFAULT_CONTEXT_WINDOW",
    "LiteLLMTransport",
    "ModelConfigurationError",
    "ModelResolutionError",
    "OFFLINE_MODEL_NAME",
    "PYDANTIC_AI_PROVIDERS",
    "RecoveringModel",
    "RecoveryEvent",
    "RequestSettings",
    "StructuredOutput",
    "UsageMeter",
    "UsageTotals",
    "check_credentials",
    "context_window",
    "credential_message",
    "litellm_model_name",
    "metered",
    "missing_credentials",
    "recovering",
    "resolve_model",
    "valid_unicode_messages",
]

_EXPORTS: dict[str, str] = {
    "KNOWN_PROVIDER_KEYS": "ace.models._credentials",
    "DEFAULT_CONTEXT_WINDOW": "ace.models._settings",
    "LiteLLMTransport": "ace.models._litellm_transport",
    "ModelConfigurationError": "ace.models._errors",
    "ModelResolutionError": "ace.models._errors",
    "OFFLINE_MODEL_NAME": "ace.models._resolve",
    "PYDANTIC_AI_PROVIDERS": "ace.models._names",
    "RecoveringModel": "ace.models._recovery",
    "RecoveryEvent": "ace.models._recovery",
    "RequestSettings": "ace.models._settings",
    "StructuredOutput": "ace.models._settings",
    "UsageMeter": "ace.models._usage",
    "UsageTotals": "ace.models._usage",
    "check_credentials": "ace.models._credentials",
    "context_window": "ace.models._settings",
    "credential_message": "ace.models._credentials",
    "litellm_model_name": "ace.models._names",
    "metered": "ace.models._usage",
    "missing_credentials": "ace.models._credentials",
    "recovering": "ace.models._recovery",
    "resolve_model": "ace.models._resolve",
    "valid_unicode_messages": "ace.models._valid_unicode",
}
"""Where each lazily imported name of `__all__` lives."""


__getattr__ = lazy_getattr(__name__, _EXPORTS)
