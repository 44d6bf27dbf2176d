"""pass^k by upstream's formula, the bootstrap CI over tasks, and the per-task table."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ace_eval.tau2 import Tau2Error, compute_metrics, format_metrics, load_results, pass_hat_k
from ace_eval.tau2.metrics import format_summary, metrics_from_rewards, metrics_to_dict
from ace_eval.tau2.results import AssistantMessage, RewardInfo, SimulationRun


def _run(task_id: str, trial: int, reward: float | None) -> SimulationRun:
    return SimulationRun(
        id=f"{task_id}-{trial}",
        task_id=task_id,
        trial=trial,
        termination_reason="user_stop",
        messages=[AssistantMessage(content="Hi")],
        reward_info=None if reward is None else RewardInfo(reward=reward),
    )


def test_pass_hat_k_is_successes_choose_k_over_trials_choose_k() -> None:
    assert [pass_hat_k(4, 2, k) for k in (1, 2, 3, 4)] == [0.5, 1 / 6, 0.0, 0.0]
    assert pass_hat_k(3, 3, 3) == 1.0


def test_pass_hat_k_rejects_k_outside_the_trials() -> None:
    with pytest.raises(ValueError, match="k=3"):
        pass_hat_k(2, 1, 3)


def test_metrics_average_pass_hat_k_over_tasks_up_to_the_fewest_trials() -> None:
    runs = [_run("1", 0, 1.0), _run("1", 1, 1.0), _run("1", 2, 0.0), _run("2", 0, 1.0), _run("2", 1, 0.0)]
    metrics = compute_metrics(runs)
    assert list(metrics.pass_hat_k) == [1, 2]
    assert metrics.pass_hat_k[1] == pytest.approx((2 / 3 + 1 / 2) / 2)
    assert metrics.pass_hat_k[2] == pytest.approx((1 / 3 + 0) / 2)
    assert [(row.task_id, row.trials, row.successes) for row in metrics.per_task] == [("1", 3, 2), ("2", 2, 1)]


def test_bootstrap_interval_is_seeded_and_spans_the_task_values() -> None:
    runs = [_run(str(task), 0, float(task % 3 == 0)) for task in range(30)]
    first, again = compute_metrics(runs, seed=7), compute_metrics(runs, seed=7)
    low, high = first.ci95[1]
    assert first.ci95 == again.ci95
    assert 0.0 <= low < first.pass_hat_k[1] < high <= 1.0


def test_a_reward_just_below_one_is_not_a_success() -> None:
    assert compute_metrics([_run("1", 0, 0.999)]).pass_hat_k[1] == 0.0
    assert compute_metrics([_run("1", 0, 1.0 - 1e-9)]).pass_hat_k[1] == 1.0


def test_ungraded_simulations_are_refused() -> None:
    with pytest.raises(Tau2Error, match="no reward_info"):
        compute_metrics([_run("1", 0, None)])


def test_recorded_gpt41_run_has_pass1_of_one_half(recorded_paths: list[Path]) -> None:
    results = load_results(next(p for p in recorded_paths if "sierra" in p.name))
    metrics = compute_metrics(results.simulations)
    assert metrics.pass_hat_k == {1: 0.5}
    report = format_metrics(metrics)
    assert "pass^1 0.500" in report and len(report.splitlines()) == 2 + 1 + 20


def test_metrics_from_rewards_equals_compute_metrics_on_the_same_runs() -> None:
    runs = [
        _run("10", 0, 1.0),
        _run("2", 0, 0.0),
        _run("10", 1, 0.5),
        _run("2", 1, 1.0),
        _run("x", 0, 1.0),
        _run("x", 1, 1.0),
    ]
    rewards = {"10": [1.0, 0.5], "2": [0.0, 1.0], "x": [1.0, 1.0]}
    assert metrics_from_rewards(rewards, seed=3, n_bootstrap=100) == compute_metrics(runs, seed=3, n_bootstrap=100)


def test_metrics_from_rewards_orders_numeric_task_ids_numerically() -> None:
    metrics = metrics_from_rewards({"10": [1.0], "x": [0.0], "9": [0.0]})
    assert [row.task_id for row in metrics.per_task] == ["9", "10", "x"]


def test_metrics_from_rewards_refuses_no_task_and_a_task_without_rewards() -> None:
    with pytest.raises(Tau2Error, match="no rewards"):
        metrics_from_rewards({})
    with pytest.raises(Tau2Error, match="task\\(s\\) 7 have no reward"):
        metrics_from_rewards({"1": [1.0], "7": []})


def test_metrics_to_dict_survives_a_json_round_trip_with_string_k_keys() -> None:
    metrics = metrics_from_rewards({"1": [1.0, 0.0], "2": [1.0, 1.0]})
    data = metrics_to_dict(metrics)
    assert json.loads(json.dumps(data)) == data
    assert data["pass_hat_k"] == {"1": 0.75, "2": 0.5}
    assert data["ci95"]["1"] == list(metrics.ci95[1])
    assert data["per_task"][0] == {
        "task_id": "1",
        "trials": 2,
        "successes": 1,
        "mean_reward": 0.5,
        "pass_hat": {"1": 0.5, "2": 0.0},
    }


def test_format_summary_is_the_head_of_format_metrics_without_the_table() -> None:
    metrics = metrics_from_rewards({"1": [1.0, 0.0], "2": [1.0, 1.0]})
    summary = format_summary(metrics)
    assert len(summary.splitlines()) == 1 + 2
    assert format_metrics(metrics).startswith(summary + "\ntask  trials")
