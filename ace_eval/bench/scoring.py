"""Scores of the arms and their paired differences, from the outcome of every (item, trial) of each arm.

- An arm's **accuracy** is the mean over items of each item's share of right trials (with one trial:
  the share of items answered right); its 95% interval is a percentile bootstrap over items.
- A **paired difference** (arm minus baseline) is computed per item over the same items and trials;
  its interval is the bootstrap over items of the per-item differences (the same resampled items
  for both arms), and its p-value is McNemar's exact test over the (item, trial) pairs right in one
  arm only. `fixed` are the pairs right only in the arm, `broken` those right only in the baseline;
  `controls_broken` are the broken pairs on control items, which no rule touches: harm.
An answer that raised counts as wrong and is listed as a failure. Both from `ace_eval.stats`.
"""

from __future__ import annotations

import dataclasses
from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

from ace.errors import UsageError
from ace_eval.bench.items import BenchItem
from ace_eval.stats import bootstrap_ci, mcnemar_exact_p

__all__ = ["ArmScore", "ItemOutcome", "PairedDifference", "arm_score", "paired_difference", "pair_key"]


@dataclasses.dataclass(frozen=True)
class ItemOutcome:
    """One (item, trial) of one arm: the answer, whether it was right, and what was injected."""

    item_id: str
    """The item answered."""
    trial: int
    """0-based trial."""
    correct: bool
    """Whether the answer was right (False when the agent raised)."""
    answer: str | None
    """The agent's answer (None when it raised)."""
    injected_skill_ids: tuple[str, ...] = ()
    """Skills in the agent's prompt for this answer."""
    error: str | None = None
    """`<step>: <type>: <message>` when answering raised, else None."""

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready fields."""
        return dataclasses.asdict(self)


def pair_key(outcome: ItemOutcome) -> str:
    """How a pair is named in reports: the item id, with `~<trial>` after the first trial."""
    return outcome.item_id if outcome.trial == 0 else f"{outcome.item_id}~{outcome.trial}"


@dataclasses.dataclass(frozen=True)
class ArmScore:
    """One arm over the test items."""

    arm: str
    """The arm."""
    pairs: int
    """(item, trial) pairs answered."""
    correct: int
    """Pairs answered right."""
    accuracy: float
    """Mean over items of the share of right trials."""
    ci95: tuple[float, float]
    """Bootstrap interval of `accuracy`, resampling items."""
    by_kind: dict[str, float]
    """Accuracy per item kind (each rule, `control`, `other`)."""
    failures: tuple[str, ...]
    """`<pair>: <error>` for each answer that raised (scored wrong)."""


@dataclasses.dataclass(frozen=True)
class PairedDifference:
    """`arm` minus `baseline` over the same (item, trial) pairs."""

    arm: str
    """The arm compared."""
    baseline: str
    """The arm it is compared with."""
    difference: float
    """Accuracy of `arm` minus accuracy of `baseline`."""
    ci95: tuple[float, float]
    """Paired bootstrap interval of `difference` (items resampled alike for both arms)."""
    mcnemar_p: float
    """Exact two-sided McNemar p-value over the pairs right in one arm only."""
    fixed: tuple[str, ...]
    """Pairs right in `arm` only."""
    broken: tuple[str, ...]
    """Pairs right in `baseline` only."""
    control_pairs: int
    """Pairs on control items."""
    controls_broken: tuple[str, ...]
    """Control pairs right in `baseline` only: harm done where no rule applies."""

    @property
    def control_harm(self) -> float | None:
        """Share of control pairs broken (None without control items)."""
        return len(self.controls_broken) / self.control_pairs if self.control_pairs else None


def arm_score(
    arm: str,
    outcomes: Sequence[ItemOutcome],
    items: Mapping[str, BenchItem],
    *,
    seed: int = 0,
    n_bootstrap: int = 2000,
) -> ArmScore:
    """Score `outcomes` (every pair of one arm). Raises UsageError for no outcome or an unknown item."""
    rates = _item_rates(outcomes, items)
    kinds: dict[str, list[float]] = defaultdict(list)
    for item_id, rate in rates.items():
        kinds[items[item_id].kind].append(rate)
    values = list(rates.values())
    return ArmScore(
        arm=arm,
        pairs=len(outcomes),
        correct=sum(outcome.correct for outcome in outcomes),
        accuracy=sum(values) / len(values),
        ci95=bootstrap_ci(values, n_bootstrap=n_bootstrap, seed=seed),
        by_kind={kind: sum(rates_) / len(rates_) for kind, rates_ in sorted(kinds.items())},
        failures=tuple(f"{pair_key(o)}: {o.error}" for o in outcomes if o.error is not None),
    )


def paired_difference(
    arm: str,
    outcomes: Sequence[ItemOutcome],
    baseline: str,
    baseline_outcomes: Sequence[ItemOutcome],
    items: Mapping[str, BenchItem],
    *,
    seed: int = 0,
    n_bootstrap: int = 2000,
) -> PairedDifference:
    """Compare two arms pair by pair. Raises UsageError when they do not cover the same pairs."""
    ours, theirs = _by_pair(outcomes), _by_pair(baseline_outcomes)
    if set(ours) != set(theirs):
        only = sorted(set(ours) ^ set(theirs))[:5]
        raise UsageError(f"{arm} and {baseline} were not run on the same items and trials (e.g. {only})")
    mine, base = _item_rates(outcomes, items), _item_rates(baseline_outcomes, items)
    order = list(mine)
    fixed = [key for key in ours if ours[key].correct and not theirs[key].correct]
    broken = [key for key in ours if theirs[key].correct and not ours[key].correct]
    controls = {key for key in ours if items[ours[key].item_id].control}
    return PairedDifference(
        arm=arm,
        baseline=baseline,
        difference=sum(mine.values()) / len(mine) - sum(base.values()) / len(base),
        ci95=bootstrap_ci([mine[item] - base[item] for item in order], n_bootstrap=n_bootstrap, seed=seed),
        mcnemar_p=mcnemar_exact_p(len(fixed), len(broken)),
        fixed=tuple(pair_key(ours[key]) for key in fixed),
        broken=tuple(pair_key(ours[key]) for key in broken),
        control_pairs=len(controls),
        controls_broken=tuple(pair_key(ours[key]) for key in broken if key in controls),
    )


def _by_pair(outcomes: Sequence[ItemOutcome]) -> dict[tuple[str, int], ItemOutcome]:
    pairs = {(outcome.item_id, outcome.trial): outcome for outcome in outcomes}
    if len(pairs) != len(outcomes):
        raise UsageError("an arm answered some (item, trial) more than once")
    return pairs


def _item_rates(outcomes: Sequence[ItemOutcome], items: Mapping[str, BenchItem]) -> dict[str, float]:
    """Share of right trials per item, in first-seen item order."""
    if not outcomes:
        raise UsageError("an arm has no outcome to score")
    trials: dict[str, list[bool]] = {}
    for outcome in outcomes:
        if outcome.item_id not in items:
            raise UsageError(f"outcome of unknown item {outcome.item_id!r}")
        trials.setdefault(outcome.item_id, []).append(outcome.correct)
    return {item_id: sum(right) / len(right) for item_id, right in trials.items()}
