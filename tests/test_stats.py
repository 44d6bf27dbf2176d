"""The shared statistics (`ace_eval.stats`) against hand-computed values."""

from __future__ import annotations

import pytest

from ace_eval.stats import binomial_exact_ci, bootstrap_ci, mcnemar_exact_p


@pytest.mark.parametrize(
    ("only_b", "only_a", "expected"),
    [
        (0, 0, 1.0),  # no discordant pair: nothing to test
        (3, 3, 1.0),  # an even split is the most likely one
        (6, 0, 2 / 64),  # P(X <= 0) for Binomial(6, 1/2), two-sided
        (0, 6, 2 / 64),  # symmetric in the arms
        (8, 2, 2 * (1 + 10 + 45) / 1024),  # 0.109375
        (10, 0, 2 / 1024),
    ],
)
def test_mcnemar_exact_p_matches_the_binomial_tail_by_hand(only_b: int, only_a: int, expected: float) -> None:
    assert mcnemar_exact_p(only_b, only_a) == pytest.approx(expected)


def test_mcnemar_rejects_a_negative_count() -> None:
    with pytest.raises(ValueError, match=">= 0"):
        mcnemar_exact_p(-1, 2)


def test_bootstrap_of_constant_values_is_that_constant() -> None:
    assert bootstrap_ci([0.5, 0.5, 0.5]) == (0.5, 0.5)


def test_bootstrap_interval_holds_the_mean_and_stays_within_the_values() -> None:
    values = [1.0] * 6 + [0.0] * 4
    low, high = bootstrap_ci(values, n_bootstrap=4000, seed=3)
    assert 0.0 <= low < 0.6 < high <= 1.0
    # the percentile interval of a 0/1 mean over 10 units: about +-0.3 around 0.6
    assert low == pytest.approx(0.3, abs=0.11) and high == pytest.approx(0.9, abs=0.11)


def test_bootstrap_is_paired_same_seed_same_units_resampled() -> None:
    a = [1.0, 0.0, 1.0, 1.0, 0.0]
    b = [1.0, 1.0, 1.0, 1.0, 0.0]
    differences = [y - x for x, y in zip(a, b)]
    low, high = bootstrap_ci(differences, seed=1)
    assert low >= 0.0  # b is never below a on any unit, so no resample can make the mean negative
    assert high <= 1.0


def test_bootstrap_of_nothing_is_an_error() -> None:
    with pytest.raises(ValueError, match="at least one"):
        bootstrap_ci([])


@pytest.mark.parametrize(
    ("successes", "trials", "expected"),
    [
        (0, 20, (0.0, 1 - 0.025 ** (1 / 20))),  # P(X = 0) = (1 - p)^20 = 0.025 at the upper end
        (20, 20, (0.025 ** (1 / 20), 1.0)),  # the mirror image
        (1, 2, (1 - 0.975**0.5, 0.975**0.5)),  # 1 - (1 - p)^2 = 0.025 and 1 - p^2 = 0.025
        (5, 10, (0.187086, 0.812914)),  # the textbook Clopper-Pearson interval of 5 of 10
    ],
)
def test_binomial_exact_ci_matches_the_tails_by_hand(
    successes: int, trials: int, expected: tuple[float, float]
) -> None:
    assert binomial_exact_ci(successes, trials) == pytest.approx(expected, abs=1e-6)


def test_binomial_exact_ci_stays_finite_for_large_counts_and_refuses_impossible_ones() -> None:
    low, high = binomial_exact_ci(300, 2000)
    assert 0.13 < low < 0.15 < high < 0.17
    with pytest.raises(ValueError, match="0 <= successes <= trials"):
        binomial_exact_ci(3, 2)
