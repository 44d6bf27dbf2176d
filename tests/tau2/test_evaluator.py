"""The grader reproduces upstream: recorded rewards, gold replay, and the no-write baseline."""

from __future__ import annotations

from pathlib import Path

import pytest

from ace_eval.tau2 import (
    evaluate_simulation,
    gold_db_hash,
    initial_db_hash,
    load_results,
    load_split,
    regrade_results,
    trajectory_db_hash,
)
from ace_eval.tau2.results import AssistantMessage, ToolCall, ToolMessage, UserMessage
from ace_eval.tau2.tasks import Task


def test_every_recorded_db_check_and_reward_is_reproduced(recorded_paths: list[Path]) -> None:
    graded = agreeing = 0
    for path in recorded_paths:
        report = regrade_results(load_results(path))
        graded += report.graded
        agreeing += report.agreeing
        disagreeing = [(sim.task_id, sim.trial) for sim in report.simulations if sim.graded and not sim.agrees]
        assert disagreeing == [], path.name
    assert graded == 115
    assert agreeing == graded


def test_recorded_action_and_communicate_checks_are_reproduced(recorded_paths: list[Path]) -> None:
    compared = 0
    for path in recorded_paths:
        for sim in regrade_results(load_results(path)).simulations:
            if sim.recorded and sim.recorded.action_checks is not None:
                compared += 1
                assert [c.action_match for c in sim.computed.action_checks] == [
                    c.action_match for c in sim.recorded.action_checks
                ]
            if sim.recorded and sim.recorded.communicate_checks is not None:
                compared += 1
                computed = [c.met for c in sim.computed.communicate_checks]
                assert computed == [c.met for c in sim.recorded.communicate_checks]
    assert compared > 100


def test_premature_endings_score_zero_without_grading(recorded_paths: list[Path]) -> None:
    results = load_results(next(p for p in recorded_paths if "gpt-oss" in p.name))
    tasks = {task.id: task for task in results.tasks}
    premature = [sim for sim in results.simulations if sim.termination_reason in {"max_steps", "too_many_errors"}]
    assert len(premature) == 6
    for sim in premature:
        info = evaluate_simulation(tasks[sim.task_id], sim.messages, sim.termination_reason)
        assert info.reward == 0.0 and info.db_check is None
        assert info.info == sim.reward_info.info


def _trajectory_of_gold(task: Task, final_text: str) -> list:
    messages: list = [AssistantMessage(content="Hi! How can I help you today?"), UserMessage(content="help")]
    for index, action in enumerate(task.evaluation_criteria.actions or ()):
        call = ToolCall(id=f"g{index}", name=action.name, arguments=action.arguments)
        messages += [AssistantMessage(tool_calls=[call]), ToolMessage(id=call.id, content="ok")]
    return messages + [AssistantMessage(content=final_text), UserMessage(content="###STOP###")]


def test_replaying_gold_actions_gives_the_gold_hash(airline_tasks: dict[str, Task]) -> None:
    writing = [task for task in airline_tasks.values() if gold_db_hash(task) != initial_db_hash()]
    assert len(writing) == 26
    for task in writing[:8]:
        assert trajectory_db_hash(_trajectory_of_gold(task, "Done.")) == gold_db_hash(task)


def test_a_trajectory_without_writes_passes_exactly_the_unchanged_db_tasks(airline_tasks: dict[str, Task]) -> None:
    no_writes = [AssistantMessage(content="Hi! How can I help you today?"), UserMessage(content="bye ###STOP###")]
    passed = {
        task.id for task in airline_tasks.values() if evaluate_simulation(task, no_writes, "user_stop").reward == 1.0
    }
    unchanged = {task.id for task in airline_tasks.values() if gold_db_hash(task) == initial_db_hash()}
    says_nothing_needed = {task.id for task in airline_tasks.values() if not task.evaluation_criteria.communicate_info}
    assert passed == unchanged & says_nothing_needed
    assert len(passed) == 23
    assert len(passed & set(load_split("test"))) == 7


def test_communicate_ignores_case_and_commas_in_agent_text(airline_tasks: dict[str, Task]) -> None:
    task = airline_tasks["14"]  # communicate_info ['327', '1000', '1786']
    said = _trajectory_of_gold(task, "Refund of $327, then $1,000 and a total of $1,786.")
    unsaid = _trajectory_of_gold(task, "Refund of $327 and $1,000.")
    assert evaluate_simulation(task, said, "user_stop").reward == 1.0
    graded = evaluate_simulation(task, unsaid, "user_stop")
    assert graded.reward == 0.0 and graded.db_check.db_match
    assert [check.met for check in graded.communicate_checks] == [True, True, False]


def test_a_wrong_write_fails_the_db_check(airline_tasks: dict[str, Task]) -> None:
    task = airline_tasks["0"]  # gold: refuse to cancel
    call = ToolCall(id="x", name="cancel_reservation", arguments={"reservation_id": "EHGLP3"})
    messages = [AssistantMessage(tool_calls=[call]), ToolMessage(id="x", content="{}"), UserMessage(content="bye")]
    graded = evaluate_simulation(task, messages, "user_stop")
    assert (graded.reward, graded.db_check.db_match) == (0.0, False)


@pytest.mark.parametrize("reason", ["max_steps", "too_many_errors", "agent_error", "user_error"])
def test_only_user_or_agent_stops_can_earn_a_reward(airline_tasks: dict[str, Task], reason: str) -> None:
    no_writes = [AssistantMessage(content="Hi!")]
    assert evaluate_simulation(airline_tasks["0"], no_writes, "user_stop").reward == 1.0
    assert evaluate_simulation(airline_tasks["0"], no_writes, reason).reward == 0.0
