"""The paired comparison of the benchmark's two arms: same tasks and trials, failures scored 0, paired CI."""

from __future__ import annotations

import dataclasses
import json

import pytest

from ace_eval.e2e.paired import (
    PairedComparison,
    TaskChange,
    TrialOutcome,
    format_paired,
    paired_comparison,
    paired_to_dict,
)


def _arm(rewards: dict[str, list[float]]) -> list[TrialOutcome]:
    """One outcome per reward; a task's trials are numbered 0, 1, ... in list order."""
    return [
        TrialOutcome(task_id, trial, reward)
        for task_id, values in rewards.items()
        for trial, reward in enumerate(values)
    ]


def test_identical_arms_differ_by_zero_with_a_zero_interval() -> None:
    arm = _arm({"1": [1.0, 0.0], "2": [1.0, 1.0], "3": [0.0, 0.0], "4": [0.0, 1.0]})

    comparison = paired_comparison(arm, list(arm))

    assert comparison.difference == 0.0
    assert comparison.difference_ci95 == (0.0, 0.0)
    assert comparison.newly_passing == comparison.newly_failing == ()
    assert comparison.baseline == comparison.with_skills


def test_difference_is_with_skills_pass1_minus_baseline_pass1() -> None:
    baseline = _arm({"1": [1.0, 0.0], "2": [0.0, 0.0]})  # pass^1 = (1/2 + 0) / 2
    with_skills = _arm({"1": [1.0, 1.0], "2": [1.0, 0.0]})  # pass^1 = (1 + 1/2) / 2

    comparison = paired_comparison(baseline, with_skills)

    assert comparison.baseline.pass_hat_k[1] == pytest.approx(0.25)
    assert comparison.with_skills.pass_hat_k[1] == pytest.approx(0.75)
    assert comparison.difference == pytest.approx(0.5)


def test_a_trial_that_raised_counts_as_zero_and_is_listed() -> None:
    raised = TrialOutcome("1", 0, 0.0, error="TimeoutError: the provider did not answer")
    baseline = [raised, TrialOutcome("1", 1, 1.0), TrialOutcome("2", 0, 1.0), TrialOutcome("2", 1, 1.0)]
    with_skills = _arm({"1": [1.0, 1.0], "2": [1.0, 1.0]})

    comparison = paired_comparison(baseline, with_skills)

    assert comparison.baseline.num_simulations == 4
    assert comparison.baseline.pass_hat_k[1] == pytest.approx((1 / 2 + 1) / 2)
    assert comparison.baseline_failures == (raised,)
    assert comparison.with_skills_failures == ()
    assert comparison.newly_passing == (TaskChange("1", trials=2, baseline_successes=1, with_skills_successes=2),)


def test_a_trial_that_raised_with_a_nonzero_reward_is_refused() -> None:
    with pytest.raises(ValueError, match="task 1 trial 0 raised .* has reward 1.0"):
        TrialOutcome("1", 0, 1.0, error="RuntimeError: boom")


def test_arms_over_different_tasks_raise_naming_the_pairs_in_one_arm_only() -> None:
    baseline = _arm({"1": [1.0], "2": [1.0]})
    with_skills = _arm({"1": [1.0], "3": [1.0]})

    with pytest.raises(ValueError) as raised:
        paired_comparison(baseline, with_skills)

    message = str(raised.value)
    assert "only in baseline: task 2 trial 0" in message
    assert "only in with_skills: task 3 trial 0" in message
    assert "both arms must run the same tasks and trials" in message


def test_arms_over_different_trials_of_a_task_raise_naming_the_missing_trial() -> None:
    with pytest.raises(ValueError, match="only in baseline: task 1 trial 1; both arms must run the same"):
        paired_comparison(_arm({"1": [1.0, 0.0]}), _arm({"1": [1.0]}))


def test_a_mismatch_message_names_the_first_five_pairs_and_counts_the_rest() -> None:
    baseline = _arm({str(task): [1.0] for task in range(1, 9)})  # tasks 1..8

    with pytest.raises(ValueError, match="task 6 trial 0 and 2 more;") as raised:
        paired_comparison(baseline, _arm({"1": [1.0]}))

    assert "task 7" not in str(raised.value)


def test_a_trial_given_twice_in_one_arm_raises() -> None:
    baseline = [TrialOutcome("1", 0, 1.0), TrialOutcome("1", 0, 0.0)]

    with pytest.raises(ValueError, match="baseline arm has task 1 trial 0 more than once"):
        paired_comparison(baseline, _arm({"1": [1.0]}))


@pytest.mark.parametrize("empty_arm", ["baseline", "with_skills"])
def test_an_empty_arm_raises(empty_arm: str) -> None:
    arms = {"baseline": _arm({"1": [1.0]}), "with_skills": _arm({"1": [1.0]})}
    arms[empty_arm] = []

    with pytest.raises(ValueError, match=f"the {empty_arm} arm has no trial outcomes"):
        paired_comparison(arms["baseline"], arms["with_skills"])


def test_newly_passing_and_failing_with_one_trial_in_numeric_task_order() -> None:
    baseline = _arm({"12": [0.0], "9": [0.0], "2": [1.0], "3": [1.0]})
    with_skills = _arm({"12": [1.0], "9": [1.0], "2": [0.0], "3": [1.0]})

    comparison = paired_comparison(baseline, with_skills)

    assert comparison.newly_passing == (TaskChange("9", 1, 0, 1), TaskChange("12", 1, 0, 1))
    assert comparison.newly_failing == (TaskChange("2", 1, 1, 0),)


