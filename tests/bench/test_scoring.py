"""Arm scores and paired differences against a hand-computed example."""

from __future__ import annotations

import pytest

from ace_eval.bench.items import BenchItem
from ace_eval.bench.scoring import ItemOutcome, arm_score, paired_difference

ITEMS = {
    "a": BenchItem("a", "test", "qa", "A", rule="r"),
    "b": BenchItem("b", "test", "qb", "B", rule="r"),
    "c": BenchItem("c", "test", "qc", "C", control=True),
    "d": BenchItem("d", "test", "qd", "D", control=True),
}


def _arm(rights: dict[str, list[int]]) -> list[ItemOutcome]:
    return [
        ItemOutcome(item, trial, bool(right), "x")
        for item, values in rights.items()
        for trial, right in enumerate(values)
    ]


BASELINE = _arm({"a": [0, 0], "b": [1, 0], "c": [1, 1], "d": [1, 1]})  # per item 0, 1/2, 1, 1
ARM = _arm({"a": [1, 1], "b": [1, 1], "c": [1, 0], "d": [1, 1]})  # per item 1, 1, 1/2, 1


def test_accuracy_is_the_mean_of_per_item_rates_with_kinds() -> None:
    score = arm_score("none", BASELINE, ITEMS)
    assert score.accuracy == pytest.approx(0.625)
    assert (score.pairs, score.correct) == (8, 5)
    assert score.by_kind == {"control": 1.0, "r": 0.25}
    low, high = score.ci95
    assert 0.0 <= low <= 0.625 <= high <= 1.0


def test_paired_difference_counts_fixed_broken_and_control_harm_by_hand() -> None:
    diff = paired_difference("learned", ARM, "none", BASELINE, ITEMS)

    assert diff.difference == pytest.approx(0.875 - 0.625)
    assert diff.fixed == ("a", "a~1", "b~1")
    assert diff.broken == ("c~1",)
    # McNemar over 4 discordant pairs split 3:1: 2 * (C(4,0) + C(4,1)) / 2**4
    assert diff.mcnemar_p == pytest.approx(0.625)
    assert diff.control_pairs == 4 and diff.controls_broken == ("c~1",) and diff.control_harm == 0.25
    low, high = diff.ci95  # bootstrap of per-item differences [1, 1/2, -1/2, 0]
    assert -0.5 <= low <= 0.25 <= high <= 1.0


def test_paired_difference_refuses_arms_on_different_pairs() -> None:
    with pytest.raises(ValueError, match="not run on the same items and trials"):
        paired_difference("learned", ARM[:-1], "none", BASELINE, ITEMS)


def test_a_failed_answer_counts_as_wrong_and_is_listed() -> None:
    outcomes = [ItemOutcome("a", 0, False, None, error="AgentStep: TimeoutError: slow"), *_arm({"b": [1]})]
    score = arm_score("none", outcomes, ITEMS)
    assert score.accuracy == 0.5 and score.failures == ("a: AgentStep: TimeoutError: slow",)
