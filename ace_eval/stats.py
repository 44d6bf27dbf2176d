"""The statistics every evaluation here shares: a seeded percentile bootstrap, the exact McNemar test
and the exact (Clopper-Pearson) interval of a proportion.

Both `ace-eval e2e` (tau2 pass^1, paired per task) and `ace-eval bench` (accuracy, paired per item)
compare two arms run on the same units. The paired bootstrap resamples units with the same indices
for both arms (so what the arms share, such as a unit's difficulty, cancels out); McNemar's exact
test asks whether the discordant pairs (right in one arm only) split more unevenly than a fair coin
would.
"""

from __future__ import annotations

from collections.abc import Sequence
from math import comb

import numpy as np

from ace.errors import UsageError

__all__ = ["binomial_exact_ci", "bootstrap_ci", "mcnemar_exact_p"]


def bootstrap_ci(
    per_unit: Sequence[float], *, n_bootstrap: int = 2000, seed: int = 0, confidence: float = 0.95
) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean of `per_unit` values, resampling units.

    The resampled indices depend only on `seed`, `n_bootstrap` and the number of units, so two
    calls over the same units in the same order resample the same units: the interval of a paired
    difference is this function over the per-unit differences. Raises UsageError for no unit.
    """
    if len(per_unit) == 0:
        raise UsageError("bootstrap_ci needs at least one value")
    resamples = np.random.default_rng(seed).integers(0, len(per_unit), size=(n_bootstrap, len(per_unit)))
    means = np.asarray(per_unit, dtype=float)[resamples].mean(axis=1)
    tail = (1.0 - confidence) / 2 * 100
    return float(np.percentile(means, tail)), float(np.percentile(means, 100 - tail))


def mcnemar_exact_p(only_b: int, only_a: int) -> float:
    """Two-sided exact McNemar p-value for `only_b` pairs right in arm B alone and `only_a` pairs
    right in arm A alone: the binomial probability, under p = 1/2, of a split at least as uneven as
    the one seen, `min(1, 2 * P(X <= min(only_a, only_b)))` with X ~ Binomial(only_a + only_b, 1/2).
    With no discordant pair the test has nothing to say and the p-value is 1.0. Raises UsageError
    for a negative count."""
    if only_b < 0 or only_a < 0:
        raise UsageError(f"discordant pair counts must be >= 0, got {only_b} and {only_a}")
    n = only_b + only_a
    if n == 0:
        return 1.0
    tail = sum(comb(n, k) for k in range(min(only_a, only_b) + 1))
    return min(1.0, 2 * tail / 2**n)


def binomial_exact_ci(successes: int, trials: int, *, confidence: float = 0.95) -> tuple[float, float]:
    """Exact (Clopper-Pearson) interval of a proportion seen as `successes` of `trials` (SciPy's
    `binomtest(...).proportion_ci(method="exact")`). It never undercovers, so a small count gets an
    honest width (0 of 20: [0, 0.168]). Raises UsageError unless 0 <= successes <= trials and
    trials >= 1."""
    if trials < 1 or not 0 <= successes <= trials:
        raise UsageError(f"need 0 <= successes <= trials and trials >= 1, got {successes} of {trials}")
    from scipy.stats import binomtest  # here, not at the top: SciPy takes a second to import

    interval = binomtest(successes, trials).proportion_ci(confidence_level=confidence, method="exact")
    return float(interval.low), float(interval.high)
