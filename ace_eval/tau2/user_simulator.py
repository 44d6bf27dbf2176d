"""The LLM user simulator: upstream guidelines + the task's scenario; it sees only the agent's text.

Roles are flipped for the user's model: the agent's messages are its requests, its own earlier
messages are its responses. A reply containing a stop token ends the run.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, UserPromptPart
from pydantic_ai.models import Model

from ace.models import RequestSettings
from ace_eval.tau2._model_turn import ModelTurn, append_request_part, request_model
from ace_eval.tau2.data import simulation_guidelines
from ace_eval.tau2.results import Message, UserMessage, now_iso
from ace_eval.tau2.tasks import UserScenario

__all__ = ["STOP_TOKENS", "UserSimulator", "is_user_stop", "user_system_prompt"]

STOP_TOKENS: tuple[str, ...] = ("###STOP###", "###TRANSFER###", "###OUT-OF-SCOPE###")
"""Tokens with which the simulated user ends the conversation."""


def user_system_prompt(scenario: UserScenario) -> str:
    """Upstream's user-simulator system prompt for `scenario`."""
    return f"{simulation_guidelines().strip()}\n\n<scenario>\n{scenario}\n</scenario>"


def is_user_stop(message: UserMessage) -> bool:
    """True when the user's text contains a stop token."""
    return message.content is not None and any(token in message.content for token in STOP_TOKENS)


class UserSimulator:
    """Produces the simulated user's next message for one task's scenario."""

    DEFAULT_SETTINGS = RequestSettings(max_output_tokens=512, temperature=0.0, timeout_seconds=300.0)
    """Every request's settings unless `settings` is given: one short chat message."""

    def __init__(self, model: Model, scenario: UserScenario, *, settings: RequestSettings | None = None) -> None:
        """`model` plays the user described by `scenario`; `settings` go with every request
        (default `DEFAULT_SETTINGS`)."""
        self.model = model
        self.system_prompt = user_system_prompt(scenario)
        self.settings = settings or self.DEFAULT_SETTINGS
        """What every request carries (output cap, temperature, timeout)."""

    async def next_message(self, trajectory: Sequence[Message]) -> UserMessage:
        """The user's reply to the agent's latest text (tool traffic is invisible to the user)."""
        response = await request_model(
            self.model, self.system_prompt, _user_view(trajectory), tools=(), settings=self.settings.model_settings()
        )
        turn = ModelTurn(response)
        return UserMessage(content=turn.text, timestamp=now_iso(), cost=turn.cost, usage=turn.usage)


def _user_view(trajectory: Sequence[Message]) -> list[ModelMessage]:
    messages: list[ModelMessage] = []
    for message in trajectory:
        if message.role == "assistant" and not message.tool_calls and message.content is not None:
            append_request_part(messages, UserPromptPart(content=message.content))
        elif message.role == "user" and message.content is not None:
            messages.append(ModelResponse(parts=[TextPart(content=message.content)]))
    return messages
