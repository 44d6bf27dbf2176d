"""tau2 as an ACE task: skills chosen from the user's first message, read_skill answered by the agent,
the graded simulation in the trace and the Results file, feedback that explains the reward."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, SystemPromptPart, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from ace.roles import InjectedSkills, SkillSource
from ace.skillbook import Skillbook
from ace_eval.tau2 import LLMAgent, Task, UserSimulator, load_results, run_simulation
from ace_eval.tau2.ace_task import ResultsLog, Tau2Agent, Tau2Environment, describe_outcome, tau2_samples
from ace_eval.tau2.results import RewardInfo
from ace_eval.tau2.runner import run_info

WRITING_TASK = "7"


class RecordingSource(SkillSource):
    """A SkillSource that remembers the task texts it was asked about."""

    asked: list[str]

    async def for_task(self, task: str) -> InjectedSkills:
        self.asked = [*getattr(self, "asked", []), task]
        return await super().for_task(task)


def _book() -> Skillbook:
    book = Skillbook()
    book.add_skill("context", "Cancelling flights", ["airline"], "Check the insurance first.")
    return book


def _reading_agent(seen_prompts: list[str]) -> FunctionModel:
    """Reads context-00001 on its first turn, then says goodbye; records its system prompt."""

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        system = "".join(
            p.content
            for m in messages
            if isinstance(m, ModelRequest)
            for p in m.parts
            if isinstance(p, SystemPromptPart)
        )
        seen_prompts.append(system)
        if len([m for m in messages if isinstance(m, ModelResponse)]) == 1:  # only the greeting so far
            return ModelResponse(parts=[ToolCallPart("read_skill", {"skill_id": "context-00001"}, tool_call_id="r1")])
        return ModelResponse(parts=[TextPart("I cannot help with that.")])

    return FunctionModel(respond, model_name="reading-agent")


async def test_skills_are_chosen_from_the_users_first_message_never_the_scenario(
    airline_tasks: dict[str, Task], scripted_user: Callable[..., FunctionModel]
) -> None:
    task = airline_tasks[WRITING_TASK]
    source = RecordingSource(_book(), injection="all")
    prompts: list[str] = []
    agent = LLMAgent(_reading_agent(prompts), skills=source)

    await run_simulation(
        task, agent=agent, user=UserSimulator(scripted_user(["Hello, I need help with a booking."]), task.user_scenario)
    )

    assert source.asked == ["Hello, I need help with a booking."]
    assert "Check the insurance first." in prompts[0]
    assert task.user_scenario.instructions.task_instructions not in prompts[0]


async def test_read_skill_is_answered_by_the_agent_and_does_not_touch_the_grade(
    airline_tasks: dict[str, Task], scripted_user: Callable[..., FunctionModel]
) -> None:
    task = airline_tasks[WRITING_TASK]
    source = SkillSource(_book(), injection="tool")
    prompts: list[str] = []

    run = await run_simulation(
        task,
        agent=LLMAgent(_reading_agent(prompts), skills=source),
        user=UserSimulator(scripted_user(["Hi."]), task.user_scenario),
    )

    calls = [c for m in run.messages if m.role == "assistant" for c in m.tool_calls or ()]
    answer = next(m for m in run.messages if m.role == "tool")
    assert [c.name for c in calls] == ["read_skill"]
    assert "Check the insurance first." in (answer.content or "") and not answer.error
    assert "[context-00001] Cancelling flights" in prompts[0] and "Check the insurance first." not in prompts[0]
    assert source.used_skill_ids == ("context-00001",)
    baseline = await run_simulation(
        task, agent=LLMAgent(_reading_agent([])), user=UserSimulator(scripted_user(["Hi."]), task.user_scenario)
    )
    assert run.reward_info.model_dump() == baseline.reward_info.model_dump()


async def test_tau2_agent_records_the_graded_simulation_in_trace_and_results_file(
    airline_tasks: dict[str, Task], scripted_user: Callable[..., FunctionModel], tmp_path: Path
) -> None:
    task = airline_tasks[WRITING_TASK]
    info = run_info(
        agent="reading-agent",
        user="scripted",
        trials=1,
        max_steps=200,
        max_errors=10,
        agent_settings=LLMAgent.DEFAULT_SETTINGS,
        user_settings=UserSimulator.DEFAULT_SETTINGS,
    )
    log = ResultsLog(info, [task])
    log.open(tmp_path / "results.json")
    source = SkillSource(_book(), injection="tool")
    [sample] = tau2_samples([task])

    output = await Tau2Agent(_reading_agent([]), scripted_user(["Hi."]), log=log).answer(
        sample.question, skills=source, sample=sample
    )

    simulation = output.trace_fields["simulation"]
    assert output.injected_skill_ids == ("context-00001",) == tuple(simulation["injected_skill_ids"])
    assert simulation["skill_injection"] == "tool" and output.trace_fields["task"]["id"] == task.id
    [recorded] = load_results(tmp_path / "results.json").simulations
    assert recorded.id == simulation["id"] and recorded.injected_skill_ids == ["context-00001"]
    verdict = Tau2Environment().evaluate(sample, output)
    assert verdict.metrics["reward"] == recorded.reward_info.reward
    assert verdict.feedback == describe_outcome(recorded.reward_info, recorded.termination_reason)


async def test_tau2_agent_refuses_a_sample_without_a_task(scripted_user: Callable[..., FunctionModel]) -> None:
    with pytest.raises(ValueError, match="tau2_samples"):
        await Tau2Agent(_reading_agent([]), scripted_user([])).answer("Hi", skills=SkillSource(Skillbook()))


def test_samples_carry_task_trial_and_upstream_seed(airline_tasks: dict[str, Task]) -> None:
    tasks = [airline_tasks["0"], airline_tasks["1"]]

    samples = tau2_samples(tasks, trials=2)

    assert [(s.metadata["task"].id, s.metadata["trial"]) for s in samples] == [("0", 0), ("1", 0), ("0", 1), ("1", 1)]
    assert samples[0].metadata["seed"] == samples[1].metadata["seed"] != samples[2].metadata["seed"]
    assert samples[0].question == tasks[0].user_scenario.instructions.reason_for_call


def test_feedback_explains_a_failed_grade(recorded_paths: list[Path]) -> None:
    failed = [
        sim
        for path in recorded_paths
        for sim in load_results(path).simulations
        if sim.reward_info
        and sim.reward_info.db_check
        and not sim.reward_info.db_check.db_match
        and any(not check.action_match for check in sim.reward_info.action_checks or [])
    ]
    simulation = failed[0]

    feedback = describe_outcome(simulation.reward_info, simulation.termination_reason)

    assert feedback.startswith("reward 0 (task failed)")
    assert "database: does NOT match the expected end state" in feedback
    missed = next(check.action for check in simulation.reward_info.action_checks if not check.action_match)
    assert f"{missed.name}(" in feedback


def test_feedback_of_a_premature_ending_says_it_was_not_graded() -> None:
    feedback = describe_outcome(RewardInfo(reward=0.0), "max_steps")

    assert feedback.splitlines() == [
        "reward 0 (task failed)",
        "ended by max_steps: the step limit was reached",
        "not graded further: only a user or agent stop can earn a reward",
    ]


def test_results_log_rewrites_the_file_after_each_simulation_and_open_starts_afresh(
    airline_tasks: dict[str, Task], recorded_paths: list[Path], tmp_path: Path
) -> None:
    recorded = load_results(recorded_paths[0])
    log = ResultsLog(recorded.info, recorded.tasks)
    log.open(tmp_path / "a.json")
    assert json.loads((tmp_path / "a.json").read_text())["simulations"] == []

    log.add(recorded.simulations[0])
    log.add(recorded.simulations[1])
    assert len(load_results(tmp_path / "a.json").simulations) == 2

    log.open(tmp_path / "b.json")
    log.add(recorded.simulations[2])
    assert len(load_results(tmp_path / "a.json").simulations) == 2
    assert [s.id for s in load_results(tmp_path / "b.json").simulations] == [recorded.simulations[2].id]
