"""The tau2 LLM agent: upstream's system prompt (instructions + policy), the 14 tools, one call per turn.

Learned skills are appended after the policy block: fixed `extra_instructions`, or a `SkillSource`
asked for the skills of the user's first message (what the agent knows when it starts; never the
hidden user scenario). In the source's `tool` mode the prompt lists the skills' ids and issues and
the agent gets a `read_skill` tool, which it answers itself (`owns_tool` / `call_own_tool`).
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic_ai.messages import (
    ModelMessage,
    ModelResponse,
    ModelResponsePart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models import Model
from pydantic_ai.tools import ToolDefinition

from ace.errors import UsageError
from ace.models import RequestSettings
from ace.roles import READ_SKILL_TOOL, InjectedSkills, SkillInjection, SkillSource, UnknownSkillError
from ace.roles.skill_source import READ_SKILL_DESCRIPTION
from ace_eval.tau2._model_turn import ModelTurn, append_request_part, request_model
from ace_eval.tau2.data import load_policy, tool_definitions
from ace_eval.tau2.results import AssistantMessage, Message, ToolCall, ToolMessage, now_iso

__all__ = ["AGENT_INSTRUCTION", "LLMAgent", "agent_system_prompt", "skills_instructions"]

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


def skills_instructions(injected: InjectedSkills, injection: SkillInjection) -> str:
    """The learned-skills block appended to the agent's system prompt ("" when it holds no skill)."""
    if not injected.text:
        return ""
    if injection == "tool":
        return f"# Learned skills\n{injected.text}"
    return (
        "# Learned skills\nApply these lessons from earlier conversations where their issue matches the request."
        f"\n\n{injected.text}"
    )


_READ_SKILL_DEFINITION = ToolDefinition(
    name=READ_SKILL_TOOL,
    description=READ_SKILL_DESCRIPTION,
    parameters_json_schema={
        "type": "object",
        "properties": {"skill_id": {"type": "string", "description": "The id in brackets, e.g. context-00001."}},
        "required": ["skill_id"],
        "additionalProperties": False,
    },
)


class LLMAgent:
    """Produces the agent's next message from the whole trajectory with one model request."""

    DEFAULT_SETTINGS = RequestSettings(max_output_tokens=1024, temperature=0.0, timeout_seconds=300.0)
    """Every request's settings unless `settings` is given: one message or a few tool calls."""

    def __init__(
        self,
        model: Model,
        *,
        extra_instructions: str = "",
        skills: SkillSource | None = None,
        settings: RequestSettings | None = None,
        tools: Sequence[ToolDefinition] | None = None,
    ) -> None:
        """`model` answers; `extra_instructions` extends the system prompt, or `skills` supplies the
        learned skills at the first turn (not both: ValueError); `settings` go with every request
        (default `DEFAULT_SETTINGS`); `tools` default to the airline 14."""
        if extra_instructions and skills is not None:
            raise UsageError("give extra_instructions or a SkillSource, not both")
        self.model = model
        self.skills = skills
        """Where the learned skills come from (None: `extra_instructions` only)."""
        self.system_prompt: str | None = (
            None if skills is not None else agent_system_prompt(extra_instructions=extra_instructions)
        )
        """The system prompt; with a SkillSource it is set at the first turn."""
        self.settings = settings or self.DEFAULT_SETTINGS
        """What every request carries (output cap, temperature, timeout)."""
        base_tools = tuple(tool_definitions() if tools is None else tools)
        self.tools = (*base_tools, _READ_SKILL_DEFINITION) if self._reads_skills() else base_tools

    def owns_tool(self, name: str) -> bool:
        """True for a tool the agent answers itself (`read_skill` in the source's `tool` mode)."""
        return name == READ_SKILL_TOOL and self._reads_skills()

    def call_own_tool(self, call: ToolCall) -> ToolMessage:
        """Answer one of the agent's own tool calls; a bad id is an error message for the model."""
        skill_id = call.arguments.get("skill_id")
        try:
            if not isinstance(skill_id, str) or self.skills is None:
                raise UnknownSkillError(f"{READ_SKILL_TOOL} needs a skill_id string, got {skill_id!r}")
            content, error = self.skills.read(skill_id), False
        except UnknownSkillError as exc:
            content, error = f"Error: {exc}", True
        return ToolMessage(id=call.id, content=content, requestor=call.requestor, error=error, timestamp=now_iso())

    async def next_message(self, trajectory: Sequence[Message]) -> AssistantMessage:
        """The agent's reply to `trajectory`: text for the user and/or tool calls (may be empty).

        With a SkillSource, the first call asks it for the skills of the first user message."""
        if self.system_prompt is None:
            assert self.skills is not None
            injected = await self.skills.for_task(_first_user_text(trajectory))
            self.system_prompt = agent_system_prompt(
                extra_instructions=skills_instructions(injected, self.skills.injection)
            )
        response = await request_model(
            self.model,
            self.system_prompt,
            _agent_view(trajectory),
            tools=self.tools,
            settings=self.settings.model_settings(),
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

    def _reads_skills(self) -> bool:
        return self.skills is not None and self.skills.injection == "tool"


def _first_user_text(trajectory: Sequence[Message]) -> str:
    return next((message.content or "" for message in trajectory if message.role == "user"), "")


def _agent_view(trajectory: Sequence[Message]) -> list[ModelMessage]:
    """The trajectory as the agent sees it: its own turns as responses, user and tool turns as requests."""
    messages: list[ModelMessage] = []
    call_names: dict[str, str] = {}
    for message in trajectory:
        if message.role == "assistant":
            parts: list[ModelResponsePart] = [TextPart(content=message.content or "")] if message.has_text() else []
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
