"""One simulated conversation, driven by FunctionModels through the real orchestrator loop."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from logfire.testing import CaptureLogfire
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    SystemPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel

from ace_eval.tau2 import (
    GREETING,
    STOP_TOKENS,
    LLMAgent,
    UserSimulator,
    gold_db_hash,
    initial_db_hash,
    run_simulation,
)
from ace_eval.tau2.tasks import Action, Task


def request_texts(messages: list[ModelMessage]) -> list[str]:
    """Contents of every request part that has a string content, in order."""
    return [
        part.content
        for message in messages
        if isinstance(message, ModelRequest)
        for part in message.parts
        if isinstance(getattr(part, "content", None), str)
    ]


Factory = Callable[..., FunctionModel]

WRITING_TASKS = ["7", "11", "12", "15", "21"]


async def _simulate(task: Task, agent_model: FunctionModel, user_model: FunctionModel, **limits: int):
    return await run_simulation(
        task, agent=LLMAgent(agent_model), user=UserSimulator(user_model, task.user_scenario), **limits
    )


@pytest.mark.parametrize("task_id", WRITING_TASKS)
async def test_an_agent_doing_the_gold_actions_earns_reward_1(
    airline_tasks: dict[str, Task],
    task_id: str,
    scripted_agent: Factory,
    scripted_user: Factory,
) -> None:
    task = airline_tasks[task_id]
    assert gold_db_hash(task) != initial_db_hash()
    closing = "Done. " + " ".join(task.evaluation_criteria.communicate_info or [])
    agent = scripted_agent([*task.evaluation_criteria.actions, closing])
    run = await _simulate(task, agent, scripted_user(["I need help."]))
    assert run.termination_reason == "user_stop"
    assert run.reward_info.db_check.db_match
    assert run.reward_info.reward == 1.0


async def test_a_wrong_write_scores_0(
    airline_tasks: dict[str, Task],
    scripted_agent: Factory,
    scripted_user: Factory,
) -> None:
    task = airline_tasks["0"]
    wrong = Action(action_id="w", name="cancel_reservation", arguments={"reservation_id": "EHGLP3"})
    run = await _simulate(task, scripted_agent([wrong, "Cancelled."]), scripted_user(["Cancel EHGLP3."]))
    assert run.termination_reason == "user_stop"
    assert (run.reward_info.reward, run.reward_info.db_check.db_match) == (0.0, False)


async def test_hitting_max_steps_ends_the_run_with_reward_0(
    airline_tasks: dict[str, Task],
    scripted_agent: Factory,
    scripted_user: Factory,
) -> None:
    task = airline_tasks["0"]
    lookups = [Action(action_id=str(i), name="list_all_airports", arguments={}) for i in range(50)]
    run = await _simulate(task, scripted_agent(lookups), scripted_user(["hello"]), max_steps=9)
    assert run.termination_reason == "max_steps"
    assert run.reward_info.reward == 0.0 and run.reward_info.db_check is None
    # greeting + user + 4 (call, answer) pairs: the limit is checked only when no call is pending
    assert len(run.messages) == 10 and run.messages[-1].role == "tool"


async def test_too_many_tool_errors_end_the_run_with_reward_0(
    airline_tasks: dict[str, Task],
    scripted_agent: Factory,
    scripted_user: Factory,
) -> None:
    task = airline_tasks["0"]
    missing = {"reservation_id": "NOPE"}
    failing = [Action(action_id=str(i), name="get_reservation_details", arguments=missing) for i in range(9)]
    run = await _simulate(task, scripted_agent(failing), scripted_user(["hello"]), max_errors=3)
    assert run.termination_reason == "too_many_errors"
    assert run.reward_info.reward == 0.0
    assert [m.content for m in run.messages if m.role == "tool"] == ["Error: Reservation NOPE not found"] * 3


@pytest.mark.parametrize("token", STOP_TOKENS)
async def test_each_user_stop_token_ends_the_run(
    airline_tasks: dict[str, Task],
    token: str,
    scripted_agent: Factory,
    scripted_user: Factory,
) -> None:
    run = await _simulate(airline_tasks["0"], scripted_agent([]), scripted_user([f"ok {token}"]))
    assert run.termination_reason == "user_stop"
    assert len(run.messages) == 2


async def test_an_empty_agent_message_ends_the_run_as_agent_error(
    airline_tasks: dict[str, Task],
    scripted_agent: Factory,
    scripted_user: Factory,
) -> None:
    run = await _simulate(airline_tasks["0"], scripted_agent(["   "]), scripted_user(["hello"]))
    assert run.termination_reason == "agent_error"
    assert run.reward_info.reward == 0.0


async def test_the_user_sees_only_the_agents_text_with_roles_flipped(
    airline_tasks: dict[str, Task],
    scripted_agent: Factory,
    recording_model: Factory,
) -> None:
    seen: list[list[ModelMessage]] = []
    replies = iter(["Find my reservation.", "Thanks ###STOP###"])
    user = recording_model(lambda _: next(replies), seen)
    lookup = Action(action_id="l", name="get_user_details", arguments={"user_id": "emma_kim_9957"})
    run = await _simulate(airline_tasks["0"], scripted_agent([lookup, "You have 5 reservations."]), user)
    assert run.termination_reason == "user_stop"
    last_view = seen[-1]
    assert request_texts(last_view)[1:] == [GREETING, "You have 5 reservations."]
    assert "emma_kim_9957" not in str(last_view[1:])
    own = [part.content for message in last_view if isinstance(message, ModelResponse) for part in message.parts]
    assert own == ["Find my reservation."]
    assert "<scenario>" in last_view[0].parts[0].content and "emma_kim_9957" in last_view[0].parts[0].content


async def test_the_agent_gets_policy_skills_tools_and_tool_errors(
    airline_tasks: dict[str, Task],
    scripted_user: Factory,
) -> None:
    calls: list[tuple[list[ModelMessage], AgentInfo]] = []

    def agent(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        calls.append((messages, info))
        if len(calls) == 1:
            call = ToolCallPart("get_reservation_details", {"reservation_id": "NOPE"}, tool_call_id="c1")
            return ModelResponse(parts=[call])
        return ModelResponse(parts=[TextPart("That reservation does not exist.")])

    task = airline_tasks["0"]
    model = FunctionModel(agent)
    run = await run_simulation(
        task,
        agent=LLMAgent(model, extra_instructions="<skills>Check ids twice.</skills>"),
        user=UserSimulator(scripted_user(["Cancel NOPE."]), task.user_scenario),
    )
    messages, info = calls[1]
    system = messages[0].parts[0]
    assert isinstance(system, SystemPromptPart)
    assert "<policy>\n# Airline Agent Policy" in system.content
    assert system.content.endswith("</policy>\n<skills>Check ids twice.</skills>")
    assert len(info.function_tools) == 14
    returned = [p for m in messages if isinstance(m, ModelRequest) for p in m.parts if isinstance(p, ToolReturnPart)]
    assert [(p.tool_call_id, p.content) for p in returned] == [("c1", "Error: Reservation NOPE not found")]
    assert run.messages[3].error


async def test_the_trajectory_starts_with_the_greeting_and_is_numbered(
    airline_tasks: dict[str, Task],
    scripted_agent: Factory,
    scripted_user: Factory,
) -> None:
    run = await _simulate(airline_tasks["0"], scripted_agent(["Sure."]), scripted_user(["hi"]))
    assert run.messages[0].content == GREETING and run.messages[0].role == "assistant"
    assert [m.turn_idx for m in run.messages] == list(range(len(run.messages)))
    assert [m.role for m in run.messages] == ["assistant", "user", "assistant", "user"]


async def test_each_simulation_is_a_span_with_its_outcome(
    airline_tasks: dict[str, Task],
    scripted_agent: Factory,
    scripted_user: Factory,
    capfire: CaptureLogfire,
) -> None:
    await _simulate(airline_tasks["0"], scripted_agent(["Sure."]), scripted_user(["hi"]))
    spans = [s for s in capfire.exporter.exported_spans_as_dict() if s["name"].startswith("tau2.simulation")]
    assert len(spans) == 1
    attributes = spans[0]["attributes"]
    outcome = (attributes["task_id"], attributes["termination_reason"], attributes["reward"])
    assert outcome == ("0", "user_stop", 1.0)
