"""run_tasks: tasks x trials on one loop, at most `workers` at once, Results written, failures kept."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from ace_eval.tau2 import load_results, load_tasks, regrade_results, run_tasks
from ace_eval.tau2.runner import trial_seeds


def _concurrency_probe() -> tuple[FunctionModel, dict[str, int]]:
    """A user model that says goodbye, recording how many of its calls overlap."""
    counts = {"active": 0, "peak": 0}

    async def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        counts["active"] += 1
        counts["peak"] = max(counts["peak"], counts["active"])
        for _ in range(5):  # yield to the loop so that other simulations can start
            await asyncio.sleep(0)
        counts["active"] -= 1
        return ModelResponse(parts=[TextPart("Bye ###STOP###")])

    return FunctionModel(respond), counts


def _silent_agent() -> FunctionModel:
    return FunctionModel(lambda messages, info: ModelResponse(parts=[TextPart("ok")]), model_name="silent-agent")


async def test_every_task_and_trial_is_simulated_with_bounded_concurrency(tmp_path: Path) -> None:
    user, counts = _concurrency_probe()
    tasks = load_tasks("test")[:3]
    run = await run_tasks(
        tasks, agent_model=_silent_agent(), user_model=user, trials=2, workers=2, output_path=tmp_path / "r.json"
    )
    assert run.failures == []
    assert sorted((s.task_id, s.trial) for s in run.results.simulations) == sorted(
        (task.id, trial) for task in tasks for trial in range(2)
    )
    assert counts["peak"] == 2
    assert {s.seed for s in run.results.simulations} == set(trial_seeds(300, 2))


async def test_the_results_file_is_the_tau2_schema_and_regrades_identically(tmp_path: Path) -> None:
    user, _ = _concurrency_probe()
    run = await run_tasks(
        load_tasks("test")[:4], agent_model=_silent_agent(), user_model=user, workers=3, output_path=tmp_path / "r.json"
    )
    written = load_results(tmp_path / "r.json")
    assert written.info["num_trials"] == 1 and written.info["agent_info"]["llm"] == "silent-agent"
    report = regrade_results(written)
    assert report.agreeing == report.graded == 4
    rewards = [s.reward_info.reward for s in run.results.simulations]
    assert [s.reward_info.reward for s in written.simulations] == rewards


async def test_a_failing_model_is_reported_per_simulation_not_scored(tmp_path: Path) -> None:
    def broken(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        raise ConnectionError("provider unreachable")

    tasks = load_tasks("test")[:2]
    run = await run_tasks(tasks, agent_model=_silent_agent(), user_model=FunctionModel(broken), workers=2)
    assert run.results.simulations == []
    assert sorted(f.task_id for f in run.failures) == sorted(t.id for t in tasks)
    assert all(f.error == "ConnectionError: provider unreachable" for f in run.failures)


def test_trial_seeds_are_deterministic_per_base_seed() -> None:
    assert trial_seeds(300, 3) == trial_seeds(300, 3)
    assert trial_seeds(300, 3) != trial_seeds(301, 3)
    assert trial_seeds(300, 2) == trial_seeds(300, 3)[:2]


async def test_a_step_budget_below_one_is_rejected_before_any_simulation_runs() -> None:
    # Raised by run_tasks itself: inside a simulation it would become one SimulationFailure per task.
    with pytest.raises(ValueError, match="max_steps=0: must be at least 1"):
        await run_tasks(load_tasks("test")[:2], agent_model=_silent_agent(), user_model=_silent_agent(), max_steps=0)
