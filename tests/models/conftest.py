"""A scripted litellm custom provider: the real litellm routing path, with answers chosen by the test."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from litellm import CustomLLM
from litellm.types.utils import ModelResponse

from ace.models.configured_litellm import litellm

SCRIPTED_PROVIDER = "scripted"


@dataclass
class ScriptedLLM(CustomLLM):
    """Answers each call with the next reply; records what litellm handed to the provider."""

    model_string: str = f"{SCRIPTED_PROVIDER}/m"
    """The model string that routes to this handler."""
    replies: list[Callable[[list[dict[str, Any]]], dict[str, Any] | Exception]] = field(default_factory=list)
    calls: list[dict[str, Any]] = field(default_factory=list)

    def __post_init__(self) -> None:
        super().__init__()

    async def acompletion(
        self,
        model: str,
        messages: list,
        api_base: str,
        api_key: Any = None,
        optional_params: dict | None = None,
        **kwargs: Any,
    ) -> ModelResponse:
        self.calls.append(
            {
                "model": model,
                "messages": messages,
                "api_base": api_base,
                "api_key": api_key,
                "optional_params": dict(optional_params or {}),
            }
        )
        reply = self.replies[len(self.calls) - 1](messages)
        if isinstance(reply, Exception):
            raise reply
        return ModelResponse(**reply)


@pytest.fixture
def scripted_llm() -> Iterator[ScriptedLLM]:
    handler = ScriptedLLM()
    saved = list(litellm.custom_provider_map)
    litellm.custom_provider_map = [*saved, {"provider": SCRIPTED_PROVIDER, "custom_handler": handler}]
    try:
        yield handler
    finally:
        litellm.custom_provider_map = saved


@pytest.fixture(autouse=True)
async def _litellm_logging_worker_stopped() -> AsyncIterator[None]:
    """Stop litellm's global logging worker on the loop it was bound to, before that loop closes.

    Otherwise its tasks outlive the test's event loop and fail a later test with "Event loop is
    closed" when they are garbage-collected.
    """
    yield
    from litellm.litellm_core_utils.logging_worker import GLOBAL_LOGGING_WORKER

    if getattr(GLOBAL_LOGGING_WORKER, "_bound_loop", None) is asyncio.get_running_loop():
        await GLOBAL_LOGGING_WORKER.stop(discard_pending=True, timeout=1)
