"""One model call, and the conversion between tau2 messages and pydantic-ai messages."""

from __future__ import annotations

from collections.abc import Sequence

from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelRequestPart,
    ModelResponse,
    SystemPromptPart,
    TextPart,
    ToolCallPart,
)
from pydantic_ai.models import Model, ModelRequestParameters
from pydantic_ai.models.instrumented import InstrumentedModel
from pydantic_ai.settings import ModelSettings
from pydantic_ai.tools import ToolDefinition

from ace import tracing

__all__ = ["ModelTurn", "append_request_part", "request_model"]


class ModelTurn:
    """What one model call produced: text, tool calls, usage and cost."""

    __slots__ = ("cost", "text", "tool_calls", "usage")

    def __init__(self, response: ModelResponse) -> None:
        texts = [part.content for part in response.parts if isinstance(part, TextPart)]
        self.text: str | None = "".join(texts) if texts else None
        self.tool_calls: list[ToolCallPart] = [part for part in response.parts if isinstance(part, ToolCallPart)]
        usage = response.usage
        self.usage = {"prompt_tokens": usage.input_tokens, "completion_tokens": usage.output_tokens}
        self.cost = _cost(response)


def _cost(response: ModelResponse) -> float | None:
    try:
        return float(response.cost().total_price)
    except Exception:  # genai-prices does not know every model; an unknown cost is recorded as None
        return None


def append_request_part(messages: list[ModelMessage], part: ModelRequestPart) -> None:
    """Add `part` to the trailing request, or open a new request after a response."""
    if messages and isinstance(messages[-1], ModelRequest):
        messages[-1] = ModelRequest(parts=[*messages[-1].parts, part])
    else:
        messages.append(ModelRequest(parts=[part]))


async def request_model(
    model: Model,
    system_prompt: str,
    history: Sequence[ModelMessage],
    *,
    tools: Sequence[ToolDefinition],
    settings: ModelSettings | None,
) -> ModelResponse:
    """One `model.request` with `system_prompt` first, then `history`; text output allowed. The
    request is a `chat` span like the roles' (`ace.tracing.instrumentation`), so span queries count
    the agent's and the user simulator's requests too."""
    messages: list[ModelMessage] = [ModelRequest(parts=[SystemPromptPart(content=system_prompt)])]
    for message in history:
        if isinstance(message, ModelRequest):
            for part in message.parts:
                append_request_part(messages, part)
        else:
            messages.append(message)
    parameters = ModelRequestParameters(function_tools=list(tools), allow_text_output=True)
    instrumented = InstrumentedModel(model, tracing.instrumentation())
    return await instrumented.request(messages, settings, parameters)
