"""`resolve_model`: model name or instance -> pydantic-ai `Model`."""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING, Any

import httpx2
from pydantic_ai.models import Model
from pydantic_ai.models.test import TestModel

from ace.models._errors import ModelConfigurationError, ModelResolutionError
from ace.models._litellm_transport import LiteLLMTransport
from ace.models._names import litellm_model_name

if TYPE_CHECKING:
    from pydantic_ai.models.openai import OpenAIChatModel

__all__ = ["OFFLINE_MODEL_NAME", "resolve_model"]

OFFLINE_MODEL_NAME = "test"
"""The offline model every `ace` API accepts: pydantic-ai's `TestModel` (calls every tool, then answers)."""
TEST_MODEL_NAME = OFFLINE_MODEL_NAME

# Never contacted: LiteLLMTransport answers every request itself.
_UNUSED_BASE_URL = "http://litellm.invalid/v1"


def resolve_model(
    model: str | Model,
    *,
    api_base: str | None = None,
    api_key: str | None = None,
    cache_prompts: bool = False,
    cache_ttl: str | None = None,
) -> Model:
    """Return a pydantic-ai `Model` for `model`.

    - `"test"` -> `TestModel()` (offline, calls every tool then answers; no api_base/api_key).
    - a `Model` instance -> returned unchanged (`api_base`/`api_key` must then be None).
    - a litellm model string (`"provider/name"` with a provider litellm knows, or a bare name in
      litellm's model map such as `"gpt-4o"`), or the same model in pydantic-ai's `"provider:name"`
      form (mapped by `litellm_model_name`) -> `OpenAIChatModel` served through `litellm.acompletion`,
      with `api_base`/`api_key` passed to litellm. Sampling options (temperature, max_tokens, ...)
      come from pydantic-ai `ModelSettings` at run time. `cache_prompts` (and `cache_ttl`, e.g.
      "5m" or "1h") mark the static prompt prefix for providers that cache only marked prefixes
      (Anthropic, Bedrock); see `LiteLLMTransport`.

    Raises `ModelResolutionError` naming the value, with valid examples, for anything else.
    """
    if cache_ttl is not None and not cache_prompts:
        raise ModelResolutionError(model, "cache_ttl only applies with cache_prompts=True")
    if isinstance(model, Model):
        if api_base is not None or api_key is not None:
            raise ModelResolutionError(model, "api_base/api_key only apply to model strings, not Model instances")
        return model
    if not isinstance(model, str):
        raise ModelResolutionError(model, f"expected a model string or a pydantic-ai Model, got {type(model).__name__}")
    name = litellm_model_name(model)
    if name == OFFLINE_MODEL_NAME:
        if api_base is not None or api_key is not None:
            raise ModelResolutionError(model, 'api_base/api_key do not apply to the offline "test" model')
        return TestModel()
    _check_litellm_name(name)
    # Imported here: the OpenAI SDK adds over a second to `import ace.models` for "test"/instance users.
    from pydantic_ai.providers.litellm import LiteLLMProvider

    transport = LiteLLMTransport(api_base=api_base, api_key=api_key, cache_prompts=cache_prompts, cache_ttl=cache_ttl)
    provider = LiteLLMProvider(api_base=_UNUSED_BASE_URL, http_client=httpx2.AsyncClient(transport=transport))
    return _litellm_chat_model_class()(name, provider=provider)


def _check_litellm_name(name: str) -> None:
    # Imported here because importing litellm costs seconds; "test" and Model instances skip it.
    from ace.models.configured_litellm import litellm

    provider, sep, model_id = name.partition("/")
    if sep:
        custom_providers = {entry["provider"] for entry in litellm.custom_provider_map}
        if provider not in litellm.provider_list and provider not in custom_providers:
            raise ModelResolutionError(name, f"unknown litellm provider {provider!r}")
        if not model_id:
            raise ModelResolutionError(name, "the model name after the provider is empty")
    elif name not in litellm.model_cost:
        raise ModelResolutionError(name, "not a 'provider/name' string and not a model litellm knows by bare name")


@cache
def _litellm_chat_model_class() -> type[OpenAIChatModel]:
    """`OpenAIChatModel` whose credential errors (the transport's 401 `CONFIGURATION_ERROR`, a
    provider's 401/403) are raised as `ModelConfigurationError`, naming what to set."""
    from pydantic_ai.exceptions import ModelHTTPError
    from pydantic_ai.models.openai import OpenAIChatModel

    class LiteLLMChatModel(OpenAIChatModel):
        async def request(self, *args: Any, **kwargs: Any) -> Any:
            try:
                return await super().request(*args, **kwargs)
            except ModelHTTPError as error:
                if error.status_code not in (401, 403):
                    raise
                body = error.body if isinstance(error.body, dict) else {}
                message = body.get("message") if isinstance(body.get("message"), str) else str(error)
                raise ModelConfigurationError(message) from None

    return LiteLLMChatModel
