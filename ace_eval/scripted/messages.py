"""Reading what a `FunctionModel` is sent: the pieces of a pydantic-ai message history that
scripted models decide from (system prompt, user texts, tool returns), and a text or structured answer."""

from __future__ import annotations

import json
import re
from typing import Any

from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    SystemPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo

__all__ = [
    "between",
    "first_user_prompt",
    "last_user_text",
    "line_after",
    "structured_response",
    "system_prompt",
    "text_response",
    "tool_returns",
    "user_texts",
]


def system_prompt(messages: list[ModelMessage], info: AgentInfo | None = None) -> str:
    """Every system prompt part of `messages`, joined by newlines; without any, the agent's
    instructions from `info` (pydantic-ai sends `instructions` there, not as a message), else ""."""
    parts = [
        part.content
        for message in messages
        if isinstance(message, ModelRequest)
        for part in message.parts
        if isinstance(part, SystemPromptPart)
    ]
    return "\n".join(parts) or ((info.instructions or "") if info is not None else "")


def user_texts(messages: list[ModelMessage]) -> list[str]:
    """The text of every user prompt in `messages`, oldest first (prompts that are not plain text
    are left out)."""
    return [
        part.content
        for message in messages
        if isinstance(message, ModelRequest)
        for part in message.parts
        if isinstance(part, UserPromptPart) and isinstance(part.content, str)
    ]


def first_user_prompt(messages: list[ModelMessage]) -> str:
    """The first user prompt's text, or "" when there is none."""
    texts = user_texts(messages)
    return texts[0] if texts else ""


def last_user_text(messages: list[ModelMessage]) -> str:
    """The latest user prompt's text, or "" when there is none."""
    texts = user_texts(messages)
    return texts[-1] if texts else ""


def tool_returns(messages: list[ModelMessage]) -> list[ToolReturnPart]:
    """Every tool return in `messages`, oldest first."""
    return [
        part
        for message in messages
        if isinstance(message, ModelRequest)
        for part in message.parts
        if isinstance(part, ToolReturnPart)
    ]


def between(text: str, start: str, end: str) -> str:
    """The text between the first `start` and the next `end` (to the end when `end` is missing);
    "" when `start` does not occur."""
    _, found, tail = text.partition(start)
    return tail.partition(end)[0] if found else ""


def line_after(text: str, label: str) -> str:
    """The rest of the first line of `text` that starts with `label`, stripped ("" when none does)."""
    match = re.search(rf"^{re.escape(label)}\s*(.*)$", text, re.M)
    return match.group(1).strip() if match else ""


def text_response(content: str) -> ModelResponse:
    """A model response holding one text part."""
    return ModelResponse(parts=[TextPart(content=content)])


def structured_response(info: AgentInfo, fields: dict[str, Any]) -> ModelResponse:
    """The role's structured answer `fields`, asked for either way (`RequestSettings.structured_output`):
    a call of its output tool, or a JSON text when the request asks for the native response format."""
    if info.model_request_parameters.output_mode == "native":
        return text_response(json.dumps(fields))
    return ModelResponse(parts=[ToolCallPart(info.output_tools[0].name, fields)])
