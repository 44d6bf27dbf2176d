"""An HTTP transport that answers OpenAI chat-completions requests by calling `litellm.acompletion`.

pydantic-ai's `OpenAIChatModel` maps messages, tools, output modes and settings to the OpenAI wire
format and back. Plugging this transport under its client sends that wire request through the
litellm library in-process, so every litellm provider (anthropic/, bedrock/, ollama/, ...) works the
same way and pydantic-ai's own, well-tested mapping is reused instead of re-implemented.
"""

from __future__ import annotations

import json
from typing import Any

import httpx2

from ace.models._credentials import credential_message, missing_credentials

__all__ = ["CONFIGURATION_ERROR", "LiteLLMTransport"]

_CHAT_COMPLETIONS_PATH = "/chat/completions"
CONFIGURATION_ERROR = "configuration_error"
"""The error `type` of a 401 answer that says what credential to set (see `ModelConfigurationError`)."""
_MISSING_CREDENTIALS = "Missing credentials"
"""How litellm's OpenAI client says no key was found (it answers HTTP 500, not 401)."""


class LiteLLMTransport(httpx2.AsyncBaseTransport):
    """Serve `POST .../chat/completions` with `litellm.acompletion(**body)`.

    The JSON body (model, messages, tools, temperature, ... and any `extra_body` keys such as
    litellm's `mock_response`) is passed through; `api_base`/`api_key`, when given here, are added
    to it (when they are None, litellm reads provider credentials from the environment). Parameters a
    provider does not support are dropped by litellm (`drop_params=True`). litellm errors become HTTP
    error responses with litellm's status code, so the OpenAI SDK and pydantic-ai raise their usual
    `ModelHTTPError`; a missing or refused credential becomes a 401 of type `CONFIGURATION_ERROR`
    whose message names what to set. Streaming requests are refused with HTTP 400.

    With `cache_prompts`, the static prefix of every request - the system message and the tool
    definitions - carries an explicit cache marker (`cache_control: {"type": "ephemeral"}`, plus
    `"ttl": cache_ttl` when given), which providers such as Anthropic and Bedrock need to cache it;
    providers that cache prefixes by themselves (OpenAI, llama-server) need no marker.
    """

    def __init__(
        self,
        *,
        api_base: str | None = None,
        api_key: str | None = None,
        cache_prompts: bool = False,
        cache_ttl: str | None = None,
    ) -> None:
        self._api_base = api_base
        self._api_key = api_key
        self._cache_control: dict[str, str] | None = None
        if cache_prompts:
            self._cache_control = {"type": "ephemeral", **({"ttl": cache_ttl} if cache_ttl else {})}

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        if request.method != "POST" or not request.url.path.endswith(_CHAT_COMPLETIONS_PATH):
            return _error(
                404,
                f"only POST {_CHAT_COMPLETIONS_PATH} is served through litellm, "
                f"got {request.method} {request.url.path}",
            )
        body: dict[str, Any] = json.loads(await request.aread())
        if body.get("stream"):
            return _error(400, "streaming is not supported by the litellm model; use non-streamed runs (Agent.run)")
        return await self._complete(body)

    async def _complete(self, body: dict[str, Any]) -> httpx2.Response:
        # Imported here because importing litellm costs seconds; only litellm-backed runs pay it.
        from ace.models.configured_litellm import litellm

        kwargs: dict[str, Any] = {**body, "drop_params": True}
        if self._cache_control is not None:
            _mark_static_prefix(kwargs, self._cache_control)
        if self._api_base is not None:
            kwargs["api_base"] = self._api_base
        if self._api_key is not None:
            kwargs["api_key"] = self._api_key
        try:
            response = await litellm.acompletion(**kwargs)
        except Exception as exc:  # litellm maps every provider failure onto its own exception family
            status = getattr(exc, "status_code", None)
            status = status if isinstance(status, int) and status >= 400 else 500
            if status in (401, 403) or _MISSING_CREDENTIALS in str(exc):
                return _error(401, self._configuration_problem(str(body.get("model")), exc), CONFIGURATION_ERROR)
            return _error(status, f"{type(exc).__name__}: {exc}")
        if not isinstance(response, litellm.ModelResponse):  # a stream wrapper: streaming is refused above
            return _error(500, f"litellm answered a non-streamed request with {type(response).__name__}")
        payload = response.model_dump(mode="json")
        # Some providers (custom handlers, local servers) leave `model` empty; the OpenAI schema requires it.
        payload["model"] = payload.get("model") or body.get("model")
        return httpx2.Response(200, json=payload)

    def _configuration_problem(self, model: str, exc: Exception) -> str:
        """One line naming what to set: the missing variable, or the refused credential."""
        missing = missing_credentials(model) if self._api_key is None and self._api_base is None else []
        if missing:
            return credential_message(model, missing)
        first_line = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        return (
            f"{model}: the provider refused the credentials ({first_line[:300]}); check the key (api_key) and api_base"
        )


def _mark_static_prefix(body: dict[str, Any], cache_control: dict[str, str]) -> None:
    """Put `cache_control` on the last block of the system messages and on the last tool."""
    systems = [message for message in body.get("messages", []) if message.get("role") == "system"]
    if systems:
        last = systems[-1]
        content = last.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else list(content or [])
        if blocks:
            blocks[-1] = {**blocks[-1], "cache_control": cache_control}
            last["content"] = blocks
    tools = body.get("tools")
    if tools:
        tools[-1] = {**tools[-1], "cache_control": cache_control}


def _error(status: int, message: str, kind: str = "litellm_error") -> httpx2.Response:
    return httpx2.Response(status, json={"error": {"message": message, "type": kind, "code": status}})
