"""A paired comparison of the benchmark's two arms (baseline, with skills) over the same tasks and trials.

Both arms are scored on every (task, trial): a simulation that raised counts as reward 0 and is
listed, so the two rows are always computed over the same tasks. The difference of pass^1 gets a
paired bootstrap interval: each resample draws the same tasks for both arms, so differences in task
difficulty, shared by the arms, cancel out instead of widening the interval; an exact McNemar test
over the (task, trial) pairs says how likely a split of the discordant pairs this uneven is by chance
(both from `ace_eval.stats`, which `ace-eval bench` shares).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from functools import partial
from typing import Any

from ace.errors import UsageError
from ace_eval.stats import bootstrap_ci, mcnemar_exact_p
from ace_eval.tau2.metrics import (
    Tau2Metrics,
    format_summary,
    is_success,
    metrics_from_rewards,
    metrics_to_dict,
    task_order,
)

__all__ = ["PairedComparison", "TaskChange", "TrialOutcome", "format_paired", "paired_comparison", "paired_to_dict"]

_LISTED = 5
"""How many unmatched (task, trial) pairs per arm an error message names."""


@dataclass(frozen=True)
class TrialOutcome:
    """One (task, trial) of one arm: a graded simulation, or one that raised.

    Raises `ValueError` when `error` is set and `reward` is not 0.0.
    """

    task_id: str
    """The task simulated."""
    trial: int
    """Its trial index."""
    reward: float
    """The upstream reward; 0.0 when the simulation raised."""
    error: str | None = None
    """`ExceptionType: message` when the simulation raised, else None."""

    def __post_init__(self) -> None:
        if self.error is not None and self.reward != 0.0:
            raise UsageError(
                f"task {self.task_id} trial {self.trial} raised ({self.error}) but has reward {self.reward}; "
                "a trial that raised has reward 0.0"
            )


@dataclass(frozen=True)
class TaskChange:
    """A task whose number of successes differs between the arms."""

    task_id: str
    """The task."""
    trials: int
    """Trials of the task in each arm."""
    baseline_successes: int
    """Successful trials without skills."""
    with_skills_successes: int
    """Successful trials with skills."""


@dataclass(frozen=True)
class PairedComparison:
    """The two arms scored over the same (task, trial) pairs, and their paired difference."""

    baseline: Tau2Metrics
    """Metrics without skills; trials that raised count as reward 0."""
    with_skills: Tau2Metrics
    """Metrics with skills; trials that raised count as reward 0."""
    difference: float
    """pass^1 with skills minus pass^1 of the baseline."""
    difference_ci95: tuple[float, float]
    """Paired bootstrap interval of `difference`: tasks resampled with the same indices for both arms."""
    mcnemar_p: float
    """Exact two-sided McNemar p-value over the (task, trial) pairs that succeeded in one arm only."""
    newly_passing: tuple[TaskChange, ...]
    """Tasks with more successes with skills than without, in task-id order."""
    newly_failing: tuple[TaskChange, ...]
    """Tasks with fewer successes with skills than without, in task-id order."""
    baseline_failures: tuple[TrialOutcome, ...]
    """Baseline trials that raised (scored 0), in (task, trial) order."""
    with_skills_failures: tuple[TrialOutcome, ...]
    """With-skills trials that raised (scored 0), in (task, trial) order."""


def paired_comparison(
    baseline: Sequence[TrialOutcome],
    with_skills: Sequence[TrialOutcome],
    *,
    n_bootstrap: int = 2000,
    seed: int = 0,
    confidence: float = 0.95,
) -> PairedComparison:
    """Score both arms over the same (task, trial) pairs and compare them task by task.

    Raises `ValueError` when an arm is empty, has a (task, trial) twice, or the arms do not cover
    exactly the same (task, trial) pairs (the message names the first pairs present in one arm only).
    """
    _check_pairs(baseline, with_skills)
    score = partial(metrics_from_rewards, n_bootstrap=n_bootstrap, seed=seed, confidence=confidence)
    base_metrics, skills_metrics = score(_rewards(baseline)), score(_rewards(with_skills))
    rows = list(zip(base_metrics.per_task, skills_metrics.per_task, strict=True))
    succeeded = {(o.task_id, o.trial): is_success(o.reward) for o in baseline}
    only_with_skills = sum(is_success(o.reward) and not succeeded[(o.task_id, o.trial)] for o in with_skills)
    only_baseline = sum(not is_success(o.reward) and succeeded[(o.task_id, o.trial)] for o in with_skills)
    changes = [
        TaskChange(
            task_id=base.task_id,
            trials=base.trials,
            baseline_successes=base.successes,
            with_skills_successes=skills.successes,
        )
        for base, skills in rows
        if base.successes != skills.successes
    ]
    return PairedComparison(
        baseline=base_metrics,
        with_skills=skills_metrics,
        difference=skills_metrics.pass_hat_k[1] - base_metrics.pass_hat_k[1],
        difference_ci95=bootstrap_ci(
            [skills.pass_hat[1] - base.pass_hat[1] for base, skills in rows],
            n_bootstrap=n_bootstrap,
            seed=seed,
            confidence=confidence,
        ),
        mcnemar_p=mcnemar_exact_p(only_with_skills, only_baseline),
        newly_passing=tuple(c for c in changes if c.with_skills_successes > c.baseline_successes),
        newly_failing=tuple(c for c in changes if c.with_skills_successes < c.baseline_successes),
        baseline_failures=_failures(baseline),
        with_skills_failures=_failures(with_skills),
    )


def format_paired(comparison: PairedComparison) -> str:
    """Plain text for a terminal: each arm's summary, the difference with its interval, the tasks
    that changed (`id (baseline successes/trials -> with skills successes/trials)`), and failed trials."""
    low, high = comparison.difference_ci95
    return "\n".join(
        [
            "baseline (no skills): " + format_summary(comparison.baseline).replace("\n", "\n  "),
            "with skills: " + format_summary(comparison.with_skills).replace("\n", "\n  "),
            f"difference in pass^1 {comparison.difference:+.3f}  paired 95% CI [{low:+.3f}, {high:+.3f}]  "
            f"exact McNemar p={comparison.mcnemar_p:.3g}",
            f"newly passing ({len(comparison.newly_passing)}): {_changes(comparison.newly_passing)}",
            f"newly failing ({len(comparison.newly_failing)}): {_changes(comparison.newly_failing)}",
            f"failed trials (scored 0): baseline {len(comparison.baseline_failures)}, "
            f"with skills {len(comparison.with_skills_failures)}",
        ]
    )


def paired_to_dict(comparison: PairedComparison) -> dict[str, Any]:
    """`comparison` as JSON-ready data (every field; k keys as strings, intervals as 2-lists)."""
    return {
        "baseline": metrics_to_dict(comparison.baseline),
        "with_skills": metrics_to_dict(comparison.with_skills),
        "difference": comparison.difference,
        "difference_ci95": list(comparison.difference_ci95),
        "mcnemar_p": comparison.mcnemar_p,
        "newly_passing": [asdict(change) for change in comparison.newly_passing],
        "newly_failing": [asdict(change) for change in comparison.newly_failing],
        "baseline_failures": [asdict(outcome) for outcome in comparison.baseline_failures],
        "with_skills_failures": [asdict(outcome) for outcome in comparison.with_skills_failures],
    }


def _check_pairs(baseline: Sequence[TrialOutcome], with_skills: Sequence[TrialOutcome]) -> None:
    keys: dict[str, set[tuple[str, int]]] = {}
    for arm, outcomes in (("baseline", baseline), ("with_skills", with_skills)):
        if not outcomes:
            raise UsageError(f"the {arm} arm has no trial outcomes; both arms must run the same tasks and trials")
        counts = Counter((outcome.task_id, outcome.trial) for outcome in outcomes)
        repeated = _sorted_pairs(pair for pair, count in counts.items() if count > 1)
        if repeated:
            raise UsageError(f"the {arm} arm has {_names(repeated)} more than once; give each (task, trial) once")
        keys[arm] = set(counts)
    only_baseline = _sorted_pairs(keys["baseline"] - keys["with_skills"])
    only_with_skills = _sorted_pairs(keys["with_skills"] - keys["baseline"])
    if only_baseline or only_with_skills:
        parts = [
            f"only in {arm}: {_names(pairs)}"
            for arm, pairs in (("baseline", only_baseline), ("with_skills", only_with_skills))
            if pairs
        ]
        raise UsageError(f"{'; '.join(parts)}; both arms must run the same tasks and trials")


def _rewards(outcomes: Sequence[TrialOutcome]) -> dict[str, list[float]]:
    rewards: dict[str, list[float]] = defaultdict(list)
    for outcome in sorted(outcomes, key=_outcome_order):
        rewards[outcome.task_id].append(outcome.reward)
    return rewards


def _failures(outcomes: Sequence[TrialOutcome]) -> tuple[TrialOutcome, ...]:
    return tuple(sorted((outcome for outcome in outcomes if outcome.error is not None), key=_outcome_order))


def _outcome_order(outcome: TrialOutcome) -> tuple[tuple[int, str], int]:
    return task_order(outcome.task_id), outcome.trial


def _sorted_pairs(pairs: Iterable[tuple[str, int]]) -> list[tuple[str, int]]:
    return sorted(pairs, key=lambda pair: (task_order(pair[0]), pair[1]))


def _names(pairs: list[tuple[str, int]]) -> str:
    named = ", ".join(f"task {task_id} trial {trial}" for task_id, trial in pairs[:_LISTED])
    return named + (f" and {len(pairs) - _LISTED} more" if len(pairs) > _LISTED else "")


def _changes(changes: tuple[TaskChange, ...]) -> str:
    return (
        ", ".join(
            f"{c.task_id} ({c.baseline_successes}/{c.trials} -> {c.with_skills_successes}/{c.trials})" for c in changes
        )
        or "none"
    )
