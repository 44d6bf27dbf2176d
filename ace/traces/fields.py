"""Reading the question, feedback and ground truth out of a sample or a trace of any shape."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ace.traces.sample import Sample

__all__ = ["trace_feedback", "trace_ground_truth", "trace_question", "trace_reward"]


def trace_question(sample: object, trace: Any) -> str:
    """The task: the `Sample`'s question, else the trace's `question`, or a tau2 task's request."""
    if isinstance(sample, Sample):
        return sample.question
    if not isinstance(trace, Mapping):
        return ""
    if isinstance(trace.get("question"), str):
        return trace["question"]
    task = trace.get("task")
    scenario = task.get("user_scenario") if isinstance(task, Mapping) else None
    if isinstance(scenario, Mapping):
        instructions = scenario.get("instructions")
        if isinstance(instructions, Mapping):
            return str(instructions.get("reason_for_call") or "")
        if isinstance(instructions, str):
            return instructions
    return ""


def trace_feedback(trace: Any) -> str | None:
    """Environment feedback recorded in the trace: `feedback`, or a tau2 simulation's reward summary."""
    if not isinstance(trace, Mapping):
        return None
    if isinstance(trace.get("feedback"), str):
        return trace["feedback"]
    nested = trace.get("simulation")
    simulation: Mapping[str, Any] = nested if isinstance(nested, Mapping) else trace
    reward_info = simulation.get("reward_info")
    if isinstance(reward_info, Mapping):
        db_check = reward_info.get("db_check")
        db_match = db_check.get("db_match") if isinstance(db_check, Mapping) else None
        return (
            f"reward={reward_info.get('reward')}; db_match={db_match}; "
            f"termination={simulation.get('termination_reason')}"
        )
    return None


def trace_ground_truth(sample: object, trace: Any) -> str | None:
    """The expected answer, from the `Sample` or the trace's `ground_truth`."""
    if isinstance(sample, Sample) and sample.ground_truth is not None:
        return sample.ground_truth
    if isinstance(trace, Mapping) and trace.get("ground_truth") is not None:
        return str(trace["ground_truth"])
    return None


def trace_reward(trace: Any) -> float | None:
    """The run's graded reward: a tau2 simulation's `reward_info.reward` (the trace's `simulation`,
    or the trace itself), else the environment's `reward` or `correct` metric (1.0 is a full
    success); None when the trace carries no grade."""
    if not isinstance(trace, Mapping):
        return None
    nested = trace.get("simulation")
    simulation: Mapping[str, Any] = nested if isinstance(nested, Mapping) else trace
    reward_info = simulation.get("reward_info")
    if isinstance(reward_info, Mapping) and isinstance(reward_info.get("reward"), (int, float)):
        return float(reward_info["reward"])
    metrics = trace.get("metrics")
    if isinstance(metrics, Mapping):
        graded = metrics.get("reward", metrics.get("correct"))
        if isinstance(graded, (int, float)):
            return float(graded)
    return None
