"""pass^k (upstream formula), a seeded bootstrap 95% CI over tasks (`ace_eval.stats`), and a per-task table."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from math import comb
from typing import Any

import numpy as np

from ace.errors import UsageError
from ace_eval.stats import bootstrap_ci
from ace_eval.tau2.errors import Tau2Error
from ace_eval.tau2.results import SimulationRun

__all__ = [
    "Tau2Metrics",
    "TaskRow",
    "compute_metrics",
    "format_metrics",
    "format_summary",
    "is_success",
    "metrics_from_rewards",
    "metrics_to_dict",
    "pass_hat_k",
    "task_order",
]


def is_success(reward: float) -> bool:
    """Upstream: a run succeeds when its reward is 1 (within 1e-6)."""
    return abs(reward - 1.0) <= 1e-6


def pass_hat_k(trials: int, successes: int, k: int) -> float:
    """pass^k of one task: C(successes, k) / C(trials, k). Raises `ValueError` unless 1 <= k <= trials."""
    if not 1 <= k <= trials:
        raise UsageError(f"k={k} must be between 1 and the number of trials ({trials})")
    return comb(successes, k) / comb(trials, k)


def task_order(task_id: str) -> tuple[int, str]:
    """Sort key of task ids: numeric ids numerically, then the others alphabetically."""
    return (int(task_id), "") if task_id.isdigit() else (1 << 30, task_id)


@dataclass(frozen=True)
class TaskRow:
    """One task's line of the per-task table."""

    task_id: str
    """The task."""
    trials: int
    """Graded simulations of the task."""
    successes: int
    """Simulations with reward 1."""
    mean_reward: float
    """Mean reward over its simulations."""
    pass_hat: dict[int, float]
    """pass^k of this task for k = 1..max_k."""


@dataclass(frozen=True)
class Tau2Metrics:
    """Aggregate metrics of a set of graded simulations."""

    num_tasks: int
    """Distinct tasks."""
    num_simulations: int
    """Graded simulations."""
    average_reward: float
    """Mean reward over all simulations."""
    pass_hat_k: dict[int, float]
    """pass^k averaged over tasks, k = 1..max_k (max_k = fewest trials of any task)."""
    ci95: dict[int, tuple[float, float]]
    """Bootstrap confidence interval of each pass^k, resampling tasks."""
    per_task: tuple[TaskRow, ...]
    """One row per task, in task-id order."""


def compute_metrics(
    simulations: Sequence[SimulationRun], *, n_bootstrap: int = 2000, seed: int = 0, confidence: float = 0.95
) -> Tau2Metrics:
    """Compute pass^k for k = 1..min trials per task, with a seeded bootstrap CI over tasks.

    Raises `Tau2Error` when there is no simulation or one has no `reward_info` (grade it first).
    """
    if not simulations:
        raise Tau2Error("no simulations to compute metrics over")
    rewards: dict[str, list[float]] = defaultdict(list)
    for simulation in simulations:
        if simulation.reward_info is None:
            raise Tau2Error(
                f"simulation {simulation.id} (task {simulation.task_id}) has no reward_info; grade it first"
            )
        rewards[simulation.task_id].append(simulation.reward_info.reward)
    return metrics_from_rewards(rewards, n_bootstrap=n_bootstrap, seed=seed, confidence=confidence)


def metrics_from_rewards(
    rewards: Mapping[str, Sequence[float]], *, n_bootstrap: int = 2000, seed: int = 0, confidence: float = 0.95
) -> Tau2Metrics:
    """`compute_metrics` from the rewards of each task's trials (task id -> rewards).

    Raises `Tau2Error` when there is no task or a task has no reward.
    """
    if not rewards:
        raise Tau2Error("no rewards to compute metrics over")
    empty = [task_id for task_id, values in rewards.items() if not values]
    if empty:
        raise Tau2Error(
            f"task(s) {', '.join(sorted(empty, key=task_order))} have no reward; give each task at least one"
        )
    max_k = min(len(values) for values in rewards.values())
    rows = []
    for task_id in sorted(rewards, key=task_order):
        values = rewards[task_id]
        successes = sum(is_success(value) for value in values)
        rows.append(
            TaskRow(
                task_id=task_id,
                trials=len(values),
                successes=successes,
                mean_reward=sum(values) / len(values),
                pass_hat={k: pass_hat_k(len(values), successes, k) for k in range(1, max_k + 1)},
            )
        )
    pass_k, ci = {}, {}
    for k in range(1, max_k + 1):
        per_task = [row.pass_hat[k] for row in rows]
        pass_k[k] = float(np.mean(per_task))
        ci[k] = bootstrap_ci(per_task, n_bootstrap=n_bootstrap, seed=seed, confidence=confidence)
    all_rewards = [value for values in rewards.values() for value in values]
    return Tau2Metrics(
        num_tasks=len(rows),
        num_simulations=len(all_rewards),
        average_reward=sum(all_rewards) / len(all_rewards),
        pass_hat_k=pass_k,
        ci95=ci,
        per_task=tuple(rows),
    )


def metrics_to_dict(metrics: Tau2Metrics) -> dict[str, Any]:
    """`metrics` as JSON-ready data: the dataclass fields, k keys as strings, intervals as 2-lists."""
    return {
        "num_tasks": metrics.num_tasks,
        "num_simulations": metrics.num_simulations,
        "average_reward": metrics.average_reward,
        "pass_hat_k": {str(k): value for k, value in metrics.pass_hat_k.items()},
        "ci95": {str(k): list(interval) for k, interval in metrics.ci95.items()},
        "per_task": [
            {
                "task_id": row.task_id,
                "trials": row.trials,
                "successes": row.successes,
                "mean_reward": row.mean_reward,
                "pass_hat": {str(k): value for k, value in row.pass_hat.items()},
            }
            for row in metrics.per_task
        ],
    }


def format_summary(metrics: Tau2Metrics) -> str:
    """The summary lines of `format_metrics`: counts and average reward, then pass^k with its CI per k."""
    lines = [
        f"tasks {metrics.num_tasks}, simulations {metrics.num_simulations}, average reward {metrics.average_reward:.3f}"
    ]
    for k, value in metrics.pass_hat_k.items():
        low, high = metrics.ci95[k]
        lines.append(f"pass^{k} {value:.3f}  95% CI [{low:.3f}, {high:.3f}]")
    return "\n".join(lines)


def format_metrics(metrics: Tau2Metrics) -> str:
    """A plain-text report: summary lines, then the per-task table."""
    ks = list(metrics.pass_hat_k)
    lines = [format_summary(metrics), "task  trials  successes  mean_reward  " + "  ".join(f"pass^{k}" for k in ks)]
    for row in metrics.per_task:
        cells = "  ".join(f"{row.pass_hat[k]:6.3f}" for k in ks)
        lines.append(f"{row.task_id:>4}  {row.trials:>6}  {row.successes:>9}  {row.mean_reward:>11.3f}  {cells}")
    return "\n".join(lines)
