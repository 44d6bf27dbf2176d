"""pass^k (upstream formula), a seeded bootstrap 95% CI over tasks, and a per-task table."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from math import comb

import numpy as np

from ace_eval.tau2.errors import Tau2Error
from ace_eval.tau2.results import SimulationRun

__all__ = ["Tau2Metrics", "TaskRow", "compute_metrics", "format_metrics", "is_success", "pass_hat_k"]


def is_success(reward: float) -> bool:
    """Upstream: a run succeeds when its reward is 1 (within 1e-6)."""
    return abs(reward - 1.0) <= 1e-6


def pass_hat_k(trials: int, successes: int, k: int) -> float:
    """pass^k of one task: C(successes, k) / C(trials, k). Raises `ValueError` unless 1 <= k <= trials."""
    if not 1 <= k <= trials:
        raise ValueError(f"k={k} must be between 1 and the number of trials ({trials})")
    return comb(successes, k) / comb(trials, k)


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
    max_k = min(len(values) for values in rewards.values())
    rows = []
    for task_id in sorted(rewards, key=_task_order):
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
    rng = np.random.default_rng(seed)
    resamples = rng.integers(0, len(rows), size=(n_bootstrap, len(rows)))
    tail = (1.0 - confidence) / 2 * 100
    pass_k, ci = {}, {}
    for k in range(1, max_k + 1):
        per_task = np.array([row.pass_hat[k] for row in rows])
        pass_k[k] = float(per_task.mean())
        means = per_task[resamples].mean(axis=1)
        ci[k] = (float(np.percentile(means, tail)), float(np.percentile(means, 100 - tail)))
    all_rewards = [value for values in rewards.values() for value in values]
    return Tau2Metrics(
        num_tasks=len(rows),
        num_simulations=len(all_rewards),
        average_reward=sum(all_rewards) / len(all_rewards),
        pass_hat_k=pass_k,
        ci95=ci,
        per_task=tuple(rows),
    )


def _task_order(task_id: str) -> tuple[int, str]:
    return (int(task_id), "") if task_id.isdigit() else (1 << 30, task_id)


def format_metrics(metrics: Tau2Metrics) -> str:
    """A plain-text report: summary lines, then the per-task table."""
    lines = [
        f"tasks {metrics.num_tasks}, simulations {metrics.num_simulations}, "
        f"average reward {metrics.average_reward:.3f}"
    ]
    for k, value in metrics.pass_hat_k.items():
        low, high = metrics.ci95[k]
        lines.append(f"pass^{k} {value:.3f}  95% CI [{low:.3f}, {high:.3f}]")
    ks = list(metrics.pass_hat_k)
    lines.append("task  trials  successes  mean_reward  " + "  ".join(f"pass^{k}" for k in ks))
    for row in metrics.per_task:
        cells = "  ".join(f"{row.pass_hat[k]:6.3f}" for k in ks)
        lines.append(f"{row.task_id:>4}  {row.trials:>6}  {row.successes:>9}  {row.mean_reward:>11.3f}  {cells}")
    return "\n".join(lines)
