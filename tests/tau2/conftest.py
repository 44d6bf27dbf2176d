"""Fixtures for the tau2 harness tests: recorded runs, task sets, scripted models."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import pytest
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from ace_eval.tau2 import Task, load_tasks
from ace_eval.tau2.tasks import Action


@pytest.fixture(scope="session")
def recorded_paths(recorded_dir: Path) -> list[Path]:
    """The four recorded tau2 Results files of real LLM runs."""
    paths = sorted(recorded_dir.glob("*.json"))
    assert len(paths) == 4
    return paths


@pytest.fixture(scope="session")
def airline_tasks() -> dict[str, Task]:
    """The current airline task set (v1.0.x), by id."""
    return {task.id: task for task in load_tasks()}


def _scripted_agent(steps: Sequence[Action | str]) -> FunctionModel:
    """An agent model that emits one tool call per gold action, or a text message per string, in order.

    After the script ends it keeps saying "Is there anything else?".
    """
    script: Iterator[Action | str] = iter(steps)
    counter = iter(range(1_000_000))

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        step = next(script, "Is there anything else?")
        if isinstance(step, str):
            return ModelResponse(parts=[TextPart(step)])
        call = ToolCallPart(step.name, dict(step.arguments), tool_call_id=f"call_{next(counter)}")
        return ModelResponse(parts=[call])

    return FunctionModel(respond, model_name="scripted-agent")


def _scripted_user(replies: Sequence[str]) -> FunctionModel:
    """A user model that says `replies` in order, then `###STOP###`."""
    script = iter(replies)

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return ModelResponse(parts=[TextPart(next(script, "Thanks, that's all. ###STOP###"))])

    return FunctionModel(respond, model_name="scripted-user")


def _recording_model(reply: Callable[[list[ModelMessage]], str], seen: list[list[ModelMessage]]) -> FunctionModel:
    """A text-only model that records every message list it is sent."""

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.append(list(messages))
        return ModelResponse(parts=[TextPart(reply(messages))])

    return FunctionModel(respond, model_name="recording")


@pytest.fixture
def scripted_agent() -> Callable[[Sequence[Action | str]], FunctionModel]:
    """Factory: an agent model that performs the given actions / says the given texts in order."""
    return _scripted_agent


@pytest.fixture
def scripted_user() -> Callable[[Sequence[str]], FunctionModel]:
    """Factory: a user model that says the given replies, then `###STOP###`."""
    return _scripted_user


@pytest.fixture
def recording_model() -> Callable[..., FunctionModel]:
    """Factory: a text-only model that records every message list it is sent."""
    return _recording_model
