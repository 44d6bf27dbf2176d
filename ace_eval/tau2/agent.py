"""The tau2 LLM agent: upstream's system prompt (instructions + policy), the 14 tools, one call per turn.

`extra_instructions` (learned skills, for ACE) is appended after the policy block.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic_ai.messages import (
    ModelMessage,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models import Model
from pydantic_ai.settings import ModelSettings
from pydantic_ai.tools import ToolDefinition

from ace_eval.tau2._model_turn import ModelTurn, append_request_part, request_model
from ace_eval.tau2.data import load_policy, tool_definitions
from ace_eval.tau2.results import AssistantMessage, Message, ToolCall, now_iso

__all__ = ["AGENT_INSTRUCTION", "LLMAgent", "agent_system_prompt"]

AGENT_INSTRUCTION = """
You are a customer service agent that helps the user according to the <policy> provided below.
In each turn you can either:
- Send a message to the user.
- Make a tool call.
You cannot do both at the same time.

Try to be helpful and always follow the policy. Always make sure you generate valid JSON only.
""".strip()
"""Upstream `LLMAgent` instructions, verbatim."""


def agent_system_prompt(policy: str | None = None, extra_instructions: str = "") -> str:
    """Upstream's agent system prompt for `policy` (default: the airline policy), plus `extra_instructions`."""
    prompt = (
        f"<instructions>\n{AGENT_INSTRUCTION}\n</instructions>\n"
        f"<policy>\n{load_policy() if policy is None else policy}\n</policy>"
    )
    return f"{prompt}\n{extra_instructions}" if extra_instructions else prompt


class LLMAgent:
    """Produces the agent's next message from the whole trajectory with one model request."""

    def __init__(
        self,
        model: Model,
        *,
        extra_instructions: str = "",
        model_settings: ModelSettings | None = None,
        tools: Sequence[ToolDefinition] | None = None,
    ) -> None:
        """`model` answers; `extra_instructions` extends the system prompt; `tools` default to the airline 14."""
        self.model = model
        self.system_prompt = agent_system_prompt(extra_instructions=extra_instructions)
        self.model_settings = model_settings
        self.tools = tuple(tool_definitions() if tools is None else tools)

    async def next_message(self, trajectory: Sequence[Message]) -> AssistantMessage:
        """The agent's reply to `trajectory`: text for the user and/or tool calls (may be empty)."""
        response = await request_model(
            self.model,
            self.system_prompt,
            _agent_view(trajectory),
            tools=self.tools,
            settings=self.model_settings,
        )
        turn = ModelTurn(response)
        calls = [
            # Malformed JSON arguments arrive as {"INVALID_JSON": raw}; the tool then answers with an error.
            ToolCall(id=part.tool_call_id, name=part.tool_name, arguments=part.args_as_dict(), requestor="assistant")
            for part in turn.tool_calls
        ]
        return AssistantMessage(
            content=turn.text, tool_calls=calls or None, timestamp=now_iso(), cost=turn.cost, usage=turn.usage
        )


def _agent_view(trajectory: Sequence[Message]) -> list[ModelMessage]:
    """The trajectory as the agent sees it: its own turns as responses, user and tool turns as requests."""
    messages: list[ModelMessage] = []
    call_names: dict[str, str] = {}
    for message in trajectory:
        if message.role == "assistant":
            parts: list = [TextPart(content=message.content)] if message.has_text() else []
            for call in message.tool_calls or ():
                call_names[call.id] = call.name
                parts.append(ToolCallPart(tool_name=call.name, args=call.arguments, tool_call_id=call.id))
            messages.append(ModelResponse(parts=parts))
        elif message.role == "user":
            append_request_part(messages, UserPromptPart(content=message.content or ""))
        else:
            append_request_part(
                messages,
                ToolReturnPart(
                    tool_name=call_names.get(message.id, ""), content=message.content, tool_call_id=message.id
                ),
            )
    return messages
