"""Reading a pydantic-ai message history, for the offline scripted models of `ace-eval` (e2e, bench).

A scripted `FunctionModel` decides from the messages it is sent: the first user prompt (a role's
rendered inputs), the tool results so far, and tagged sections of a prompt (`<feedback>...</feedback>`).
"""

from __future__ import annotations

import re

from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, TextPart, ToolReturnPart, UserPromptPart

__all__ = ["between", "first_user_prompt", "line_after", "text_response", "tool_returns"]


def first_user_prompt(messages: list[ModelMessage]) -> str:
    """The text of the first user prompt ("" when there is none)."""
    for message in messages:
        if isinstance(message, ModelRequest):
            for part in message.parts:
                if isinstance(part, UserPromptPart) and isinstance(part.content, str):
                    return part.content
    return ""


def tool_returns(messages: list[ModelMessage]) -> list[ToolReturnPart]:
    """Every tool result sent back to the model so far, oldest first."""
    return [
        part
        for message in messages
        if isinstance(message, ModelRequest)
        for part in message.parts
        if isinstance(part, ToolReturnPart)
    ]


def between(text: str, start: str, end: str) -> str:
    """The text between the first `start` and the next `end` ("" when `start` is absent)."""
    _, found, tail = text.partition(start)
    return tail.partition(end)[0] if found else ""


def line_after(text: str, label: str) -> str:
    """The rest of the first line that starts with `label`, stripped ("" when none does)."""
    match = re.search(rf"^{re.escape(label)}\s*(.*)$", text, re.M)
    return match.group(1).strip() if match else ""


def text_response(content: str) -> ModelResponse:
    """A model response holding only `content` as text."""
    return ModelResponse(parts=[TextPart(content=content)])