def test_newly_passing_and_failing_with_two_trials_compare_success_counts() -> None:
    baseline = _arm({"1": [1.0, 0.0], "2": [1.0, 1.0], "3": [1.0, 0.0], "4": [0.0, 0.0]})
    # Task 3 keeps one success (on the other trial), so it changed in neither direction.
    with_skills = _arm({"1": [1.0, 1.0], "2": [0.0, 1.0], "3": [0.0, 1.0], "4": [0.0, 0.0]})

    comparison = paired_comparison(baseline, with_skills)

    assert comparison.newly_passing == (TaskChange("1", 2, 1, 2),)
    assert comparison.newly_failing == (TaskChange("2", 2, 2, 1),)


def test_one_extra_success_gives_a_paired_interval_that_never_goes_below_zero() -> None:
    # Task difficulty varies as much as it can (10 tasks always pass, 10 never do); with skills, task
    # 10 also passes. Every paired resample's difference is >= 0; each arm's own interval is wide.
    baseline = _arm({str(task): [float(task < 10)] for task in range(20)})
    with_skills = _arm({str(task): [float(task <= 10)] for task in range(20)})

    comparison = paired_comparison(baseline, with_skills)

    low, high = comparison.difference_ci95
    assert comparison.difference == pytest.approx(1 / 20)
    assert 0.0 <= low <= comparison.difference < high
    assert comparison.with_skills.ci95[1][0] < comparison.baseline.pass_hat_k[1]
    for arm in (comparison.baseline, comparison.with_skills):
        arm_low, arm_high = arm.ci95[1]
        assert high - low < arm_high - arm_low


def test_the_comparison_is_determined_by_the_seed() -> None:
    # Three trials and few resamples, so that the interval's ends depend on the resamples drawn.
    baseline = _arm({str(task): [float(task % 2 == 0), float(task % 5 == 0), 0.0] for task in range(12)})
    with_skills = _arm({str(task): [float(task % 3 == 0), 1.0, float(task % 4 == 0)] for task in range(12)})

    first = paired_comparison(baseline, with_skills, n_bootstrap=50, seed=5)

    assert paired_comparison(baseline, with_skills, n_bootstrap=50, seed=5) == first
    assert paired_comparison(baseline, with_skills, n_bootstrap=50, seed=6).difference_ci95 != first.difference_ci95


def test_the_order_of_the_outcomes_does_not_change_the_comparison() -> None:
    baseline = _arm({"1": [1.0, 0.0], "2": [0.0, 0.0], "10": [1.0, 1.0]})
    with_skills = _arm({"1": [1.0, 1.0], "2": [0.0, 1.0], "10": [1.0, 0.0]})

    comparison = paired_comparison(baseline, with_skills)

    assert paired_comparison(baseline[::-1], with_skills[::-1]) == comparison


def test_format_paired_shows_both_arms_the_difference_the_changed_tasks_and_failures() -> None:
    baseline = [TrialOutcome("12", 0, 0.0), TrialOutcome("2", 0, 1.0), TrialOutcome("3", 0, 0.0, error="E: x")]
    with_skills = _arm({"12": [1.0], "2": [1.0], "3": [0.0]})
    comparison = paired_comparison(baseline, with_skills)

    text = format_paired(comparison)

    assert f"pass^1 {1 / 3:.3f}" in text and f"pass^1 {2 / 3:.3f}" in text
    low, high = comparison.difference_ci95
    assert f"{1 / 3:+.3f}" in text and f"[{low:+.3f}, {high:+.3f}]" in text
    assert "newly passing (1): 12 (0/1 -> 1/1)" in text
    assert "newly failing (0): none" in text
    assert "baseline 1, with skills 0" in text
    assert "task  trials" not in text  # no per-task table


def test_paired_to_dict_is_json_ready_and_has_every_field() -> None:
    raised = TrialOutcome("2", 0, 0.0, error="E: x")
    comparison = paired_comparison(_arm({"1": [0.0], "2": [1.0]}), [TrialOutcome("1", 0, 1.0), raised])

    data = paired_to_dict(comparison)

    assert json.loads(json.dumps(data)) == data
    assert set(data) == {field.name for field in dataclasses.fields(PairedComparison)}
    assert data["difference"] == comparison.difference
    assert data["difference_ci95"] == list(comparison.difference_ci95)
    assert data["baseline"]["pass_hat_k"] == {"1": 0.5}
    assert data["newly_passing"] == [{"task_id": "1", "trials": 1, "baseline_successes": 0, "with_skills_successes": 1}]
    assert data["newly_failing"] == [{"task_id": "2", "trials": 1, "baseline_successes": 1, "with_skills_successes": 0}]
    assert data["baseline_failures"] == []
    assert data["with_skills_failures"] == [{"task_id": "2", "trial": 0, "reward": 0.0, "error": "E: x"}]


def test_mcnemar_p_counts_the_trials_that_succeeded_in_one_arm_only() -> None:
    # 5 (task, trial) pairs pass only with skills, 1 only without: p = 2 * (1 + 6) / 2**6 = 0.21875
    baseline = _arm({"1": [0.0, 0.0, 0.0], "2": [0.0, 0.0, 1.0], "3": [1.0, 1.0, 1.0]})
    with_skills = _arm({"1": [1.0, 1.0, 1.0], "2": [1.0, 1.0, 0.0], "3": [1.0, 1.0, 1.0]})

    comparison = paired_comparison(baseline, with_skills)

    assert comparison.mcnemar_p == pytest.approx(0.21875)
    assert paired_to_dict(comparison)["mcnemar_p"] == comparison.mcnemar_p
    assert "exact McNemar p=0.219" in format_paired(comparison)
