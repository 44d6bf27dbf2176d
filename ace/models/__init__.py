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
"""

from __future__ import annotations

import os

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from ace.models._errors import ModelResolutionError  # noqa: E402
from ace.models._litellm_transport import LiteLLMTransport  # noqa: E402
from ace.models._recovery import RecoveringModel, RecoveryEvent, recovering  # noqa: E402
from ace.models._resolve import OFFLINE_MODEL_NAME, PYDANTIC_AI_PROVIDERS, litellm_model_name, resolve_model  # noqa: E402
from ace.models._settings import DEFAULT_CONTEXT_WINDOW, RequestSettings, context_window  # noqa: E402
from ace.models._usage import UsageMeter, UsageTotals, metered  # noqa: E402
from ace.models._valid_unicode import valid_unicode_messages  # noqa: E402

__all__ = [
    "DEFAULT_CONTEXT_WINDOW",
    "LiteLLMTransport",
    "OFFLINE_MODEL_NAME",
    "PYDANTIC_AI_PROVIDERS",
    "ModelResolutionError",
    "RecoveringModel",
    "RecoveryEvent",
    "RequestSettings",
    "UsageMeter",
    "UsageTotals",
    "context_window",
    "litellm_model_name",
    "metered",
    "recovering",
    "resolve_model",
    "valid_unicode_messages",
]
